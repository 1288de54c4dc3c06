"""Rule script: results over data size per device (measured and hypothetical) -> unseen sizes."""
from benchcast import features
from benchcast.prediction import predict
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    measured = features.series_table(agg, sm.params.features, sm.params.series)
    predicted = tables.read_predictions(sm.input.predictions)
    ex = sm.params.extrapolate
    fits, points = predict.extrapolate(measured, predicted, ex["data_sizes"], ex["x"])
    fits.to_csv(sm.output.fits, index=False)
    points.to_csv(sm.output.points, index=False)


smk.run(main, snakemake)  # noqa: F821
