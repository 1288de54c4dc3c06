"""Rule script: benchcast record CSVs of another tree or machine -> records of this study."""
from benchcast.sources.parse import importers
from benchcast import records
from benchcast.core import smk


def main(sm):
    recs = importers.record_files(sm.params.files, study=sm.wildcards.study, source="import:records",
                                  devices=sm.params.devices, rename=sm.params.rename)
    records.write(recs, sm.output[0])


smk.run(main, snakemake)  # noqa: F821
