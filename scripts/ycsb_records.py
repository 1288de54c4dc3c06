"""Rule script: all YCSB runs of a source -> one record table."""
from benchcast import records, smk


def main(sm):
    records.write(records.read_many(sm.input.runs), sm.output[0])


smk.run(main, snakemake)  # noqa: F821
