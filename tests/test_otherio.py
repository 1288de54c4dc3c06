"""Other work on the measured device: the figures of an interval by hand; a real fio run on a real loop
device while a real writer hits its file system (counted) and alone (not counted: its own requests,
file layout and journal commits included, are the benchmark's); a tmpfs, which has no counters of
its own, says so; the benchmark's I/O cgroup is made and removed with the run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import pytest

from benchcast.sources.run import fio, otherio, quality
from benchcast.devices import benchcg
from devices_util import clean, needs_loop, needs_root  # noqa: F401

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

#: A writer of 16 MiB files with fsync, from when its go file appears, for the seconds it is given.
WRITER = """import os, sys, time
path, go = sys.argv[1], sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.01)
until = time.time() + float(sys.argv[2])
buf = os.urandom(1 << 20)
while time.time() < until:
    with open(path, "wb") as f:
        for _ in range(16):
            f.write(buf)
        f.flush()
        os.fsync(f.fileno())
    os.unlink(path)
"""


def snap(reads, writes, rb, wb, own_r, own_w, own_rb, own_wb, commits=None, logged=3):
    return {"io_counters": "loop9", "block": 1024,
            "device": {"reads": reads, "writes": writes, "read_bytes": rb, "write_bytes": wb},
            "own": {"reads": own_r, "writes": own_w, "read_bytes": own_rb, "write_bytes": own_wb},
            "journal": None if commits is None else {"commits": commits, "logged_blocks": logged}}


def test_figures_by_hand():
    """2 s; the device served 1000 reads and 600 writes (40 MB and 30 MB); the benchmark sent 1000
    reads (40 MB) and 300 writes (1.2 MB); the journal committed 100 transactions of 3 logged blocks
    (1 KiB blocks): 200 requests and 100 x 4 x 1024 bytes are the benchmark's too. Other work: 100
    requests (50/s) and 30e6 - 1.2e6 - 409600 bytes (14.195 MB/s)."""
    a = snap(0, 0, 0, 0, 0, 0, 0, 0, commits=10)
    b = snap(1000, 600, 40_000_000, 30_000_000, 1000, 300, 40_000_000, 1_200_000, commits=110)
    f = otherio.figures(a, b, 2.0)
    assert f["other_iops"] == pytest.approx(50) and f["other_mbps"] == pytest.approx(14.1952)
    assert f["io_counters"] == "loop9"
    # never below 0 (the journal's estimate above what the device did)
    assert otherio.figures(a, snap(0, 50, 0, 0, 0, 0, 0, 0, commits=110), 2.0)["other_iops"] == 0
    # 2000 pages swapped out meanwhile (8.192 MB, a swap area on the device): the benchmark's own
    # paging, its bytes taken out; its requests stay (swap clusters cannot be told apart)
    sw = otherio.figures({**a, "swap_outs": 500}, {**b, "swap_outs": 2500}, 2.0)
    assert sw["other_mbps"] == pytest.approx(14.1952 - 8.192 / 2) and sw["other_iops"] == pytest.approx(50)
    assert otherio.figures({**a, "swap_outs": None}, {**b, "swap_outs": 2500}, 2.0)["other_mbps"] == pytest.approx(14.1952)
    # the benchmark's own requests not counted (no cgroup): unknown, not 0
    no_own = {**b, "own": None, "io_counters": "loop9: no count of the benchmark's own"}
    assert math.isnan(otherio.figures(a, no_own, 2.0)["other_mbps"])


def test_devices_without_counters_of_their_own_say_so():
    assert otherio.counted({"kind": "tmpfs"})[1] == "none: tmpfs (no block device)"
    assert otherio.counted({"kind": "delayed", "block_device": "/dev/zram3"})[1].startswith("none: FUSE")
    assert otherio.counted({"kind": "dir", "filesystem": "overlay", "mounted_from": "overlay"})[1] == \
        "none: overlay (no block device)"
    s = otherio.snapshot({"kind": "tmpfs"})
    f = otherio.figures(s, s, 1.0)
    assert math.isnan(f["other_iops"]) and f["io_counters"] == "none: tmpfs (no block device)"


def run(clean, spec, cell, name, writer_seconds=0.0):
    """One real fio run (fio.run_cell, as a workflow job runs it) on ``spec``; with a writer hitting
    the device's file system for ``writer_seconds``, started once the run holds the machine's
    benchmark lock (just before its probe). Its interference record."""
    out = clean / f"{name}.json"
    go = clean / f"{name}.go"
    writer = None
    if writer_seconds:  # started now, outside the run's cgroups, writing once the run is about to begin
        target = json.loads((clean / "d.json").read_text())["target"]
        writer = subprocess.Popen([sys.executable, "-c", WRITER, os.path.join(target, "other"), str(writer_seconds),
                                   str(go)])
    real = quality.wait_before_run

    def go_writer(settings=None):
        go.touch()
        time.sleep(0.5)
        return real(settings)

    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(quality, "wait_before_run", go_writer)
            fio.run_cell("d", spec, clean / "d.json", cell, 0, clean / f"{name}.fio", out)
    finally:
        if writer:
            writer.kill()
            writer.wait()
    return json.loads(quality.sidecar(out).read_text())


@needs_loop
def test_a_real_writer_beside_fio_on_a_real_loop_device(clean):
    """fio's random reads (its file laid out first) and its synced writes alone: no other work
    (under 2 MB/s, a few requests a second at most); beside a writer of 16 MiB files with fsync on
    the same file system: the writer's bytes (hundreds of MB/s here, tens at least)."""
    # the inode tables written at mkfs: a fresh ext4's lazy initialisation writes them in the
    # background after mounting, other work on the device (the kernel's) for its first runs
    spec = {"kind": "loop", "size": "256M", "backing_dir": str(clean), "fstype": "ext4",
            "mkfs_options": ["-E", "lazy_itable_init=0,lazy_journal_init=0"]}
    small = {"type": "fio", "size": "32M", "runtime": 1, "ramp_time": 0, "repeats": 1, "direct": True}
    read = fio.expand_grid({**small, "rw": ["randread"], "block_sizes": ["4K"]}, {"d": spec})[0]
    commit = fio.expand_grid({**small, "rw": ["write"], "block_sizes": ["4K"], "direct": False,
                              "extra": {"fdatasync": 1}}, {"d": spec})[0]
    from benchcast import devices

    try:
        alone = [run(clean, spec, read, "alone"), run(clean, spec, commit, "commit")]
        state = json.loads((clean / "d.json").read_text())
        assert state["created"].get("cpucg_io") is None  # the run's I/O cgroup went with it
        busy = run(clean, spec, read, "busy", writer_seconds=5)
    finally:
        devices.teardown(clean / "d.json")
    for rec in alone:
        assert rec["io_counters"].startswith("loop"), rec
        assert rec["other_mbps"] < 2 and rec["other_iops"] < 50, rec
    assert busy["other_mbps"] > 20 and busy["other_iops"] > 5, busy
    limits = {"other_mbps": 20.0}
    assert quality.spoiled(busy, limits) and not any(quality.spoiled(r, limits) for r in alone)


@needs_root
def test_the_io_cgroup_counts_on_the_disk_and_goes(clean):
    """On a directory of the project disk the run's requests are counted in an I/O cgroup of the
    run's own (a blkio cgroup with a rule that never throttles, on cgroup v1), removed after it."""
    if benchcg.layout() is None:
        pytest.skip("no CPU accounting cgroup")
    (clean / "dev").mkdir()
    spec = {"kind": "dir", "path": str(clean / "dev")}
    cell = fio.expand_grid({"type": "fio", "size": "16M", "runtime": 1, "ramp_time": 0, "repeats": 1,
                            "rw": ["randread"], "block_sizes": ["4K"], "direct": True}, {"d": spec})[0]
    rec = run(clean, spec, cell, "disk")
    state = json.loads((clean / "d.json").read_text())
    if not str(state.get("mounted_from", "")).startswith("/dev/"):
        assert rec["io_counters"].startswith("none"), rec
        return
    assert rec["io_counters"] == os.path.basename(os.path.realpath(state["mounted_from"]))
    assert math.isfinite(rec["other_mbps"]) and rec["other_mbps"] >= 0
    assert not list(benchcg.cgroups.CGROUP_ROOT.joinpath("blkio").glob("benchcast-cpu-d-*"))
