"""Rule script: two aggregated tables side by side, per cell: the ratio table, its chart, and how far
the two lie apart per benchmark, operation and device (the spread table)."""
import logging

from benchcast.report import charts, spread_charts, tables
from benchcast.core import smk


def main(sm):
    a, b = tables.read_aggregated(sm.input.a), tables.read_aggregated(sm.input.b)
    cells = tables.compare_cells(a, b)
    logging.getLogger("benchcast").info("compare %s", tables.compare_summary(a, b, cells))
    tables.write_report_table(cells, sm.output.table)
    tables.write_report_table(tables.compare_spread(cells), sm.output.spread)
    chart = spread_charts.compare(cells, tuple(sm.params.names), max_cells=sm.params.max_cells)
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
