"""benchcast.sources.run.recover: the start of a run after a killed one, on real processes and real marker files
(the whole of it, devices included, runs in tests/test_faults.py and tests/test_consistency.py)."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchcast.sources.run import recover
from benchcast.core import stop
import pytest

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

JOB = "import signal, subprocess, sys, time\n{trap}p = subprocess.Popen(['sleep', '60'])\ntime.sleep(60)\n"


def _job(tmp_path: Path, rule: str, trap: str = "") -> subprocess.Popen:
    """A rule script job as Snakemake starts one (python .snakemake/scripts/tmpXXXX.<rule>.py), working
    in ``tmp_path``, with a child of its own."""
    script = tmp_path / ".snakemake" / "scripts" / f"tmpab12cd.{rule}.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(JOB.format(trap=trap))
    p = subprocess.Popen([sys.executable, str(script.relative_to(tmp_path))], cwd=tmp_path)
    deadline = time.monotonic() + 10
    while not stop.children(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return p


def test_orphans_are_the_jobs_working_in_the_folder_outermost_only(tmp_path):
    job = _job(tmp_path, "aggregate")
    other = subprocess.Popen(["sleep", "60"], cwd=tmp_path)  # working there, but no job
    elsewhere = _job(tmp_path / "other", "screen")  # a job of another folder
    try:
        assert recover.orphans(str(tmp_path)) == [(job.pid, "rule aggregate")]
    finally:
        for p in (job, other, elsewhere):
            p.kill()
            p.wait()


def test_stop_orphans_sigterm_then_sigkill_after_the_grace_time(tmp_path):
    polite = _job(tmp_path, "aggregate")
    stubborn = _job(tmp_path, "screen", trap="signal.signal(signal.SIGTERM, signal.SIG_IGN)\n")
    kids = stop.children(stubborn.pid)
    t0 = time.monotonic()
    labels = recover.stop_orphans(recover.orphans(str(tmp_path)), grace=1.5)
    assert sorted(labels) == ["rule aggregate", "rule screen"]
    assert polite.wait(5) == -15 and stubborn.wait(5) == -9
    assert 1.5 <= time.monotonic() - t0 < 30
    # what the stubborn job started went with it: killed with it, gone once the kernel has run its
    # exit (on a busy machine that can come after the job's own end is reaped)
    gone = time.monotonic() + 5
    while any(stop.alive(k) for k in kids) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not any(stop.alive(k) for k in kids)


def test_a_job_left_stopped_acts_on_sigterm_without_waiting_for_the_grace_time(tmp_path):
    held = _job(tmp_path, "aggregate")
    os.kill(held.pid, signal.SIGSTOP)  # as a job suspended by hand (SIGTERM alone waits for SIGCONT)
    t0 = time.monotonic()
    assert recover.stop_orphans(recover.orphans(str(tmp_path)), grace=20) == ["rule aggregate"]
    assert held.wait(5) == -15 and time.monotonic() - t0 < 10


def _mark(root: Path, path: str) -> Path:
    marker = root / ".snakemake" / "incomplete" / base64.urlsafe_b64encode(path.encode()).decode()
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text('{"external_jobid": null}')
    return marker


def test_settle_incomplete_keeps_finished_jobs_and_clears_jobs_cut_between_renames(tmp_path):
    base = "results/s/fio/fio/dev/randread-4K-abc123"
    done, cut = f"{base}/run0", f"{base}/run1"
    for p in (f"{done}.json", f"{done}.fio", f"{cut}.fio"):  # run1's JSON was never renamed into place
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("x")
    ycsb = "results/s/ycsb/y/dev/rocksdb/2000000/run0"
    (tmp_path / ycsb).mkdir(parents=True)  # its raw folder, not its records
    (tmp_path / "results/s/aggregated.csv").write_text("cut")  # an analysis job's output, cut short
    markers = {p: _mark(tmp_path, p) for p in (f"{done}.json", f"{done}.fio", f"{cut}.json", f"{cut}.fio",
                                                f"{ycsb}.csv", ycsb, "results/s/aggregated.csv")}
    rec = recover.Recovery()
    recover.settle_incomplete(tmp_path, rec)
    assert rec.kept == [f"{done}.json"]
    assert sorted(rec.removed) == sorted([f"{cut}.fio", ycsb])
    assert sorted(rec.cut) == sorted(["results/s/aggregated.csv", f"{cut}.json", f"{ycsb}.csv"])
    assert (tmp_path / f"{done}.json").exists() and not (tmp_path / f"{cut}.fio").exists()
    assert not (tmp_path / ycsb).exists()
    assert not (tmp_path / "results/s/aggregated.csv").exists()  # else Snakemake would run that job alone
    gone = {p for p, m in markers.items() if not m.exists()}
    assert gone == {f"{done}.json", f"{done}.fio"}  # Snakemake reruns the others (rerun-incomplete)


def test_clear_locks_and_the_line(tmp_path):
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    for name in ("0.input.lock", "0.output.lock"):
        (locks / name).write_text("x\n")
    rec = recover.after_kill(tmp_path, grace=1)
    assert not list(locks.iterdir())
    rec.stopped, rec.cut = ["logs/s/fio/fio/dev/c/run0.log"], ["results/s/fio/fio/dev/c/run0.json"]
    rec.torn_down, rec.servers = ["dev (FUSE daemon)"], 1
    line = recover.summary(rec)
    assert line == ("benchcast: a previous run in this folder was killed (its lock was left in .snakemake/locks "
                    "and no process of it runs): stopped 1 job(s) it left running (logs/s/fio/fio/dev/c/run0.log); "
                    "cut short, run again: results/s/fio/fio/dev/c/run0.json; torn down: dev (FUSE daemon); "
                    "1 MariaDB server(s) stopped; its lock cleared, going on")
    assert "tear them down there" in recover.summary(recover.Recovery(), local=False)
    assert os.linesep not in line
