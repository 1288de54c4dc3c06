# Config validation, the study expansion and the get_* input functions shared by all stages.
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from benchcast import BenchcastError  # noqa: E402
from benchcast import config as bc_config  # noqa: E402

try:
    bc_config.validate(config, Path(workflow.basedir) / "config" / "schema.yaml")
except BenchcastError as exc:
    raise WorkflowError(str(exc)) from None

STUDIES = config["studies"]
RUN = config.get("run", {})
SELECTED = RUN.get("studies") or list(STUDIES)
for _name in SELECTED:
    if _name not in STUDIES:
        raise WorkflowError(f"config: run.studies: unknown study {_name!r}")

SOURCE_TYPES = ["soga2018"]


wildcard_constraints:
    study="|".join(map(re.escape, STUDIES)),
    source="[A-Za-z0-9][A-Za-z0-9_-]*",


def study_cfg(wildcards):
    return STUDIES[wildcards.study]


def get_record_files(wildcards):
    """Every source of a study writes one record table: results/{study}/records/{type}/{source}.csv."""
    return [
        f"results/{wildcards.study}/records/{src['type']}/{name}.csv"
        for name, src in STUDIES[wildcards.study]["sources"].items()
    ]


def get_source(wildcards):
    try:
        return STUDIES[wildcards.study]["sources"][wildcards.source]
    except KeyError:
        raise WorkflowError(
            f"config: studies.{wildcards.study}.sources: no source {wildcards.source!r}"
        )


def get_import_files(wildcards):
    src = get_source(wildcards)
    return {"fio": src["fio"], "app": src["app"]}


def get_focus(wildcards):
    rep = STUDIES[wildcards.study].get("report", {})
    return {
        "focus": rep.get("focus", {}),
        "focus_data_size": rep.get("focus_data_size"),
    }


def get_device_labels(wildcards):
    devs = STUDIES[wildcards.study].get("devices", {})
    return {d: spec.get("label", d) for d, spec in devs.items()}


TABLES_SCREENING = [
    "table08_r2_by_feature",
    "table09_10_best_feature",
    "table11_mean_best_r2",
]
TABLES_PREDICTION = [
    "table12_predictions",
    "table13_extrapolated",
    "table14_size_fit_r2",
]
CHARTS = ["fig3_scatter", "fig4_data_size", "heatmap_best_r2"]


def get_final_outputs():
    out = []
    for study in SELECTED:
        out += expand(
            "results/{study}/tables/{table}.csv",
            study=study,
            table=TABLES_SCREENING + TABLES_PREDICTION,
        )
        out += expand("results/{study}/charts/{chart}.svg", study=study, chart=CHARTS)
    return out
