"""Rule script: heatmap of the best R^2 by workload x data size."""
from benchcast import charts, paper_charts, smk, tables


def main(sm):
    charts.save(paper_charts.heatmap_best_r2(tables.read_screen(sm.input.best)), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
