"""Rule script: the record tables of all runs of a source (YCSB, ooc) -> one record table, without
the runs interference spoiled (benchcast.quality), and the source's quality table."""
from benchcast import quality, records, smk


def main(sm):
    tab = quality.table(sm.input.runs, sm.params.quality["thresholds"], sm.params.quality["repeats"])
    used = quality.used_outputs(tab)
    records.write(records.read_many([p for p in sm.input.runs if str(p) in used]), sm.output[0])
    tab.to_csv(sm.output[1], index=False)


smk.run(main, snakemake)  # noqa: F821
