"""A memory limit for one benchmark: a memory cgroup (v1 ``memory.limit_in_bytes``, v2
``memory.max``) made inside the cgroup this process already is in, so any limit above it still
holds. The benchmark's processes (database server, YCSB client) start inside it and their page
cache counts against the limit, so a data set larger than the limit is read from the device.

The cgroup is recorded in the device's state record (``created.memcg``) before anything enters it,
so device teardown (and ``teardown-all`` after a killed run) removes it like any resource the
workflow made; nothing else is ever removed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import BenchcastError
from . import base

V1_ROOT = Path("/sys/fs/cgroup/memory")


def version() -> int | None:
    """1 when the v1 memory controller is mounted, 2 when cgroup v2 has it, None otherwise."""
    if (V1_ROOT / "memory.limit_in_bytes").exists():
        return 1
    for entry in base.findmnt("-t", "cgroup2"):
        try:
            if "memory" in Path(entry["target"], "cgroup.controllers").read_text().split():
                return 2
        except OSError:
            pass
    return None


def own_cgroup(ver: int) -> Path:
    """The memory cgroup directory this process is in now."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        num, controllers, path = line.split(":", 2)
        if ver == 1 and "memory" in controllers.split(","):
            return V1_ROOT / path.lstrip("/")
        if ver == 2 and num == "0":
            root = next(Path(e["target"]) for e in base.findmnt("-t", "cgroup2"))
            return root / path.lstrip("/")
    raise BenchcastError("memory limit: cannot tell which memory cgroup this process is in")


def create(rec: base.Recorder, limit: int) -> Path:
    """Make a memory cgroup limited to ``limit`` bytes, recorded as ``created.memcg`` before it exists."""
    ver = version()
    if ver is None:
        raise base.UnavailableError(f"device {rec.device}: memory limit: no memory cgroup controller here")
    base.ensure_root(rec.device, "memory limit")
    parent = own_cgroup(ver)
    if ver == 2:
        ctl = parent / "cgroup.subtree_control"
        if "memory" not in ctl.read_text().split():
            ctl.write_text("+memory")
    cg = parent / f"benchcast-mem-{rec.device}-{os.getpid()}"
    if cg.exists():
        raise rec.error("memcg", f"{cg} already exists")
    rec.set("memcg", str(cg))
    cg.mkdir()
    fname = "memory.limit_in_bytes" if ver == 1 else "memory.max"
    try:
        (cg / fname).write_text(str(limit))
    except OSError as exc:
        raise rec.error("memcg", f"writing {limit} to {cg / fname}: {exc.strerror}") from None
    rec.update(memory_limit=limit)
    return cg


def enter(cg: Path) -> Path:
    """Move this process (and so the children it starts) into ``cg``; return where it was."""
    before = own_cgroup(1 if str(cg).startswith(str(V1_ROOT)) else 2)
    Path(cg, "cgroup.procs").write_text(str(os.getpid()))
    return before


def leave(before: Path) -> None:
    Path(before, "cgroup.procs").write_text(str(os.getpid()))


def usage(cg) -> dict:
    """Peak and current usage and the limit hits, as the cgroup counts them."""
    cg = Path(cg)
    if (cg / "memory.max_usage_in_bytes").exists():
        files = {"peak": "memory.max_usage_in_bytes", "current": "memory.usage_in_bytes", "failcnt": "memory.failcnt"}
    else:
        files = {"peak": "memory.peak", "current": "memory.current"}
    return {k: int((cg / f).read_text()) for k, f in files.items() if (cg / f).exists()}


def remove(rec: base.Recorder, errors: list) -> None:
    """Remove the recorded memory cgroup: move any process a killed run left there to the parent,
    then rmdir; drop it from the record once gone."""
    path = rec.created.get("memcg")
    if not path:
        return
    p = Path(path)
    err = None
    for _ in range(5):
        if not p.exists():
            break
        try:
            pids = (p / "cgroup.procs").read_text().split()
        except OSError:
            pids = []
        for pid in pids:
            try:
                (p.parent / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        try:
            p.rmdir()
        except OSError as exc:
            err = exc
            time.sleep(0.1)
    if p.exists():
        errors.append(f"cannot remove memory cgroup {path}: {err.strerror if err else 'busy'}")
        return
    rec.drop("memcg")
