"""Out-of-core jobs (benchcast.ooc_job) on real devices: STREAM under a small memory limit with swap
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

from benchcast import BenchcastError, devices, ooc_job, records
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


def finish(j):
    """Tear the job's device down (the workflow's teardown rule) and say what its state still lists."""
    devices.teardown(j["state"])
    return devices.base.read_state(j["state"])["created"]


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
    assert swaps() == [] and finish(j) == {}


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
    st = devices.base.read_state(j["state"])
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
            created = devices.base.read_state(j["state"]).get("created", {})
    assert {"swapfile", "memcg"} <= set(created), created
    time.sleep(1)
    os.killpg(os.getpgid(proc.pid), 0)  # still running
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    subprocess.run(["pkill", "-KILL", "-f", str(j["binaries"]["stream"])], check=False)
    assert swaps() == [created["swapfile"]] and Path(created["memcg"]).exists()
    devices.teardown_all(clean)
    assert swaps() == [] and not Path(created["memcg"]).exists()
    assert devices.base.read_state(j["state"])["created"] == {}


@needs_root
@needs_memcg
def test_swap_benchcast_did_not_make_is_refused_or_recorded_and_never_touched(binaries, clean):
    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    theirs = clean / "their-swap"
    subprocess.run(["dd", "if=/dev/zero", f"of={theirs}", "bs=1M", "count=16", "status=none"], check=True)
    theirs.chmod(0o600)
    subprocess.run(["mkswap", str(theirs)], check=True, capture_output=True)
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
