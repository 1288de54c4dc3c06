"""Rule script: the report's validity tables (verdicts per series, held-out error per tier, coverage, refusals, target intervals)."""
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    tables.validity_verdicts(tables.read_table(sm.input.verdicts), tables.read_aggregated(sm.input.aggregated)).to_csv(sm.output.verdicts, index=False)
    tables.validity_tiers(tables.read_table(sm.input.tiers), sm.params.labels).to_csv(sm.output.tiers, index=False)
    tables.read_table(sm.input.simple_selection).to_csv(sm.output.simple, index=False)
    # the selected model's feature keys are for the predictions; the report shows its label
    multiple = tables.read_table(sm.input.multiple_selection).drop(columns="selected_figures", errors="ignore")
    multiple.to_csv(sm.output.multiple, index=False)
    chosen = tables.read_table(sm.input.chosen)
    tables.validity_coverage(chosen, sm.params.level).to_csv(sm.output.coverage, index=False)
    tables.validity_refusals(tables.read_table(sm.input.refusals)).to_csv(sm.output.refusals, index=False)
    tables.validity_intervals(tables.read_table(sm.input.predictions)).to_csv(sm.output.intervals, index=False)


smk.run(main, snakemake)  # noqa: F821
