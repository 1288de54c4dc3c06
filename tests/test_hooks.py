"""Tests of benchcast.workflow.hooks: the workflow's onstart / onerror hooks, over what the adapter
(benchcast.core.smk) says of Snakemake's run, here replaced by plain data. (The hooks in a real run:
tests/test_reruns.py, test_precious.py, test_recover.py, test_workflow.py.)"""

import os
from types import SimpleNamespace

import pytest

from benchcast.core import progress, smk
from benchcast.workflow import hooks

MEASURING = frozenset({"fio_run", "ycsb_run", "ooc_run"})


class Refused(Exception):
    pass


def refuse(line):
    raise Refused(line)


def job(rule, output=(), input=(), **wildcards):
    return smk.Job(rule, tuple(input), tuple(output), wildcards, object())


class Logger:
    def __init__(self):
        self.lines = []

    def info(self, line):
        self.lines.append(("info", line))

    def warning(self, line):
        self.lines.append(("warning", line))

    def error(self, line):
        self.lines.append(("error", line))


@pytest.fixture
def run(tmp_path, monkeypatch):
    """Hooks in a fresh folder, over a run that plans nothing, fails nothing, runs its jobs here."""
    monkeypatch.chdir(tmp_path)
    plan = SimpleNamespace(needrun=[], deps={}, updated={}, ends={}, read={}, failed=[], forced=set(),
                           touch=False, local=True, keep=False)
    monkeypatch.setattr(smk, "needrun_jobs", lambda wf: list(plan.needrun))
    monkeypatch.setattr(smk, "dependencies", lambda wf, j: plan.deps.get(j, []))
    monkeypatch.setattr(smk, "updated_inputs", lambda wf, j: plan.updated.get(j, set()))
    monkeypatch.setattr(smk, "output_end_time", lambda wf, j, f: plan.ends.get(f))
    monkeypatch.setattr(smk, "recorded_checksums", lambda wf, j, f: plan.read.get(f, set()))
    monkeypatch.setattr(smk, "failed_jobs", lambda wf: list(plan.failed))
    monkeypatch.setattr(smk, "forced", lambda wf: plan.forced)
    monkeypatch.setattr(smk, "touch_run", lambda wf: plan.touch)
    monkeypatch.setattr(smk, "runs_jobs_here", lambda wf: plan.local)
    monkeypatch.setattr(smk, "keeps_incomplete", lambda wf: plan.keep)
    h = hooks.Hooks(workflow=None, studies={"s": {"sources": {}, "devices": {}}}, selected=["s"], run={},
                    remeasure=[], recovery=None, logger=Logger(), refuse=refuse, measuring_rules=MEASURING)
    return h, plan


def test_a_file_changed_after_its_job_wrote_it_stops_the_run(run):
    h, plan = run
    os.makedirs("results/s")
    f = "results/s/aggregated.csv"
    open(f, "w").write("a,b\n1,2\n")
    made, reads = job("aggregate", output=[f]), job("screen", input=[f])
    plan.needrun, plan.deps, plan.updated = [reads], {reads: [made]}, {reads: {f}}
    plan.ends[f] = os.path.getmtime(f) - 60
    plan.read[f] = {"sha256:" + "0" * 64}  # what the job after it read: other content
    with pytest.raises(Refused, match=r"aggregated.csv: changed after the run made it \(rule aggregate\)"):
        h.refuse_changed_outputs()
    plan.read[f] = {f"sha256:{smk.file_sha256(f)}"}  # the same content: only its time changed
    h.refuse_changed_outputs()
    plan.read[f] = set()  # nothing recorded of it (over 1 MB): no judgement
    h.refuse_changed_outputs()
    plan.read[f], plan.deps = {"sha256:" + "0" * 64}, {reads: [job("fio_run", output=[f])]}
    h.refuse_changed_outputs()  # raw measurements are the re-measure guard's
    plan.touch = True
    h.refuse_changed_outputs()


def test_a_planned_measurement_over_an_existing_raw_result_is_refused_unless_named(run):
    h, plan = run
    os.makedirs("results/s/raw")
    open("results/s/raw/x.json", "w").write("{}")
    plan.needrun = [job("fio_run", output=["results/s/raw/x.json"])]
    with pytest.raises(Refused, match="refusing to re-measure 1 existing raw result"):
        h.refuse_remeasure()
    assert open("logs/remeasure-refused.txt").read() == "results/s/raw/x.json\n"
    plan.forced = {"fio_run"}
    h.refuse_remeasure()
    plan.forced, plan.touch = set(), True
    h.refuse_remeasure()


def test_preflight_reads_only_the_raw_outputs_no_job_of_this_run_makes(run, monkeypatch):
    h, plan = run
    checked = []
    monkeypatch.setattr("benchcast.sources.parse.preflight.check_file", checked.append)
    for f in ("a.json", "b.json"):
        open(f, "w").write("{}")
    plan.needrun = [job("run_records", input=["a.json", "b.json", "gone.json"]), job("fio_run", output=["b.json"])]
    h.preflight()
    assert checked == ["a.json"]

    def bad(path):
        raise hooks.BenchcastError(f"{path}: not fio JSON")

    monkeypatch.setattr("benchcast.sources.parse.preflight.check_file", bad)
    with pytest.raises(Refused, match="benchcast: a.json: not fio JSON"):
        h.preflight()


def test_failed_jobs_outputs_go_with_keep_incomplete_but_measurements_stay(run):
    h, plan = run
    os.makedirs("out/dir")
    for f in ("out/table.csv", "out/raw.json"):
        open(f, "w").write("x")
    plan.failed = [job("tables", output=["out/table.csv", "out/dir", "out/never.csv"]),
                   job("fio_run", output=["out/raw.json"])]
    h.clear_failed_outputs()
    assert os.path.exists("out/table.csv")  # without keep-incomplete Snakemake removed them itself
    plan.keep = True
    h.clear_failed_outputs()
    assert sorted(os.listdir("out")) == ["raw.json"]
    assert h.logger.lines == [("warning", "benchcast: removed out/table.csv: its job failed"),
                              ("warning", "benchcast: removed out/dir: its job failed")]


def test_progress_and_machine_check_wait_for_measuring_jobs(run, monkeypatch):
    h, plan = run
    watched = []
    monkeypatch.setattr("benchcast.core.progress.watch", lambda progress, say: watched.append(progress))
    monkeypatch.setattr("benchcast.sources.run.quality.wait_for_quiet", lambda *a, **k: watched.append("quiet"))
    plan.needrun = [job("run_records")]
    h.start_progress()
    h.machine_check()
    assert watched == []
    h.studies["s"]["sources"]["f"] = {"type": "fio"}
    plan.needrun = [job("fio_run", output=["r.json"], study="s", source="f")]
    monkeypatch.setitem(progress.WEIGHTS, "fio", lambda src: 2.0)
    h.start_progress()
    h.machine_check()
    assert [p.planned[0].outputs for p in watched[:1]] == [("r.json",)] and watched[1] == "quiet"


def test_teardown_after_a_failed_run_with_nothing_left_says_nothing(run):
    h, _plan = run
    h.teardown_everything()
    assert h.logger.lines == [] and h.stop is None


def test_devices_are_released_at_a_job_steps_exit_only(monkeypatch):
    released = []
    monkeypatch.setattr(hooks.bc_devices, "release", lambda paths: released.extend(paths) or {})
    monkeypatch.setattr(smk, "target_jobs", lambda wf: [("fio_run", {"study": "s", "device": "d"}),
                                                        ("run_records", {"study": "s", "device": "e"})])
    path = "results/{}/devices/state/{}.json".format
    monkeypatch.setattr(smk, "executor_name", lambda wf: "local")
    hooks.release_at_exit(None, MEASURING, path)
    assert released == []
    monkeypatch.setattr(smk, "executor_name", lambda wf: "slurm-jobstep")
    hooks.release_at_exit(None, MEASURING, path)
    assert released == ["results/s/devices/state/d.json"]
    assert hooks.device_rules(MEASURING) == MEASURING | {"provision_device", "teardown_device"}
