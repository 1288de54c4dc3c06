"""Memory limits for benchmarks (benchcast.devices.memlimit): a real memory cgroup made inside this
process's own, entered by the job and its children, holding their page cache to the limit, and
removed after success, failure, SIGTERM, and SIGKILL + teardown-all."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchcast import devices
from benchcast.devices import memlimit
from devices_util import clean, findmnt_target, needs_root  # noqa: F401

HAS_MEMCG = memlimit.version() is not None
needs_memcg = pytest.mark.skipif(not HAS_MEMCG, reason="needs a memory cgroup controller")
MB = 1 << 20


def cgroup_of_self() -> Path:
    return memlimit.own_cgroup(memlimit.version())


def state_of(path) -> dict:
    return json.loads(Path(path).read_text())


@needs_root
@needs_memcg
def test_limit_made_entered_by_children_recorded_and_removed(clean):
    home = cgroup_of_self()
    sp = clean / "d.json"
    spec = {"kind": "dir", "path": str(clean)}
    with devices.on_device("d", spec, sp, memory_limit=24 * MB) as st:
        cg = Path(state_of(sp)["created"]["memcg"])
        assert cg.parent == home and cg.name.startswith("benchcast-mem-d-")
        assert cgroup_of_self() == cg
        limit = cg / ("memory.limit_in_bytes" if memlimit.version() == 1 else "memory.max")
        assert int(limit.read_text()) == 24 * MB
        child = subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True, text=True).stdout
        assert cg.name in child
        # a child writes and reads 64 MB through the page cache: the cgroup holds it to 24 MB
        data = Path(st["target"], "big")
        subprocess.run(["dd", "if=/dev/zero", f"of={data}", "bs=1M", "count=64", "status=none"], check=True)
        subprocess.run(["cat", str(data)], stdout=subprocess.DEVNULL, check=True)
        use = memlimit.usage(cg)
        assert use["peak"] <= 24 * MB, use
    assert not cg.exists()
    assert cgroup_of_self() == home
    assert "memcg" not in state_of(sp)["created"]
    devices.teardown(sp)


@needs_root
@needs_memcg
def test_failure_inside_removes_the_limit_and_tears_the_device_down(clean):
    sp = clean / "r.json"
    home = cgroup_of_self()
    with pytest.raises(RuntimeError, match="benchmark failed"):
        with devices.on_device("r", {"kind": "tmpfs", "size": "16M"}, sp, memory_limit=64 * MB):
            cg = Path(state_of(sp)["created"]["memcg"])
            raise RuntimeError("benchmark failed")
    assert not cg.exists() and cgroup_of_self() == home
    st = state_of(sp)
    assert st["status"] == "torn_down" and st["created"] == {}


JOB = textwrap.dedent("""
    import sys, time
    from benchcast import devices
    with devices.on_device("r", {"kind": "tmpfs", "size": "16M"}, sys.argv[1], memory_limit=64 << 20) as st:
        print("ready", flush=True)
        time.sleep(60)
""")


def start_job(tmp_path, sp):
    proc = subprocess.Popen([sys.executable, "-c", JOB, str(sp)], stdout=subprocess.PIPE, text=True,
                            env={"PYTHONPATH": str(Path(__file__).parents[1] / "scripts"), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"})
    assert proc.stdout.readline().strip() == "ready"
    return proc, Path(state_of(sp)["created"]["memcg"])


@needs_root
@needs_memcg
def test_sigterm_removes_the_limit_and_the_device(clean):
    sp = clean / "r.json"
    proc, cg = start_job(clean, sp)
    assert cg.exists() and str(proc.pid) in (cg / "cgroup.procs").read_text().split()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert not cg.exists()
    st = state_of(sp)
    assert st["status"] == "torn_down" and st["created"] == {}


@needs_root
@needs_memcg
def test_sigkill_leaves_a_recorded_limit_that_teardown_all_removes(clean):
    sp = clean / "r.json"
    proc, cg = start_job(clean, sp)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert cg.exists(), "nothing ran after SIGKILL: the cgroup must still be there"
    mnt = state_of(sp)["target"]
    devices.teardown_all(clean)
    assert not cg.exists() and findmnt_target(mnt) is None
    assert state_of(sp)["created"] == {}
