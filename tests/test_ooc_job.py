"""Out-of-core jobs (benchcast.sources.run.ooc_job) on real devices: STREAM under a small memory limit with swap
on zram and with mmap on a loop device; the swap file and the memory cgroup are gone afterwards,
after a failure, and after SIGKILL + teardown-all; swap benchcast did not make is never touched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from benchcast import BenchcastError, devices, records
from benchcast.sources.run import ooc_job, quality
from benchcast.devices import swap
from devices_util import clean, needs_root, swaps  # noqa: F401
from test_memlimit import needs_memcg
from test_ooc import binaries  # noqa: F401 (fixture)

MB = 1 << 20
ROOT = Path(__file__).resolve().parents[1]
ZRAM = {"kind": "zram", "disksize": "256M", "fstype": "ext4"}
LOOP = {"kind": "loop", "size": "256M", "fstype": "ext4"}


def job(tmp, device, spec, mode, binaries, **source):
    src = {"type": "ooc", "programs": ["stream"], "working_sets": ["8M", "32M"], "memory_limit": "16M",
           "passes": 1, "repeats": 1, "swap_priority": 10, "existing_swap": "refuse", "timeout": 300, **source}
    if spec["kind"] == "loop":
        spec = {**spec, "backing_dir": str(tmp)}
    out = tmp / "results" / device / mode
    return {"study": "s", "device": device, "spec": spec, "state": str(tmp / f"{device}.json"), "source_name": "ooc",
            "source": src, "mode": mode, "repeat": 0, "binaries": {k: str(v) for k, v in binaries.items()},
            "records": str(out / "run0.csv"), "raw": str(out / "run0")}


def per_pass(recs: pd.DataFrame) -> pd.DataFrame:
    """The kernels' paging and device records, per pass: index (data size, kernel), a column per metric."""
    io = recs[recs["op"].isin(["paging", "device"]) & recs["workload"].isin(["copy", "scale", "add", "triad"])]
    return io.pivot_table(index=["data_size", "workload"], columns="metric", values="value")


def finish(j):
    """Tear the job's device down (the workflow's teardown rule) and say what its state still lists."""
    devices.teardown(j["state"])
    return devices.state_record.read_state(j["state"])["created"]


@needs_root
@needs_memcg
def test_swap_on_zram_pages_beyond_the_limit_and_leaves_nothing(binaries, clean):
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    j = job(clean, "zr", ZRAM, "swap", binaries)
    ooc_job.run_job(j)
    recs = records.read(j["records"])
    assert set(recs["engine"]) == {"swap"} and set(recs["data_size"]) == {8 * MB, 32 * MB}
    assert (recs["memory_limit"].astype(int) == 16 * MB).all() and (recs["swap_size"].astype(int) == 64 * MB).all()
    assert all(Path(p).is_file() for p in recs["raw"]), recs["raw"].tolist()  # where they are, not where they were written
    assert swaps() == [] and finish(j) == {}
    # each pass's paging: beyond the limit the kernels fault their pages back from swap on the
    # device; under it nothing pages (the memory cgroup's and the device's own counters)
    io = per_pass(recs)
    over, under = io.loc[32 * MB], io.loc[8 * MB]
    assert (over["major_faults_per_op"] > 1000).all() and (over["swap_ins_per_op"] > 1000).all(), over
    assert (over["reads_per_op"] > 1000).all() and (over["read_request_size"] >= 4096).all(), over
    assert (over["swap_outs_per_op"] > 0).all() and (over["writes_per_op"] > 0).all(), over
    assert (under["major_faults_per_op"] == 0).all() and (under["reads_per_op"] == 0).all(), under
    assert (under["swap_ins_per_op"] == 0).all() and (under["writes_per_op"] == 0).all(), under
    # the run's own swap-outs are not other work on the device (under cgroup v1 the kernel sends them
    # as the root cgroup's; before they were taken out this run counted hundreds of MB/s of "other")
    q = json.loads(quality.sidecar(j["records"]).read_text())
    assert q["io_counters"].startswith("zram") and q["other_mbps"] < 20, q


@needs_root
@needs_memcg
def test_mmap_on_a_loop_device_writes_its_file_there(binaries, clean):
    j = job(clean, "lp", LOOP, "mmap", binaries)
    ooc_job.run_job(j)
    recs = records.read(j["records"])
    lat = recs[(recs["metric"] == "lat_mean") & (recs["workload"] == "copy")].set_index("data_size")["value"]
    assert set(recs["engine"]) == {"mmap"} and lat[32 * MB] > lat[8 * MB]
    assert (recs["swap_size"].astype(int) == 0).all()
    assert finish(j) == {}
    # beyond the limit a pass faults its file's pages back (readahead windows from the loop device)
    # and writes them back with a flush per msync; under it no pass faults, and what it reads from
    # the device (the file system's own blocks as writeback allocates) is not the file's pages
    io = per_pass(recs)
    over, under = io.loc[32 * MB], io.loc[8 * MB]
    assert (over["major_faults_per_op"] > 0).all() and (over["refaults_file_per_op"] > 0).all(), over
    assert (over["reads_per_op"] > 0).all() and (over["read_request_size"] > 4096).all(), over
    assert (over["swap_ins_per_op"] == 0).all() and (over["syncs_per_op"] > 0).all(), over
    assert (under["major_faults_per_op"] == 0).all(), under
    assert (under["reads_per_op"] * under["read_request_size"] < 0.01 * 8 * MB).all(), under
    assert (io["writes_per_op"] > 0).all()  # the msync of every MiB written, under the limit too


@needs_root
@needs_memcg
def test_a_failing_run_removes_swap_and_limit_and_tears_the_device_down(binaries, clean):
    """A swap file too small for the working set: the program is killed; the job fails naming it, and
    its swap file and memory cgroup are gone, the device torn down, no partial records."""
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["64M"], swap_size="4M")
    with pytest.raises(BenchcastError, match="killed"):
        ooc_job.run_job(j)
    st = devices.state_record.read_state(j["state"])
    assert st["status"] == "torn_down" and st["created"] == {} and swaps() == []
    assert not Path(j["records"]).exists()


@needs_root
@needs_memcg
def test_a_failure_at_a_mark_removes_swap_and_limit_and_tears_the_device_down(binaries, clean, monkeypatch):
    """The counters cannot be read at a mark: the program runs to its end, the job fails naming the
    run, and its swap file and memory cgroup are gone, the device torn down, no records."""
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")

    def gone(state, cgroup):
        raise OSError(f"{cgroup}/memory.stat: gone")

    monkeypatch.setattr(ooc_job, "counters", gone)
    j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["8M"])
    with pytest.raises(BenchcastError, match=r"stream-8388608.out: reading the counters at a mark: .*memory.stat: gone"):
        ooc_job.run_job(j)
    st = devices.state_record.read_state(j["state"])
    assert st["status"] == "torn_down" and st["created"] == {} and swaps() == []
    assert not Path(j["records"]).exists()


@needs_root
@needs_memcg
def test_sigkill_leaves_recorded_swap_and_limit_that_teardown_all_removes(binaries, clean):
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["96M"], passes=50)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    proc = subprocess.Popen([sys.executable, "-m", "benchcast.ooc_job", "--job", json.dumps(j)], env=env)
    deadline = time.monotonic() + 120
    created = {}
    while time.monotonic() < deadline and not {"swapfile", "memcg"} <= set(created):
        time.sleep(0.2)
        if Path(j["state"]).exists():
            created = devices.state_record.read_state(j["state"]).get("created", {})
    assert {"swapfile", "memcg"} <= set(created), created
    time.sleep(1)
    os.killpg(os.getpgid(proc.pid), 0)  # still running
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    subprocess.run(["pkill", "-KILL", "-f", str(j["binaries"]["stream"])], check=False)
    assert swaps() == [created["swapfile"]] and Path(created["memcg"]).exists()
    devices.teardown_all(clean)
    assert swaps() == [] and not Path(created["memcg"]).exists()
    assert devices.state_record.read_state(j["state"])["created"] == {}


def their_swap_file(path: Path) -> Path:
    """A 16 MiB swap file benchcast did not make (not yet on)."""
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", "count=16", "status=none"], check=True)
    path.chmod(0o600)
    subprocess.run(["mkswap", str(path)], check=True, capture_output=True)
    return path


@needs_root
@needs_memcg
def test_swap_benchcast_did_not_make_is_refused_or_recorded_and_never_touched(binaries, clean):
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    theirs = their_swap_file(clean / "their-swap")
    subprocess.run(["swapon", str(theirs)], check=True)
    try:
        j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["8M"])
        with pytest.raises(BenchcastError, match=r"swap not made by benchcast is active \(.*their-swap\)"):
            ooc_job.run_job(j)
        assert swaps() == [str(theirs)]
        j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["8M"], existing_swap="warn")
        ooc_job.run_job(j)
        recs = pd.read_csv(j["records"])
        assert set(recs["other_swap"]) == {str(theirs)}
        assert swaps() == [str(theirs)] and finish(j) == {}
    finally:
        subprocess.run(["swapoff", str(theirs)], check=False)


@needs_root
@needs_memcg
def test_the_swap_of_a_benchmark_holding_the_machine_lock_is_waited_out(binaries, clean):
    """Another run's swap job on this machine holds the benchmark lock with its swap file on: this
    job waits for the lock and then runs (the swap is off by then); it refused that swap before,
    looking for it while it waited (two benchcast runs on one machine, found by benchmarks/faults.py)."""
    import threading

    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    theirs = their_swap_file(clean / "their-swap")
    held = threading.Event()

    def other_run():
        with devices.benchmark_lock():
            subprocess.run(["swapon", str(theirs)], check=True)
            held.set()
            time.sleep(2)
            subprocess.run(["swapoff", str(theirs)], check=True)

    t = threading.Thread(target=other_run)
    t.start()
    try:
        assert held.wait(60)
        j = job(clean, "zr", ZRAM, "swap", binaries, working_sets=["8M"])
        ooc_job.run_job(j)
        assert pd.read_csv(j["records"])["other_swap"].isna().all() and finish(j) == {}
    finally:
        t.join()
        subprocess.run(["swapoff", str(theirs)], check=False, capture_output=True)


@pytest.mark.workflow
@needs_root
@needs_memcg
def test_workflow_runs_ooc_through_to_the_relative_chart_and_never_remeasures_for_code(clean):
    """A small study with an ooc source: the jobs (memory, swap, mmap on two devices, memory alone on a
    tmpfs, where swap and mmap would be memory) run, their
    records reach the relative-runtime table and chart; editing a program's source rebuilds it and
    re-measures nothing; a changed setting is a re-measurement the workflow refuses to plan alone."""
    from workflow_util import copy_workflow, edit_config, planned_jobs, snakemake

    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    wd = copy_workflow(clean / "wf")

    def small(cfg):
        study = cfg["studies"]["local"]
        study["devices"] = {"zr": {"kind": "zram", "disksize": "256M", "fstype": "ext4"},
                            "disk": {"kind": "dir", "path": "."},
                            "dram": {"kind": "tmpfs", "size": "64M"}}  # memory mode only: a tmpfs
        study["sources"] = {
            "fio": {"type": "fio", "rw": ["randread", "randwrite"], "block_sizes": ["4K"], "repeats": 1,
                    "ioengine": "psync", "size": "4M", "runtime": 1, "ramp_time": 0, "direct": False},
            "ooc": {"type": "ooc", "programs": ["stream"], "working_sets": ["8M", "32M"], "memory_limit": "16M",
                    "passes": 1, "repeats": 1},
        }
        study["features"]["block_sizes"] = ["4K"]
        study["features"]["workloads"] = ["randread", "randwrite"]
        study.pop("report", None)
        study["screen"] = {"min_devices": 2}  # swap and mmap run on two devices (the tmpfs runs memory only)
        study["targets"] = {"Optane-P4800X": study["targets"]["Optane-P4800X"]}
        cfg["studies"] = {"local": study}
        cfg.pop("run", None)

    edit_config(wd, small)
    snakemake(wd)
    rel = pd.read_csv(wd / "results/local/tables/ooc_relative.csv")
    assert set(zip(rel["device"], rel["engine"])) == {("zr", "swap"), ("zr", "mmap"), ("disk", "swap"),
                                                      ("disk", "mmap")}
    assert set(rel["ratio"]) == {0.5, 2.0} and (rel["relative"] > 0).all()
    four = rel[rel["ratio"] == 2.0]
    assert (four["relative"] > 1.5).all(), four  # twice the memory it may use: slower than in memory
    assert "memory limit" in (wd / "results/local/charts/ooc_relative.svg").read_text()
    # the in-memory runs of each device time the machine: one row per device
    speed = pd.read_csv(wd / "results/local/tables/machine_speed.csv")
    assert set(speed["device"]) == {"zr", "disk", "dram"} and (speed["cells"] == 8).all()  # 4 kernels x 2 sets
    assert (speed["relative_time"] > 0).all() and (speed["min"] <= speed["max"]).all()
    assert swaps() == []
    # editing a program rebuilds it and measures nothing again
    src = wd / "ooc" / "stream.c"
    src.write_text(src.read_text() + "\n/* edited */\n")
    jobs = planned_jobs(wd)
    assert "build_ooc" in jobs and "ooc_run" not in jobs
    snakemake(wd)
    # a changed setting would re-measure: refused unless asked for
    edit_config(wd, lambda c: c["studies"]["local"]["sources"]["ooc"].__setitem__("passes", 2))
    out = snakemake(wd, check=False)
    refused = [ln for ln in (out.stdout + out.stderr).splitlines() if "refusing to re-measure" in ln]
    assert out.returncode != 0 and len(refused) == 1 and "results/local/ooc/ooc/" in refused[0]
    assert swaps() == []
