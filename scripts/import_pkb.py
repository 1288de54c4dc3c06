"""Rule script: PerfKitBenchmarker sample files (fio samples) -> tidy records."""
from benchcast import importers, records, smk


def main(sm):
    records.write(importers.pkb(sm.params.files, study=sm.wildcards.study, source="import:pkb"), sm.output[0])


smk.run(main, snakemake)  # noqa: F821
