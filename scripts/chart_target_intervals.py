"""Rule script: predictions for the hypothetical devices with their prediction intervals."""
from benchcast.report import charts, prediction_charts, tables
from benchcast.core import smk


def main(sm):
    focus = tables.default_focus(tables.read_screen(sm.input.best), sm.params.report["focus"])
    chart = prediction_charts.target_intervals(tables.read_table(sm.input.predictions), focus)
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
