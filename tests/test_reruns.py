"""Partial reruns on a real measured study (conftest.mini_local_study, beside the paper study): real fio
and YCSB runs first (conftest.finished_tree, once a session), then dry runs after edits."""
import shutil
import stat
import subprocess

import pytest

from conftest import copy_tree
from workflow_util import edit_config, planned_jobs, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.root]

BENCH_RULES = {"provision_device", "fio_run", "ycsb_run", "teardown_device", "build_ycsb"}
#: The rules that measure (a teardown only follows its device's list of outputs).
MEASURING = BENCH_RULES - {"teardown_device"}


@pytest.fixture(scope="module")
def measured(tmp_path_factory, finished_tree):
    """This module's copy of the session's finished tree (conftest.paper_and_mini_local): the dry
    runs below edit it and put it back."""
    wd = copy_tree(finished_tree, tmp_path_factory.mktemp("reruns") / "wf")
    yield wd
    subprocess.run(["python", "-m", "snakemake", "teardown"], cwd=wd, capture_output=True)


def test_first_run_measured_and_left_nothing_behind(measured):
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout
    assert str(measured) not in out
    assert (measured / "results/local/tables/table12_predictions.csv").exists()
    raw = next((measured / "results/local/fio").rglob("run0.json"))
    assert not raw.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), "raw outputs are protected"
    assert planned_jobs(measured) == {}


def _dry(wd, mutate):
    backup = (wd / "config" / "config.yaml").read_text()
    try:
        edit_config(wd, mutate)
        return planned_jobs(wd)
    finally:
        (wd / "config" / "config.yaml").write_text(backup)


def test_adding_a_block_size_runs_only_the_new_cells(measured):
    jobs = _dry(measured, lambda c: c["studies"]["local"]["sources"]["fio"]["block_sizes"].append("16K"))
    # 4 devices x 2 rw x 2 repeats, nothing else measured again
    assert jobs["fio_run"] == 16
    assert "ycsb_run" not in jobs and "provision_device" not in jobs and "build_ycsb" not in jobs
    # records again for each measured source (fio, YCSB: their devices were torn down again)
    assert jobs["teardown_device"] == 4 and jobs["run_records"] == 2 and "screen" in jobs


def test_changing_one_devices_fio_options_reruns_only_its_cells(measured):
    def deeper(c):
        c["studies"]["local"]["sources"]["fio"]["per_device"] = {"dram": {"iodepth": 2}}

    jobs = _dry(measured, deeper)
    assert jobs["fio_run"] == 8  # dram: 2 rw x 2 block sizes x 2 repeats
    assert jobs["teardown_device"] == 1
    assert "ycsb_run" not in jobs and "provision_device" not in jobs


def test_changing_only_the_report_reruns_only_the_report(measured):
    def focus(c):
        c["studies"]["local"]["report"]["focus_data_size"] = "4MB"

    jobs = _dry(measured, focus)
    assert jobs and set(jobs) <= {"tables_screening", "tables_prediction", "chart_fig3_scatter",
                                  "chart_fig4_data_size", "chart_target_intervals", "all"}


def test_changing_analysis_settings_never_reruns_a_benchmark(measured):
    def analysis(c):
        st = c["studies"]["local"]
        st["aggregate"]["trim"] = 0
        st["pairing"] = []
        st["validate"] = {"level": 0.9}
        st["devices"]["dram2"]["label"] = "renamed"
        # which sources measure a device, said on the device instead of by default: the same runs
        st["devices"]["dram2"]["sources"] = list(st["sources"])

    jobs = _dry(measured, analysis)
    assert {"aggregate", "screen", "heldout"} <= set(jobs)
    assert not (set(jobs) & BENCH_RULES) and "provision_device" not in jobs, jobs


def test_a_changed_analysis_package_reruns_the_analysis_never_a_benchmark(measured):
    """A new analysis (a git pull) must not leave stale tables: every rule running Python over
    results has the package's digest as a param. The device code is left out of it, and the
    measuring rules never have it."""
    module = measured / "scripts" / "benchcast" / "validation" / "choice.py"
    device = next((measured / "scripts" / "benchcast" / "devices").glob("*.py"))
    for path, expect_analysis in ((module, True), (device, False)):
        backup = path.read_text()
        try:
            path.write_text(backup + "\n# edited\n")
            jobs = planned_jobs(measured)
        finally:
            path.write_text(backup)
        if expect_analysis:
            assert {"run_records", "aggregate", "heldout", "tables_validity"} <= set(jobs), jobs
            assert not (set(jobs) & BENCH_RULES), jobs
        else:
            assert jobs == {}, jobs
    assert planned_jobs(measured) == {}


def test_changing_a_ycsb_setting_plans_its_runs_again(measured):
    """A YCSB setting shapes the measurement: the changed runs are planned (and the re-measure guard
    stops a real run before them), fio cells are not. Snakemake records only params that are
    functions of the wildcards, so the job's params must be one."""
    jobs = _dry(measured, lambda c: c["studies"]["local"]["sources"]["ycsb"].update(operationcount=300))
    assert jobs["ycsb_run"] == 12  # 4 devices x 3 data sizes x 1 repeat
    assert "fio_run" not in jobs and "build_ycsb" not in jobs


def test_a_data_size_or_a_repeat_added_or_dropped_plans_only_its_own_runs(measured):
    """The sizes, engines, devices and repeats of a YCSB source say which runs exist, not how one is
    made: a measured run's recorded settings do not hold them, so changing them plans only the new
    runs (and dropping one plans nothing), never one measured before."""
    ycsb = lambda c: c["studies"]["local"]["sources"]["ycsb"]  # noqa: E731
    jobs = _dry(measured, lambda c: ycsb(c)["data_sizes"].append("3MB"))
    assert jobs["ycsb_run"] == 4, jobs  # 4 devices x the new size
    assert "fio_run" not in jobs and "provision_device" not in jobs
    jobs = _dry(measured, lambda c: ycsb(c)["data_sizes"].remove("4MB"))
    assert not (set(jobs) & MEASURING), jobs  # the analysis again, without that size
    jobs = _dry(measured, lambda c: ycsb(c).update(repeats=2))
    assert jobs["ycsb_run"] == 12, jobs  # run 1 of 4 devices x 3 sizes
    jobs = _dry(measured, lambda c: ycsb(c).update(devices=["dram", "dram2", "disk"]))
    assert not (set(jobs) & MEASURING), jobs


def test_repeat_until_stable_plans_only_the_runs_beyond_repeats(measured):
    """max_repeats adds runs 2 and 3 of every fio cell and plans nothing measured again; the YCSB
    jobs' recorded settings do not change (stable_cv, a default now, is no setting of a run)."""
    jobs = _dry(measured, lambda c: c["studies"]["local"]["sources"]["fio"].update(max_repeats=4))
    assert jobs["fio_run"] == 32  # 4 devices x 4 cells x runs 2 and 3
    assert "ycsb_run" not in jobs and "provision_device" not in jobs


def test_runs_beyond_repeats_are_skip_notes_once_the_runs_agree(measured, tmp_path):
    """With a CV threshold no pair of runs misses, run 2 of every cell is a skip note saying why,
    and the records are those of runs 0 and 1; at a threshold of 0 % the same earlier runs ask for
    another run."""
    import json

    from benchcast.sources.run import fio
    from benchcast import records

    wd = tmp_path / "copy"
    shutil.copytree(measured, wd, symlinks=True)
    before = records.read(wd / "results/local/records/fio/fio.csv")
    edit_config(wd, lambda c: c["studies"]["local"]["sources"]["fio"].update(max_repeats=3, stable_cv=1000))
    snakemake(wd)
    notes = sorted((wd / "results/local/fio/fio").rglob("run2.json"))
    assert len(notes) == 16
    for note in notes:
        why = json.loads(note.read_text())["benchcast_skipped"]
        assert why.startswith("stable: CV ") and why.endswith("<= 1000 % over 2 runs"), why
    after = records.read(wd / "results/local/records/fio/fio.csv")
    assert len(after) == len(before) and set(after["run"]) == {0, 1}
    cell_dir = notes[0].parent
    previous = [str(cell_dir / "run0.json"), str(cell_dir / "run1.json")]
    assert fio.stable_already({"previous": previous, "stable_cv": 0}) is None
    subprocess.run(["python", "-m", "snakemake", "teardown"], cwd=wd, capture_output=True)
