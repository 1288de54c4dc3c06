"""Rule script: out-of-core runs relative to the in-memory baseline, as a table and a chart."""
from benchcast.report import app_charts, charts, tables
from benchcast.core import smk


def main(sm):
    table = tables.ooc_relative(tables.read_aggregated(sm.input[0]), sm.params.memory)
    table.to_csv(sm.output.table, index=False)
    charts.save(app_charts.ooc_relative(table, sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
