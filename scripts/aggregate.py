"""Rule script: all record tables of a study -> trimmed means (of the raw values, or of those stated at
the reference speed: aggregate.value), the corrected ones beside them."""
from benchcast import aggregate, records
from benchcast.core import smk


def main(sm):
    recs = records.read_many(sm.input)
    agg = aggregate.aggregate(recs, trim=sm.params.trim, value=sm.params.value)
    agg.to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
