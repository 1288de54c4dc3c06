"""Rule script: the report's validity tables (held-out error, coverage, refusals, target intervals)."""
from benchcast import smk, tables, validity


def main(sm):
    level = sm.params.settings["level"]
    simple = tables.read_table(sm.input.simple_selection)
    multiple = tables.read_table(sm.input.multiple_selection)
    chosen = validity.selected_folds(
        tables.read_table(sm.input.simple_folds), simple, tables.read_table(sm.input.multiple_folds), multiple
    )
    chosen.to_csv(sm.output.chosen, index=False)
    simple.to_csv(sm.output.simple, index=False)
    multiple.to_csv(sm.output.multiple, index=False)
    validity.coverage(chosen, level).to_csv(sm.output.coverage, index=False)
    validity.refusal_summary(tables.read_table(sm.input.refusals)).to_csv(sm.output.refusals, index=False)
    validity.interval_table(tables.read_table(sm.input.predictions)).to_csv(sm.output.intervals, index=False)


smk.run(main, snakemake)  # noqa: F821
