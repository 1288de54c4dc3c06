"""Tests of benchcast.workflow.targets: the final targets and the report rules' params
(rules/outputs.smk, the Snakefile's rule all)."""

from types import SimpleNamespace

import pytest

from benchcast import BenchcastError
from benchcast.workflow import targets

STUDIES = {
    "app": {
        "devices": {"a": {"kind": "dir", "label": "Disk A"}, "b": {"kind": "dir"}},
        "sources": {"f": {"type": "fio"}, "y": {"type": "ycsb"}, "o": {"type": "ooc"}},
        "report": {"focus": {"engine": "rocksdb"}, "focus_data_size": "8MB"},
    },
    "figs": {"sources": {"f": {"type": "fio"}, "t": {"type": "fio_json", "files": "x"}}},
}
RULES = {"report": ["noise"], "ooc": ["chart_ooc"], "series": ["screen"]}
OUTPUTS = {
    "noise": ["results/{study}/tables/noise.csv", "results/{study}/charts/noise.svg"],
    "chart_ooc": ["results/{study}/charts/ooc.svg"],
    "screen": ["results/{study}/screen.csv"],
}


def test_reported_is_report_with_the_study_its_category_and_the_caption():
    calls = []
    reported = targets.reporter(lambda *a, **kw: calls.append((a, kw)) or "flagged")
    assert reported("charts/fig3.svg", "Charts") == "flagged"
    reported("tables/x.csv", "Tables", caption="tables")
    assert calls == [
        (("results/{study}/charts/fig3.svg",), {"caption": "../report/fig3.rst", "category": "{study}",
                                                "subcategory": "Charts"}),
        (("results/{study}/tables/x.csv",), {"caption": "../report/tables.rst", "category": "{study}",
                                             "subcategory": "Tables"}),
    ]


def test_the_report_params_of_a_study():
    p = targets.ReportParams(STUDIES)
    app, figs = SimpleNamespace(study="app"), SimpleNamespace(study="figs")
    assert p.focus(app) == {"focus": {"engine": "rocksdb"}, "focus_data_size": "8MB"}
    assert p.focus(figs) == {"focus": {}, "focus_data_size": None}
    assert p.device_labels(app) == {"a": "Disk A", "b": "b"}
    assert p.device_labels(figs) == {}
    assert p.quality_inputs(app) == {
        "tables": ["results/app/quality/fio/f.csv", "results/app/quality/ycsb/y.csv", "results/app/quality/ooc/o.csv"],
        "verdicts": ["results/app/validation/verdicts.csv"]}
    assert p.quality_inputs(figs) == {"tables": ["results/figs/quality/fio/f.csv"], "verdicts": []}


def test_record_files_every_source_writes_one():
    assert targets.record_files("figs", STUDIES["figs"]) == [
        "results/figs/records/fio/f.csv", "results/figs/records/fio_json/t.csv"]


def test_final_outputs_by_what_a_study_has():
    out = targets.final_outputs(STUDIES, ["app", "figs"], RULES, OUTPUTS)
    assert out == [
        "results/app/tables/noise.csv", "results/app/charts/noise.svg",
        "results/app/quality/fio/f.csv", "results/app/quality/ycsb/y.csv", "results/app/quality/ooc/o.csv",
        "results/app/charts/ooc.svg",  # it has out-of-core sources
        "results/app/screen.csv",  # it has series
        "results/app/records/fio/f.csv", "results/app/records/ycsb/y.csv", "results/app/records/ooc/o.csv",
        "results/figs/tables/noise.csv", "results/figs/charts/noise.svg",
        "results/figs/quality/fio/f.csv",  # device figures alone: no series, no ooc
    ]
    assert targets.final_outputs(STUDIES, ["figs"], RULES, OUTPUTS)[0] == "results/figs/tables/noise.csv"
    assert targets.final_outputs(STUDIES, [], RULES, OUTPUTS) == []


def test_checked_refuses_a_folder_where_a_file_goes_in_the_run_s_own_process(tmp_path):
    folder = tmp_path / "noise.csv"
    folder.mkdir()
    paths = [str(tmp_path / "fine.csv"), str(folder)]
    with pytest.raises(BenchcastError, match=rf"^benchcast: {folder}: a folder where the run writes a file"):
        targets.checked(paths)
    assert targets.checked(paths, check=False) == paths
    assert targets.checked(paths[:1]) == paths[:1]
