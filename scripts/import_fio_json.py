"""Rule script: fio JSON outputs made elsewhere -> tidy records."""
from benchcast.sources.parse import importers
from benchcast import records
from benchcast.core import smk


def main(sm):
    recs = importers.fio_json(sm.params.files, study=sm.wildcards.study, source="import:fio_json")
    records.write(recs, sm.output[0])


smk.run(main, snakemake)  # noqa: F821
