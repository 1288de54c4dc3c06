"""Rule script: every spec card answered from the figures it has (:func:`benchcast.validation.run_cards`):
what each card gives and what the datasheet rules fix, the card-conditional choice validated leave one
device out, the models that predict it, and the figure worth asking for."""
import logging

from benchcast.core import smk
from benchcast.report import tables
from benchcast import validation


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    screened = tables.read_screen(sm.input.screen)
    study = validation.Study(features=sm.params.features, series=sm.params.series, pairing=sm.params.pairing,
                             settings=validation.Settings.of(sm.params.settings))
    out = validation.run_cards(study, sm.params.targets or {}, agg, screened)
    for name, key in (("figures", "card_figures"), ("verdicts", "card_verdicts"), ("folds", "card_folds"),
                      ("selection", "card_selection"), ("value", "figure_value")):
        out[key].to_csv(getattr(sm.output, name), index=False)
    logging.info("%d cards, %d answers", len(sm.params.targets or {}), len(out["card_verdicts"]))


smk.run(main, snakemake)  # noqa: F821
