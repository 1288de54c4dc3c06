"""Measurements are precious: a finished tree moved elsewhere plans nothing, a run that would
re-measure stops first, a killed run resumes with only the unfinished cells, partial outputs never
pass as results, and planning needs no root. Real devices, real fio and YCSB, real Snakemake."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchcast.core import protect
from conftest import copy_tree
from devices_util import benchcast_cgroups, losetup_all, zram_devices
from workflow_util import checksums, copy_workflow, edit_config, planned_jobs, snakemake

VENV_BIN = Path(sys.executable).absolute().parent


# --------------------------------------------------------------------------- the workflow


def bare_env() -> dict:
    """The environment of a user who starts .venv/bin/snakemake without activating the venv."""
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != VENV_BIN]
    return {**os.environ, "PATH": os.pathsep.join(path or ["/usr/bin", "/bin"])}


def run_bare(wd: Path, *args, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "snakemake"), "--cores", "2", *args], cwd=wd, env=bare_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, finished_tree):
    """A copy of the session's finished tree (conftest.paper_and_mini_local: the one cut-down study
    of the workflow tests, its tmpfs and directory devices measured with fio and YCSB, beside the
    paper study), with the log of the run that measured it."""
    wd = copy_tree(finished_tree, tmp_path_factory.mktemp("precious") / "first")
    yield wd
    subprocess.run([sys.executable, "-m", "snakemake", "teardown"], cwd=wd, capture_output=True)


@pytest.mark.workflow
@pytest.mark.root
def test_a_run_prints_one_progress_line_per_benchmark_job(finished):
    logs = [p.read_text() for p in sorted((finished / ".snakemake" / "log").glob("*.snakemake.log"))]
    log = next(text for text in logs if "benchcast: fio done: " in text)  # the measuring run's
    lines = [ln for ln in log.splitlines() if ln.startswith("benchcast: ") and " done: " in ln]
    runs = len(list((finished / "results" / "local" / "fio").rglob("run*.json")))
    runs += len(list((finished / "results" / "local" / "ycsb").rglob("run*.csv")))
    assert runs > 2 and len(lines) == runs, log[-3000:]
    assert f" {runs}/{runs} benchmark runs" in lines[-1]
    assert lines[-1].endswith("about 0 s left")


@pytest.mark.workflow
@pytest.mark.root
def test_a_moved_tree_plans_nothing_and_a_run_there_changes_nothing(finished, tmp_path):
    moved = tmp_path / "elsewhere" / "campaign"
    moved.parent.mkdir()
    subprocess.run(["cp", "-a", str(finished), str(moved)], check=True)
    before = checksums(moved / "results")
    assert planned_jobs(moved) == {}
    proc = run_bare(moved)  # .venv/bin/snakemake, venv not on PATH
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert checksums(moved / "results") == before
    assert "Nothing to be done" in proc.stdout + proc.stderr


@pytest.mark.workflow
@pytest.mark.root
def test_a_change_that_would_remeasure_stops_first_and_loses_nothing(finished, tmp_path):
    wd = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(finished), str(wd)], check=True)
    edit_config(wd, lambda c: c["studies"]["local"]["devices"]["dram"].update(size="96M"))
    before = checksums(wd / "results")
    proc = run_bare(wd)
    assert proc.returncode != 0
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "refusing to re-measure" in ln]
    assert len(lines) == 1 and "results/local/fio/fio/dram/" in lines[0], proc.stderr[-3000:]
    assert checksums(wd / "results") == before
    lost = (wd / "logs" / "remeasure-refused.txt").read_text().split()
    # dram: 4 fio cells x 2 repeats (JSON + job file) and 3 YCSB sizes (records + raw folder)
    assert len(lost) == 8 * 2 + 3 * 2 and all("/dram/" in p for p in lost)
    # named, it runs: only the dram measurements, nothing of the disk
    proc = run_bare(wd, "--config", 'remeasure=["results/local/*/*/dram/*"]')
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = checksums(wd / "results")
    changed = {p for p in before if before[p] != after.get(p)}
    assert any("fio/fio/dram/" in p for p in changed)
    assert not any("/disk/" in p and ("fio/fio/" in p or "ycsb/ycsb/" in p) for p in changed)


# --------------------------------------------------------------------------- resume after SIGKILL


def kill_tree(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def fio_grid(cfg):
    local = cfg["studies"]["local"]
    local["devices"] = {
        "dram": {"kind": "tmpfs", "size": "64M"},
        "zram": {"kind": "zram", "disksize": "64M", "fstype": "ext4"},
    }
    local["sources"] = {
        "fio": {"type": "fio", "rw": ["randread", "randwrite"], "block_sizes": ["4K", "16K"], "repeats": 3,
                "ioengine": "psync", "size": "4M", "runtime": 1, "ramp_time": 0, "direct": False},
    }
    local["features"]["block_sizes"] = ["4K", "16K"]
    local["targets"] = {
        "fast": {"figures": [{"workload": "randwrite", "block_size": "4K", "metric": "lat_mean", "value": 3}]},
    }
    local.pop("report", None)
    cfg["studies"] = {"local": local}


@pytest.mark.workflow
@pytest.mark.root
def test_sigkill_mid_fio_teardown_then_resume_runs_only_unfinished_cells(tmp_path):
    from devices_util import HAS_ZRAM

    if os.geteuid() != 0 or not HAS_ZRAM:
        pytest.skip("needs root and zram")
    wd = copy_workflow(tmp_path / "wf")
    edit_config(wd, fio_grid)
    before = {"loops": losetup_all(), "zram": zram_devices(), "cgroups": benchcast_cgroups()}
    log = open(tmp_path / "killed-run.log", "w")
    proc = subprocess.Popen([str(VENV_BIN / "snakemake"), "--cores", "1"], cwd=wd, env=bare_env(),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    fio_dir = wd / "results/local/fio/fio"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:  # kill while a fio run is under way, after some finished
            done = list(fio_dir.rglob("run*.json")) if fio_dir.exists() else []
            partial = list(fio_dir.rglob("*.json" + protect.PARTIAL)) if fio_dir.exists() else []
            if len(done) >= 14 and partial:
                break
            if proc.poll() is not None:
                pytest.fail("the run ended before it could be killed:\n" + (tmp_path / "killed-run.log").read_text()[-3000:])
            time.sleep(0.05)
        else:
            pytest.fail("the run never reached the middle of its cells")
    finally:
        kill_tree(proc)
        log.close()
    finished = {p for p in fio_dir.rglob("run*.json")}
    assert 14 <= len(finished) < 24
    # the killed job's output exists only under its temporary name
    assert list(fio_dir.rglob("*.json" + protect.PARTIAL))
    td = subprocess.run([str(VENV_BIN / "snakemake"), "--cores", "1", "teardown"], cwd=wd, env=bare_env(),
                        capture_output=True, text=True, timeout=300)
    assert td.returncode == 0, td.stderr[-2000:]
    # as ./benchcast.sh teardown does next: release the locks the killed run left
    subprocess.run([str(VENV_BIN / "snakemake"), "--unlock"], cwd=wd, env=bare_env(), check=True,
                   capture_output=True)
    with open("/proc/self/mountinfo") as fh:
        assert str(wd) not in fh.read()
    assert zram_devices() == before["zram"] and losetup_all() == before["loops"]
    assert benchcast_cgroups() == before["cgroups"]
    jobs = planned_jobs(wd)
    assert jobs["fio_run"] == 24 - len(finished)
    snakemake(wd)
    assert {p for p in fio_dir.rglob("run*.json")} >= finished and len(list(fio_dir.rglob("run*.json"))) == 24
    assert not list(fio_dir.rglob("*" + protect.PARTIAL))
    assert zram_devices() == before["zram"]
    (tmp_path / "counts.txt").write_text(f"finished before kill {len(finished)}, rerun {jobs['fio_run']}\n")
    print(f"resume: {len(finished)} fio runs finished before SIGKILL, {jobs['fio_run']} rerun")


# --------------------------------------------------------------------------- planning without root


@pytest.mark.root
def test_planning_zram_and_blockdev_as_an_ordinary_user_succeeds():
    if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"):
        pytest.skip("needs root to switch to an ordinary user (setpriv, unshare)")
    top = Path(tempfile.mkdtemp(prefix="benchcast-nonroot-", dir="/tmp"))
    try:
        (top / "wf").mkdir()
        wd = copy_workflow(top / "wf")
        backing = top / "victim.img"
        with open(backing, "wb") as fh:
            fh.truncate(32 << 20)
        loopdev = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True,
                                 check=True).stdout.strip()
        try:
            grid = {}

            def devices(cfg):
                local = cfg["studies"]["local"]
                local["devices"] = {
                    "zr": {"kind": "zram", "disksize": "64M"},
                    "victim": {"kind": "blockdev", "path": loopdev, "disposable": True},
                    "slow": {"kind": "throttled", "backing": {"kind": "zram", "disksize": "64M"},
                             "write_iops": 100},
                }
                local["sources"] = {k: v for k, v in local["sources"].items() if k == "fio"}
                local["sources"]["fio"].pop("devices", None)  # the default's tiers: every device here
                grid.update(local["sources"]["fio"])
                local.pop("report", None)
                cfg["studies"] = {"local": local}

            edit_config(wd, devices)
            subprocess.run(["chmod", "-R", "a+rwX", str(top)], check=True)
            # The venv's Python may live under /root (mode 700): in a private mount namespace, show the
            # ordinary user the same /root with only the Python installation in it.
            base = Path(sys.base_prefix).resolve()
            view = ""
            if str(base).startswith("/root/"):
                first = base.relative_to("/root").parts[0]
                view = (f"mount --bind /root/{first} {top}/pyhome && mount -t tmpfs -o mode=755 none /root && "
                        f"mkdir -p /root/{first} && mount --bind {top}/pyhome /root/{first} && ")
                (top / "pyhome").mkdir()
            cmd = (f"{view}cd {wd} && exec setpriv --reuid=65534 --regid=65534 --clear-groups "
                   f"env HOME={top} XDG_CACHE_HOME={top}/cache PATH=/usr/bin:/bin "
                   f"sh -c 'test $(id -u) = 65534 && exec {VENV_BIN}/snakemake -n --cores 1'")
            proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", cmd],
                                  capture_output=True, text=True, timeout=300)
            out = proc.stdout + proc.stderr
            assert proc.returncode == 0, out[-3000:]
            jobs = {}
            for line in out.split("Job stats:", 1)[1].splitlines()[3:]:
                parts = line.split()
                if len(parts) != 2 or not parts[1].isdigit():
                    break
                jobs[parts[0]] = int(parts[1])
            cells = (len(grid["rw"]) * len(grid["block_sizes"]) - len(grid.get("exclude", []))) * grid["repeats"]
            assert jobs["provision_device"] == 3 and jobs["fio_run"] == 3 * cells
        finally:
            subprocess.run(["losetup", "-d", loopdev], check=False)
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.workflow
def test_keep_incomplete_still_removes_a_failed_analysis_output(tmp_path, paper_only):
    """profiles/slurm keeps what a failed round job measured (keep-incomplete); a failed analysis
    job's half-written output must still go (rules/hooks.smk onerror: clear_failed_outputs)."""
    wd = copy_workflow(tmp_path / "wf")
    edit_config(wd, paper_only)
    # this copy's aggregate script writes half a table, then fails
    (wd / "scripts" / "aggregate.py").write_text(
        "from pathlib import Path\n"
        "Path(snakemake.output[0]).write_text('study,sou')  # noqa: F821\n"
        "raise SystemExit('stopped mid-write')\n")
    proc = snakemake(wd, "--keep-incomplete", "results/paper/aggregated.csv", check=False)
    assert proc.returncode != 0
    assert "benchcast: removed results/paper/aggregated.csv: its job failed" in proc.stderr, proc.stderr[-3000:]
    assert not (wd / "results" / "paper" / "aggregated.csv").exists()
    assert (wd / "results" / "paper" / "records").is_dir()  # what finished stays
