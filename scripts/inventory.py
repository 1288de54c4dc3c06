"""Rule script: the machine, software and devices behind a study's records (their provenance)."""
from benchcast import records
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    tables.inventory(records.read_many(sm.input)).to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
