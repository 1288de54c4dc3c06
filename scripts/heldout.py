"""Rule script: held-out-device validation of simple and multiple models, model selection, and the
held-out predictions of the chosen models (:func:`benchcast.validation.run_study`)."""
import logging

from benchcast.core import smk
from benchcast.report import tables
from benchcast import validation


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    screened = tables.read_screen(sm.input.screen)
    study = validation.Study(features=sm.params.features, series=sm.params.series, pairing=sm.params.pairing,
                             settings=validation.Settings.of(sm.params.settings))
    out = validation.run_study(study, agg=agg, screened=screened)
    for name, df in out.items():
        df.to_csv(getattr(sm.output, name), index=False)
    logging.info("simple: %d folds; multiple: %d folds, %d models refused",
                 len(out["simple_folds"]), len(out["multiple_folds"]), len(out["multiple_refusals"]))


smk.run(main, snakemake)  # noqa: F821
