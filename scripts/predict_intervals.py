"""Rule script: predictions with intervals for the hypothetical devices from the selected models and the
nested choice."""
from benchcast.prediction import predict
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    chosen = predict.Selections(tables.read_table(sm.input.simple), tables.read_table(sm.input.multiple),
                                tables.read_table(sm.input.nested), tables.read_table(sm.input.draws))
    preds, skipped = predict.with_intervals(
        agg, sm.params.features, sm.params.series, chosen, sm.params.targets, sm.params.settings,
        sm.params.data_sizes,
    )
    preds.to_csv(sm.output.predictions, index=False)
    skipped.to_csv(sm.output.skipped, index=False)


smk.run(main, snakemake)  # noqa: F821
