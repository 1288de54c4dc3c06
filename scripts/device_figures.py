"""Rule script: the measured devices' figures as a table and a chart, with the repeat spread."""
from benchcast import charts, device_charts, smk, tables


def main(sm):
    metrics = list(dict.fromkeys(list(device_charts.DEVICE_METRICS) + list(sm.params.metrics or [])))
    table = device_charts.device_figures_table(tables.read_aggregated(sm.input[0]), metrics=metrics)
    tables.write_report_table(table, sm.output.table)
    charts.save(device_charts.device_figures(table, sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
