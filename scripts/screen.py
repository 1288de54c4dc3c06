"""Rule script: aggregated records -> the candidate features, every simple fit, and the best feature
per series."""
import logging

from benchcast import features
from benchcast.screening import screen
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    agg = tables.read_aggregated(sm.input[0])
    features.feature_table(agg, sm.params.features).to_csv(sm.output.features, index=False)
    res = screen.screen(agg, sm.params.features, sm.params.series, sm.params.pairing, sm.params.min_devices)
    res.to_csv(sm.output.screen, index=False)
    best = screen.best(res)
    best.to_csv(sm.output.best, index=False)
    logging.info("%d series x features fitted, %d series, %d without a usable fit",
                 len(res), len(best), int((best["feature"] == "").sum()))


smk.run(main, snakemake)  # noqa: F821
