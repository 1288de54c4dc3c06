"""Rule script: the measured devices' figures as a table and a chart, with the repeat spread."""
from benchcast.report import charts, device_charts, tables
from benchcast.core import smk


def main(sm):
    metrics = list(dict.fromkeys(list(device_charts.DEVICE_METRICS) + list(sm.params.metrics or [])))
    table = device_charts.device_figures_table(tables.read_aggregated(sm.input[0]), metrics=metrics)
    tables.write_report_table(table, sm.output.table)
    charts.save(device_charts.device_figures(table, sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
