"""Rule script: held-out-device validation of simple and multiple models, model selection, and the
held-out predictions of the chosen models."""
import logging

from benchcast import heldout, smk, tables


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    screened = tables.read_screen(sm.input.screen)
    out = heldout.run(agg, screened, sm.params.features, sm.params.series, sm.params.pairing, sm.params.settings)
    for name, df in out.items():
        df.to_csv(getattr(sm.output, name), index=False)
    logging.info("simple: %d folds; multiple: %d folds, %d models refused",
                 len(out["simple_folds"]), len(out["multiple_folds"]), len(out["multiple_refusals"]))


smk.run(main, snakemake)  # noqa: F821
