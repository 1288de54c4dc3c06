"""Rule script: PerfKitBenchmarker sample files (fio and YCSB samples) -> tidy records."""
from benchcast.sources.parse import pkb
from benchcast import records
from benchcast.core import smk


def main(sm):
    recs = pkb.pkb(sm.params.files, study=sm.wildcards.study, source="import:pkb", ycsb=sm.params.ycsb)
    records.write(recs, sm.output[0])


smk.run(main, snakemake)  # noqa: F821
