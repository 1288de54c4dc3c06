"""Rule script: the machine, software and devices behind a study's records (their provenance)."""
from benchcast import records, smk, tables


def main(sm):
    tables.inventory(records.read_many(sm.input)).to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
