"""Rule script: devices vs the best feature with the fitted line (paper Figure 3)."""
from benchcast.report import charts, paper_charts, tables
from benchcast.core import smk


def main(sm):
    agg = tables.read_aggregated(sm.input.aggregated)
    screened = tables.read_screen(sm.input.screen)
    pred = tables.read_predictions(sm.input.predictions)
    focus = tables.default_focus(screened[screened["rank"] == 1], sm.params.report["focus"])
    chart = paper_charts.fig3_scatter(
        agg, screened, pred, tables.read_table(sm.input.features), focus, sm.params.report["focus_data_size"], sm.params.labels
    )
    charts.save(chart, sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
