"""Rule script: the report's table of the data-size validation (size hold-out and two-stage chain)."""
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    tables.validity_data_size(tables.read_table(sm.input[0])).to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
