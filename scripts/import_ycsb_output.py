"""Rule script: YCSB outputs made elsewhere -> tidy records."""
from benchcast.sources.parse import importers
from benchcast import records
from benchcast.core import smk


def main(sm):
    recs = importers.ycsb_output(sm.params.runs, study=sm.wildcards.study, source="import:ycsb_output",
                                 devices=sm.params.devices,
                                 key=f"config: studies.{sm.wildcards.study}.sources.{sm.wildcards.source}")
    records.write(recs, sm.output[0])


smk.run(main, snakemake)  # noqa: F821
