"""The final targets and the report's outputs (rules/outputs.smk): what rule all asks for, what a
report rule declares with its caption, and the report rules' params over a study's config."""

import os
from dataclasses import dataclass

from benchcast import BenchcastError
from benchcast import config as bc_config
from benchcast.config import settings as bc_settings

#: The sources whose runs are measured here, each with a quality table beside its records.
MEASURED = ("fio", "ycsb", "ooc")


def reporter(report):
    """``reported(path, subcategory, caption=None)`` over Snakemake's ``report``: a study's output
    shown in the report, results/{study}/<path>, under the study and ``subcategory``, with the caption
    report/<caption>.rst (default: the file's own name)."""

    def reported(path, subcategory, caption=None):
        caption = caption or os.path.splitext(os.path.basename(path))[0]
        return report(
            f"results/{{study}}/{path}", caption=f"../report/{caption}.rst", category="{study}", subcategory=subcategory
        )

    return reported


@dataclass(frozen=True, eq=False)  # hashed by identity: Snakemake may keep its methods in sets
class ReportParams:
    """The report rules' input and param functions over the config's studies: each method is one
    rule's ``get_*`` function, of a job's wildcards."""

    studies: dict  # config["studies"]

    def focus(self, wildcards) -> dict:
        """The report's focus of the study (param ``report``)."""
        rep = self.studies[wildcards.study].get("report", {})
        return {"focus": rep.get("focus", {}), "focus_data_size": rep.get("focus_data_size")}

    def device_labels(self, wildcards) -> dict:
        """Device id -> its label (the id where it has none)."""
        return {d: spec.get("label", d) for d, spec in self.studies[wildcards.study].get("devices", {}).items()}

    def memory_limits(self, wildcards) -> dict:
        """Record source label -> the memory its data could be cached in (benchcast.config.settings.memory_lines)."""
        return bc_settings.memory_lines(self.studies[wildcards.study]["sources"])

    def quality_inputs(self, wildcards) -> dict:
        """The quality tables of a study's measured sources, and its verdicts when it has series."""
        study, spec = wildcards.study, self.studies[wildcards.study]
        verdicts = [f"results/{study}/validation/verdicts.csv"] if bc_config.has_series(spec) else []
        return {"tables": quality_tables(study, spec), "verdicts": verdicts}


def has_ooc(spec: dict) -> bool:
    return any(src["type"] == "ooc" for src in spec["sources"].values())


def quality_tables(study: str, spec: dict) -> list[str]:
    """The per-source quality tables of a study's measured sources (made beside their records)."""
    return [f"results/{study}/quality/{src['type']}/{name}.csv" for name, src in spec["sources"].items() if src["type"] in MEASURED]


def record_files(study: str, spec: dict) -> list[str]:
    """Every source of a study writes one record table: results/{study}/records/{type}/{source}.csv."""
    return [f"results/{study}/records/{src['type']}/{name}.csv" for name, src in spec["sources"].items()]


def final_outputs(studies: dict, selected: list[str], rules: dict, outputs: dict) -> list[str]:
    """The final targets: every output of the report's rules (``rules["report"]``; with out-of-core
    sources ``rules["ooc"]``; with series ``rules["series"]``) and the quality tables of the measured
    sources; with series also the record tables. Every output of a named rule, not only those a later
    rule reads (a chart's HTML beside its SVG, every table of a table rule, predictions.csv behind the
    tables): Snakemake plans a missing file only when it is needed, so a file a failed or killed job
    left missing would otherwise stay missing, with exit 0 and stale results beside it. ``outputs``:
    rule name -> its output patterns, wildcard constraints stripped, {study} their one wildcard."""

    def of(names, study):
        return [p.replace("{study}", study) for name in names for p in outputs[name]]

    out = []
    for study in selected:
        spec = studies[study]
        out += of(rules["report"], study)
        # the per-source quality tables, made beside each source's records
        out += quality_tables(study, spec)
        if has_ooc(spec):
            out += of(rules["ooc"], study)
        if bc_config.has_series(spec):
            out += of(rules["series"], study)
            out += record_files(study, spec)
    return out


def checked(outputs: list[str], check: bool = True) -> list[str]:
    """``outputs``, where ``check`` (the run's own process) checked first: a folder where the run
    writes a file raises (benchcast.sources.parse.preflight.check_output_files)."""
    if check:
        from benchcast.sources.parse import preflight as bc_preflight

        try:
            bc_preflight.check_output_files(outputs)
        except BenchcastError as exc:
            raise BenchcastError(f"benchcast: {exc}") from None
    return outputs
