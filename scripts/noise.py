"""Rule script: the cells whose repeats spread above the configured CV, as a table and a chart, and
how fast the machine was while each device was measured."""
from benchcast.report import charts, spread_charts, tables
from benchcast.core import smk


def main(sm):
    agg = tables.read_aggregated(sm.input[0])
    table = tables.noisy_cells(agg, sm.params.threshold)
    tables.write_report_table(table, sm.output.table)
    tables.write_report_table(tables.machine_speed(agg), sm.output.speed)
    chart = spread_charts.noise(table, sm.params.threshold, int((agg["n"] >= 2).sum()), sm.params.labels)
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
