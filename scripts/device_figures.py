"""Rule script: the measured devices' figures as a table and a chart, with the repeat spread."""
from benchcast import charts, smk, tables


def main(sm):
    table = charts.device_figures_table(tables.read_aggregated(sm.input[0]), metrics=sm.params.metrics)
    table.to_csv(sm.output.table, index=False)
    charts.save(charts.device_figures(table, sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
