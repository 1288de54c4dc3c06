"""Rule script: results over data size per device, hypothetical devices emphasised (Figure 4)."""
from benchcast.report import charts, paper_charts, tables
from benchcast.core import smk


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    focus = tables.default_focus(tables.read_screen(sm.input.best), sm.params.report["focus"])
    chart = paper_charts.fig4_data_size(
        agg,
        tables.read_predictions(sm.input.predictions),
        tables.read_table(sm.input.points),
        focus,
        sm.params.labels,
    )
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
