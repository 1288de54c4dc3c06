"""Tests of benchcast.workflow.inputs: the input and param functions every stage shares, over plain
config and plan data and a job's wildcards (rules/common.smk, rules/inputs.smk)."""

import json
from types import SimpleNamespace

import pytest

from benchcast import BenchcastError
from benchcast.core import smk
from benchcast.workflow import inputs
from benchcast.workflow.inputs import Inputs

DEVICES = {
    "dram": {"kind": "tmpfs", "size": "512M", "label": "DRAM", "sources": ["fio"], "node": "n1", "constraint": "ssd"},
    "disk": {"kind": "dir", "path": "."},
}
STUDIES = {
    "s": {
        "devices": DEVICES,
        "sources": {
            "fio": {"type": "fio", "repeats": 3},
            "ooc": {"type": "ooc", "programs": ["stream", "stencil"], "repeats": 2},
            "paper": {"type": "soga2018", "fio": "fio.csv", "app": "app.csv"},
        },
    },
    "bare": {"sources": {"rec": {"type": "records", "files": "x.csv"}}},
}
RUN = {"interference": {"steal": 0.1, "other_cpu": None, "extra_runs": 1, "wait_run": 30}, "speed": {"window": 60}}


def wc(**kw):
    return SimpleNamespace(**kw)


class FakePlan:
    def __init__(self):
        self.cells = {("fio", "dram", "c1"): {"rw": "randread", "bs": "4K"}}

    def outputs(self, type=None, source=None, device=None):
        return [f"out/{source}/{device}"]

    def devices(self, source):
        return ["dram", "disk"]

    def cell(self, source, device, cell):
        return self.cells[(source, device, cell)]


J = Inputs(STUDIES, RUN, {"s": FakePlan()}, "digest123")


def test_paths_of_a_state_record_and_an_ooc_program():
    assert inputs.state_path("s", "dram") == "results/s/devices/state/dram.json"
    assert J.state_path(wc(study="s", device="dram")) == "results/s/devices/state/dram.json"
    assert inputs.ooc_binary("stream") == "results/ooc/bin/stream"


def test_source_and_an_unknown_one_named_with_its_study():
    assert J.source(wc(study="s", source="fio"))["repeats"] == 3
    with pytest.raises(BenchcastError, match=r"^config: studies\.s\.sources: no source 'nope'$"):
        J.source(wc(study="s", source="nope"))


def test_digest_device_ids_and_record_files():
    assert J.package_digest(wc(study="s")) == "digest123"
    assert J.device_ids(wc(study="s")) == ["dram", "disk"]
    assert J.device_ids(wc(study="bare")) is None  # an import then accepts any device
    assert J.record_files(wc(study="s")) == [
        "results/s/records/fio/fio.csv", "results/s/records/ooc/ooc.csv", "results/s/records/soga2018/paper.csv"]


def test_a_device_spec_leaves_out_what_shapes_no_measurement():
    assert J.device_spec("s", "dram") == {"kind": "tmpfs", "size": "512M"}
    assert json.loads(J.device_spec_json(wc(study="s", device="dram"))) == {"kind": "tmpfs", "size": "512M"}
    assert J.device_spec_json(wc(study="s", device="disk")) == '{"kind": "dir", "path": "."}'


def test_slurm_resources_of_a_device():
    assert J.slurm_extra(wc(study="s", device="dram")) == "--exclusive --nodelist=n1"
    assert J.slurm_extra(wc(study="s", device="disk")) == "--exclusive"
    assert J.constraint(wc(study="s", device="dram")) == "ssd"
    assert J.constraint(wc(study="s", device="disk")) is None


def test_round_is_minus_the_repeat():
    assert J.round(wc(repeat="0")) == 0 and J.round(wc(repeat="4")) == -4


def test_thresholds_keep_the_figures_set_and_quality_params():
    assert J.thresholds() == {"steal": 0.1}  # not None, not extra_runs or wait_run
    assert Inputs(STUDIES).thresholds() == {}
    assert J.quality_params(wc(study="s", source="fio")) == {
        "thresholds": {"steal": 0.1}, "repeats": 3, "speed": {"window": 60}}


def test_device_benchmarks_and_a_study_not_planned():
    assert J.device_benchmarks(wc(study="s", device="dram")) == ["out/None/dram"]
    assert J.device_benchmarks(wc(study="bare", device="dram")) == []


def test_fio_cell_and_one_the_plan_has_not():
    assert J.fio_cell(wc(study="s", source="fio", device="dram", cell="c1")) == {"rw": "randread", "bs": "4K"}
    with pytest.raises(BenchcastError, match=r"^fio: no cell c9 on device dram in studies\.s\.sources\.fio$"):
        J.fio_cell(wc(study="s", source="fio", device="dram", cell="c9"))


def test_run_records_inputs_a_fio_source_also_reads_its_provisioning_records():
    fio = J.run_records_inputs(wc(study="s", source="fio"))
    assert list(fio) == ["runs", "study_runs", "provisioned", "torn_down"]
    assert fio["provisioned"] == ["results/s/devices/dram/provisioned.json", "results/s/devices/disk/provisioned.json"]
    assert fio["torn_down"] == ["results/s/devices/dram/torn_down.json", "results/s/devices/disk/torn_down.json"]
    assert list(J.run_records_inputs(wc(study="s", source="ooc"))) == ["runs", "study_runs", "torn_down"]


def test_ooc_binaries_and_import_files():
    assert J.ooc_binaries(wc(study="s", source="ooc")) == {
        "stream": "results/ooc/bin/stream", "stencil": "results/ooc/bin/stencil"}
    assert J.import_files(wc(study="s", source="paper")) == {"fio": "fio.csv", "app": "app.csv"}


def test_import_inputs_expand_a_folder_and_name_the_key_of_one_missing(tmp_path):
    (tmp_path / "b.csv").write_text("x\n")
    (tmp_path / "a.csv").write_text("x\n")
    studies = {"s": {"sources": {"rec": {"type": "records", "files": str(tmp_path)},
                                 "gone": {"type": "records", "files": str(tmp_path / "none" / "*.csv")}}}}
    j = Inputs(studies)
    assert j.import_inputs(wc(study="s", source="rec")) == [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    with pytest.raises(BenchcastError, match=r"^config: studies\.s\.sources\.gone\.files: "):
        j.import_inputs(wc(study="s", source="gone"))
    assert j.import_digest(wc(study="s", source="rec")) == smk.files_digest([tmp_path / "a.csv", tmp_path / "b.csv"])


def test_the_import_digest_follows_the_contents(tmp_path):
    fio, app = tmp_path / "fio.csv", tmp_path / "app.csv"
    fio.write_text("1\n")
    app.write_text("2\n")
    j = Inputs({"s": {"sources": {"p": {"type": "soga2018", "fio": str(fio), "app": str(app)}}}})
    before = j.import_digest(wc(study="s", source="p"))
    app.write_text("3\n")
    assert j.import_digest(wc(study="s", source="p")) != before


def test_methods_hash_by_identity_so_snakemake_may_keep_them():
    assert len({J.round, J.round, Inputs(STUDIES).round}) == 2
