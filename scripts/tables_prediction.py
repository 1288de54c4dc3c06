"""Rule script: the prediction tables (paper Tables 12-14)."""
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    best = tables.read_screen(sm.input.best)
    focus = tables.default_focus(best, sm.params.report["focus"])
    tables.table12(tables.read_predictions(sm.input.predictions), focus).to_csv(sm.output.table12, index=False)
    tables.table13(tables.read_table(sm.input.points), focus).to_csv(sm.output.table13, index=False)
    tables.table14(tables.read_table(sm.input.fits), focus).to_csv(sm.output.table14, index=False)


smk.run(main, snakemake)  # noqa: F821
