"""Rule script: the paper's published tables -> tidy records."""
from benchcast.sources.parse import importers
from benchcast import records
from benchcast.core import smk


def main(sm):
    recs = importers.soga2018(
        sm.input.fio,
        sm.input.app,
        study=sm.wildcards.study,
        source=f"import:{sm.wildcards.source}",
        devices=sm.params.devices,
        benchmark=sm.params.benchmark,
    )
    records.write(recs, sm.output[0])


smk.run(main, snakemake)  # noqa: F821
