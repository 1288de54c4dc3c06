"""Rule script: predicted vs measured for held-out devices (the selected models)."""
from benchcast import charts, smk, tables


def main(sm):
    charts.save(charts.heldout(tables.read_table(sm.input[0]), sm.params.labels), sm.output.svg, sm.output.html)


smk.run(main, snakemake)  # noqa: F821
