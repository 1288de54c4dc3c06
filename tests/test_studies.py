"""Tests of benchcast.workflow.studies: the studies a run builds, their usable devices and plans, and
the refusal (rules/common.smk)."""

import copy

import pytest

from analysis_util import CONFIG
from benchcast import BenchcastError, config
from benchcast.workflow import studies

VALID = config.validate(copy.deepcopy(CONFIG))
MISSING = "/dev/benchcast-no-such-device"


def test_refuse_ends_the_process_with_the_line_alone():
    with pytest.raises(SystemExit) as exc:
        studies.refuse("config: studies.x: wrong")
    assert exc.value.code == "config: studies.x: wrong"


def test_selected_is_every_study_or_those_run_names_in_its_order():
    s = {"a": {}, "b": {}, "c": {}}
    assert studies.selected(s, {}) == ["a", "b", "c"]
    assert studies.selected(s, {"studies": []}) == ["a", "b", "c"]
    assert studies.selected(s, {"studies": ["c", "a"]}) == ["c", "a"]


def test_an_unknown_selected_study_is_refused_by_name():
    with pytest.raises(BenchcastError, match=r"^config: run.studies: unknown study 'nope'$"):
        studies.selected({"a": {}}, {"studies": ["a", "nope"]})


def test_usable_skips_an_optional_device_it_cannot_have_and_says_so():
    devices = {
        "here": {"kind": "dir", "path": "."},
        "gone": {"kind": "blockdev", "path": MISSING, "disposable": True, "optional": True},
        "paper": {"kind": "imported"},
    }
    usable, warnings = studies.usable({"s": {"devices": devices}}, "s")
    assert usable == ["here"]  # imported devices are not measured
    assert warnings == [f"benchcast: study s: skipping optional device gone: device gone: path: {MISSING} does not exist"]


def test_a_required_device_it_cannot_have_is_refused_under_the_study():
    devices = {"gone": {"kind": "blockdev", "path": MISSING, "disposable": True}}
    with pytest.raises(BenchcastError, match=rf"^config: studies\.s\.devices: device gone: path: {MISSING} does not exist$"):
        studies.usable({"s": {"devices": devices}}, "s")


def test_a_study_without_devices_measures_none():
    assert studies.usable({"s": {}}, "s") == ([], [])


def test_plan_measures_on_the_usable_devices_only_with_the_extra_runs():
    s = VALID["studies"]
    plan = studies.plan(s, {}, "local", ["disk"])
    assert {r.device for r in plan.select()} == {"disk"}
    assert plan.select(type="fio") and plan.select(type="ycsb")
    more = studies.plan(s, {"interference": {"extra_runs": 2}}, "local", ["disk"])
    assert len(more.select()) > len(plan.select())
    assert studies.plan(s, {}, "local", []).select() == []
