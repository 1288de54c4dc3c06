"""Rule script: the screening tables (paper Tables 8-11)."""
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    screened = tables.read_screen(sm.input.screen)
    best = tables.read_screen(sm.input.best)
    focus = tables.default_focus(best, sm.params.report["focus"])
    tables.table08(screened, focus, sm.params.report["focus_data_size"]).to_csv(sm.output.table08, index=False)
    tables.table09_10(best).to_csv(sm.output.table09_10, index=False)
    tables.table11(best).to_csv(sm.output.table11, index=False)


smk.run(main, snakemake)  # noqa: F821
