"""Rule script: each application's mean latency over data size per device, the memory line drawn."""
from benchcast.report import app_charts, charts, tables
from benchcast.core import smk


def main(sm):
    table = tables.latency_over_size(tables.read_aggregated(sm.input.aggregated), sm.params.memory,
                                     tables.read_table(sm.input.folds))
    charts.save(app_charts.latency_over_size(table, sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
