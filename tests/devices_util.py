"""Helpers for the device, fio and safety tests: what a test left behind, and skip reasons."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchcast.devices import zram as zram_kind

IS_ROOT = os.geteuid() == 0
HAS_ZRAM = (zram_kind.CONTROL / "hot_add").exists()
HAS_LOOP = os.path.exists("/dev/loop-control")
HAS_BLKIO_V1 = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device").exists()
HAS_FUSE = os.path.exists("/dev/fuse") and subprocess.run(
    ["sh", "-c", "command -v cc && pkg-config --exists fuse3"], capture_output=True).returncode == 0

#: Tests that provision real devices carry the `root` marker (conftest skips them when not root;
#: `pytest -m "not root"` leaves them out); the kind-specific ones also need the kernel's driver.
needs_root = pytest.mark.root


def _root_and(have: bool, reason: str):
    def mark(test):
        return pytest.mark.root(pytest.mark.skipif(not have, reason=reason)(test))

    return mark


needs_zram = _root_and(HAS_ZRAM, "needs a kernel with zram (zram-control)")
needs_loop = _root_and(HAS_LOOP, "needs the loop driver")
needs_fuse = _root_and(HAS_FUSE, "needs FUSE (/dev/fuse), cc and libfuse3-dev")
needs_blkio = pytest.mark.skipif(not HAS_BLKIO_V1, reason="needs cgroup v1 blkio throttling")


def mounts_under(path) -> list[str]:
    path = os.path.realpath(path)
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            target = line.split()[4]
            if target == path or target.startswith(path + "/"):
                out.append(target)
    return out


def findmnt_target(path) -> dict | None:
    proc = subprocess.run(["findmnt", "-J", "-M", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    import json

    return json.loads(proc.stdout)["filesystems"][0]


def losetup_all() -> str:
    return subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout


def zram_devices() -> dict[str, str]:
    """zram devices and their disksize."""
    return {p.name: (p / "disksize").read_text().strip() for p in Path("/sys/block").glob("zram*")}


def benchcast_cgroups() -> list[str]:
    """benchcast's blkio cgroups and the memory cgroups made inside this process's own."""
    from benchcast.devices import benchcg, memlimit

    root = Path("/sys/fs/cgroup/blkio")
    found = [p.name for p in root.glob("benchcast-*")] if root.exists() else []
    ver = memlimit.version()
    if ver:
        found += [str(p) for p in memlimit.own_cgroup(ver).glob("benchcast-mem-*")]
    found += [str(p) for parent in (benchcg.layout() or {}).values() if isinstance(parent, Path)
              for p in parent.glob("benchcast-cpu-*")]
    return sorted(found)


def swaps() -> list[str]:
    """The active swap areas."""
    from benchcast.devices import swap

    return sorted(s["filename"] for s in swap.active())


def snapshot(tmp_path) -> dict:
    return {"mounts": mounts_under(tmp_path), "loops": losetup_all(), "zram": zram_devices(),
            "cgroups": benchcast_cgroups(), "swaps": swaps()}


def assert_clean(before: dict, tmp_path) -> None:
    """Nothing the test made is left: no mounts under tmp_path, loops, zram devices, cgroups."""
    after = snapshot(tmp_path)
    assert after["mounts"] == [], f"left mounted: {after['mounts']}"
    assert after["loops"] == before["loops"], f"loop devices left: {after['loops']}"
    assert after["zram"] == before["zram"], f"zram devices left/changed: {after['zram']} vs {before['zram']}"
    assert after["cgroups"] == before["cgroups"], f"cgroups left: {after['cgroups']}"
    assert after["swaps"] == before["swaps"], f"swap left or changed: {after['swaps']} vs {before['swaps']}"


@pytest.fixture
def clean(tmp_path):
    """Yields tmp_path; after the test, checks that nothing is left and cleans up if it was."""
    before = snapshot(tmp_path)
    yield tmp_path
    try:
        assert_clean(before, tmp_path)
    finally:
        from benchcast import devices

        for state in tmp_path.rglob("*.json"):
            try:
                devices.teardown(state)
            except Exception:
                pass
