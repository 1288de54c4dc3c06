"""Rule script: the record tables of all runs of a source (YCSB, ooc) -> one record table."""
from benchcast import records, smk


def main(sm):
    records.write(records.read_many(sm.input.runs), sm.output[0])


smk.run(main, snakemake)  # noqa: F821
