"""Rule script: the report's validity tables (held-out error, coverage, refusals, target intervals)."""
from benchcast import smk, tables


def main(sm):
    tables.read_table(sm.input.simple_selection).to_csv(sm.output.simple, index=False)
    tables.read_table(sm.input.multiple_selection).to_csv(sm.output.multiple, index=False)
    chosen = tables.read_table(sm.input.chosen)
    tables.validity_coverage(chosen, sm.params.level).to_csv(sm.output.coverage, index=False)
    tables.validity_refusals(tables.read_table(sm.input.refusals)).to_csv(sm.output.refusals, index=False)
    tables.validity_intervals(tables.read_table(sm.input.predictions)).to_csv(sm.output.intervals, index=False)


smk.run(main, snakemake)  # noqa: F821
