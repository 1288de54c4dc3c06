"""Rule script: held-out validation over data size (the size hold-out and the two-stage chain)."""
import logging

from benchcast.screening import sizes
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    screened = tables.read_screen(sm.input.screen)
    folds, summary, forms = sizes.validate(agg, screened, sm.params.features, sm.params.series, sm.params.memory,
                                           sm.params.settings["size_forms"])
    folds.to_csv(sm.output.folds, index=False)
    summary.to_csv(sm.output.summary, index=False)
    forms.to_csv(sm.output.forms, index=False)
    logging.info("data-size validation: %d families, %d held-out predictions", len(summary), len(folds))


smk.run(main, snakemake)  # noqa: F821
