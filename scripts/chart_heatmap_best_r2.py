"""Rule script: heatmap of the best R^2 by workload x data size."""
from benchcast.report import charts, paper_charts, tables
from benchcast.core import smk


def main(sm):
    charts.save(paper_charts.heatmap_best_r2(tables.read_screen(sm.input.best)), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
