"""Rule script: predicted vs measured for held-out devices (the selected models)."""
from benchcast.report import charts, prediction_charts, tables
from benchcast.core import smk


def main(sm):
    chart = prediction_charts.heldout(tables.read_table(sm.input[0]), sm.params.labels)
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
