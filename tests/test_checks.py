"""Tests of benchcast.workflow.checks: what the workflow checks before the DAG (rules/checks.smk),
each refusal one line."""

import copy

import pytest

from analysis_util import CONFIG
from benchcast import BenchcastError, config
from benchcast.workflow import checks, studies
from benchcast.workflow.jobparams import JobParams

VALID = config.validate(copy.deepcopy(CONFIG))


def jobs(studies_=None):
    s = studies_ or VALID["studies"]
    plan = {name: studies.plan(s, VALID["run"], name, ["dram", "disk"] if name == "local" else []) for name in s}
    return JobParams(s, VALID["run"], plan)


def test_unused_names_are_an_error_or_where_allowed_a_warning():
    advice = ("fix it", "it is ignored")
    assert checks.unused("studies.s.features", [("workloads[0]", "no source has it", True)], advice) == [
        "benchcast: studies.s.features.workloads[0]: no source has it (allow_unused: true): it is ignored"]
    with pytest.raises(BenchcastError, match=r"^config: studies\.s\.features\.bs: no source has it; fix it$"):
        checks.unused("studies.s.features", [("ok", "x", True), ("bs", "no source has it", False)], advice)
    assert checks.unused("w", [], advice) == []


def test_the_default_studies_pass_with_no_warning():
    j = jobs()
    assert [checks.check_cards(j, s) for s in VALID["studies"]] == [[], []]


def test_what_a_study_brings_figures_of_its_fio_grid_series_of_its_runs():
    figures, series, cells = checks.study_names(jobs(), "local")
    assert "randread" in {w for w, _, _ in figures} and all(metric is None for _, _, metric in figures)
    assert series and cells is None  # measured applications: not all imported
    figures, series, cells = checks.study_names(jobs(), "paper")
    assert figures and series and cells  # the paper's tables, all imported


def test_a_card_no_figure_can_feed_is_refused_unless_allowed():
    s = copy.deepcopy(VALID["studies"])
    card = copy.deepcopy(s["paper"]["targets"]["S-SCM"])
    card["figures"][0]["block_size"] = "2M"  # a block size the paper's tables have not
    s["paper"]["targets"]["odd"] = card
    with pytest.raises(BenchcastError, match=r"^config: studies\.paper\.targets\.odd: none of its figures is measured "
                                             r"or imported by the study, no model can use it; fix its figures or set "
                                             r"allow_unused: true$"):
        checks.check_cards(jobs(s), "paper")
    card["allow_unused"] = True
    assert checks.check_cards(jobs(s), "paper") == [
        "benchcast: studies.paper.targets.odd: none of its figures is measured or imported by the study, no model "
        "can use it (allow_unused: true): it gets no prediction"]


def test_an_import_file_missing_is_refused_with_its_key(tmp_path):
    s = {"s": {"sources": {"p": {"type": "soga2018", "fio": str(tmp_path / "fio.csv"), "app": str(tmp_path)}}}}
    with pytest.raises(BenchcastError, match=rf"^config: studies\.s\.sources\.p\.fio: {tmp_path}/fio\.csv: no such file$"):
        checks.check_import_files(JobParams(s), ["s"])
    s["s"]["sources"]["p"]["fio"] = str(tmp_path)
    checks.check_import_files(JobParams(s), ["s"])
    s["s"]["sources"]["r"] = {"type": "records", "files": str(tmp_path / "none-*.csv")}
    with pytest.raises(BenchcastError, match=r"^config: studies\.s\.sources\.r\.files: "):
        checks.check_import_files(JobParams(s), ["s"])
    checks.check_import_files(JobParams(s), [])  # only the selected studies
