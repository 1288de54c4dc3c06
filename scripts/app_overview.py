"""Rule script: the application results per engine (throughput, mean and tail latency over devices x
workloads x data sizes, with the repeat spread), as a table and a chart."""
from benchcast.report import app_charts, charts, tables
from benchcast.core import smk


def main(sm):
    table = tables.app_overview(tables.read_aggregated(sm.input[0]))
    labels = sm.params.labels
    label = table["device"].map(labels).fillna(table["device"])
    table.insert(table.columns.get_loc("device") + 1, "device_label", label)
    tables.write_report_table(table, sm.output.table)
    charts.save(app_charts.app_overview(table, labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
