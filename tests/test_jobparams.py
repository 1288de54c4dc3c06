"""Tests of benchcast.workflow.jobparams: a measuring job's settings (rules/inputs.smk). Params are
rerun triggers: these pin what a job's JSON holds, in its order, so that a change of it (which plans
every finished measurement again) is a deliberate one."""

import copy
import json

import pytest

from analysis_util import CONFIG
from benchcast import config
from benchcast.workflow import studies
from benchcast.workflow.jobparams import RUN_AXES, YCSB_JAR, JobParams

VALID = config.validate(copy.deepcopy(CONFIG))
STUDIES, RUN = VALID["studies"], VALID["run"]
PLAN = studies.plan(STUDIES, RUN, "local", ["dram", "disk"])
J = JobParams(STUDIES, RUN, {"local": PLAN}, "digest")


class Wildcards(dict):
    """A job's wildcards as Snakemake gives them: attributes and items(), every value a string."""

    __getattr__ = dict.__getitem__


def wildcards(run, repeat=None):
    fields = {"study": run.study, "source": run.source, "device": run.device}
    fields |= {k: str(getattr(run, k)) for k in ("cell", "engine", "size", "mode") if getattr(run, k) is not None}
    return Wildcards(fields, repeat=str(run.repeat if repeat is None else repeat))


FIO = PLAN.select(type="fio", source="fio", device="dram")[0]
YCSB = PLAN.select(type="ycsb", device="dram")[0]
OOC = PLAN.select(type="ooc", device="disk")[0]


def test_run_of_is_the_planned_run_its_wildcards_name():
    for run in (FIO, YCSB, OOC):
        assert J.run_of(wildcards(run)) == run
    assert J.run_of(wildcards(YCSB)).size == YCSB.size and isinstance(YCSB.size, int)


def test_runs_within_repeats_read_no_earlier_run_and_have_no_stop_rule():
    for r in range(3):
        assert J.previous_runs(wildcards(FIO, r)) == []
        assert J.stop_rule(wildcards(FIO, r)) == {}


def test_an_extra_run_reads_the_earlier_ones_and_the_interference_thresholds():
    w = wildcards(FIO, 3)
    previous = [FIO.again(r).path() for r in range(3)]
    assert J.previous_runs(w) == previous
    assert J.stop_rule(w) == {"previous": previous, "spoil": {"thresholds": J.thresholds(), "extra": 0}}


def test_a_run_until_stable_carries_the_cv_it_stops_at():
    studies_ = copy.deepcopy(STUDIES)
    studies_["local"]["sources"]["fio"] |= {"max_repeats": 6, "stable_cv": 4}
    j = JobParams(studies_, RUN, {"local": PLAN})
    w = wildcards(FIO, 3)
    assert j.stop_rule(w) == {"previous": [FIO.again(r).path() for r in range(3)], "stable_cv": 4}


def test_the_fio_job_is_its_cell_then_its_stop_rule():
    cell = PLAN.cell(FIO.source, FIO.device, FIO.cell)
    assert json.loads(J.fio_job(wildcards(FIO))) == cell
    extra = json.loads(J.fio_job(wildcards(FIO, 3)))
    assert list(extra) == list(cell) + ["previous", "spoil"]


def test_the_ycsb_job_json_in_its_order():
    job = json.loads(J.ycsb_job(wildcards(YCSB)))
    assert list(job) == ["study", "device", "spec", "state", "source_name", "source", "engine", "size", "repeat", "jar",
                         "records", "raw"]
    assert job["spec"]["kind"] == "tmpfs" and not {"label", "sources"} & set(job["spec"])  # they shape nothing
    assert job["state"] == "results/local/devices/state/dram.json"
    assert job["jar"] == YCSB_JAR == "results/ycsb/benchcast-ycsb.jar"
    assert (job["engine"], job["size"], job["records"], job["raw"]) == (
        YCSB.engine, YCSB.size, YCSB.path(".csv"), YCSB.path(""))
    assert list(json.loads(J.ycsb_job(wildcards(YCSB, 3))))[-2:] == ["previous", "spoil"]


def test_a_job_source_leaves_out_the_run_axes_and_keeps_its_own_engine_size_mode():
    source = J.ycsb_job_source(wildcards(YCSB))
    assert not set(RUN_AXES) & set(source)
    assert source["engines"] == [YCSB.engine] and source["data_sizes"] == [f"{YCSB.size}B"]
    assert J.ooc_job_source(wildcards(OOC))["modes"] == [OOC.mode]
    # every other run shares the rest: a new engine, size or repeat re-plans no measured run
    for run in PLAN.select(type="ycsb"):
        assert J.ycsb_job_source(wildcards(run)) == source | {"engines": [run.engine], "data_sizes": [f"{run.size}B"]}


def test_the_ooc_job_json_in_its_order():
    job = json.loads(J.ooc_job(wildcards(OOC)))
    assert list(job) == ["study", "device", "spec", "state", "source_name", "source", "mode", "repeat", "binaries",
                         "records", "raw"]
    assert job["binaries"] == {p: f"results/ooc/bin/{p}" for p in STUDIES["local"]["sources"]["ooc"]["programs"]}
    assert job["spec"]["path"] == "." and "label" not in job["spec"]


@pytest.mark.parametrize("run", [FIO, YCSB, OOC], ids=["fio", "ycsb", "ooc"])
def test_a_label_or_a_new_device_changes_no_job(run):
    method = {"fio": J.fio_job, "ycsb": J.ycsb_job, "ooc": J.ooc_job}[run.type]
    studies_ = copy.deepcopy(STUDIES)
    studies_["local"]["devices"][run.device]["label"] = "renamed"
    studies_["local"]["devices"]["new"] = {"kind": "dir", "path": "/tmp"}
    other = JobParams(studies_, RUN, {"local": PLAN})
    again = {"fio": other.fio_job, "ycsb": other.ycsb_job, "ooc": other.ooc_job}[run.type]
    assert again(wildcards(run)) == method(wildcards(run))
