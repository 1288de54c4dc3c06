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
from pathlib import Path

from . import base, cgroups, state_record

V1_ROOT = Path("/sys/fs/cgroup/memory")


def version() -> int | None:
    """1 when the v1 memory controller is mounted, 2 when cgroup v2 has it, None otherwise."""
    if (V1_ROOT / "memory.limit_in_bytes").exists():
        return 1
    return 2 if cgroups.cgroup_v2_root("memory") else None


def own_cgroup(ver: int) -> Path:
    """The memory cgroup directory this process is in now."""
    return cgroups.own_cgroup("memory", ver)


def create(rec: state_record.Recorder, limit: int) -> Path:
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


def enter(cg) -> Path:
    """Move this process (and so the children it starts) into ``cg``; return the memory cgroup it
    was in, to go back to with :func:`benchcast.devices.cgroups.join_cgroup`."""
    before = own_cgroup(version())
    cgroups.join_cgroup(cg)
    return before


def joiner(cg):
    """A ``preexec_fn`` that moves the child into ``cg`` before it execs: the benchmark program alone
    lives under the limit, not the job that starts it."""
    procs = str(Path(cg) / "cgroup.procs")

    def join():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    return join


def usage(cg) -> dict:
    """Peak and current usage and the limit hits, as the cgroup counts them."""
    cg = Path(cg)
    if (cg / "memory.max_usage_in_bytes").exists():
        files = {"peak": "memory.max_usage_in_bytes", "current": "memory.usage_in_bytes", "failcnt": "memory.failcnt"}
    else:
        files = {"peak": "memory.peak", "current": "memory.current"}
    return {k: int((cg / f).read_text()) for k, f in files.items() if (cg / f).exists()}


def oom_kills(cg) -> int | None:
    """How many processes the memory cgroup's OOM killer has killed in ``cg`` (v1
    ``memory.oom_control``, v2 ``memory.events``: ``oom_kill N``), or None when it does not say."""
    for name in ("memory.events", "memory.oom_control"):
        try:
            text = (Path(cg) / name).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            key, _, val = line.partition(" ")
            if key == "oom_kill" and val.strip().isdigit():
                return int(val)
    return None


def stat(cg) -> dict[str, int]:
    """The cgroup's own event and page counters (``memory.stat``: pgfault, pgmajfault,
    workingset_refault_anon ...; v1's hierarchical ``total_*`` lines left out)."""
    out = {}
    for line in (Path(cg) / "memory.stat").read_text().splitlines():
        name, _, value = line.partition(" ")
        if value and not name.startswith("total_"):
            out[name] = int(value)
    return out


def remove(rec: state_record.Recorder, errors: list) -> None:
    """Remove the recorded memory cgroup (:func:`benchcast.devices.cgroups.cgroup_remove`) and drop it
    from the record once gone."""
    path = rec.created.get("memcg")
    if path and cgroups.cgroup_remove(path, errors):
        rec.drop("memcg")
