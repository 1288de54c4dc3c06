"""The benchmark's own CPU cgroup: every measuring job runs its benchmark (fio, the database server,
the YCSB JVM, the out-of-core program) inside a cgroup of its own, made inside the cgroup this
process already is in, so that the CPU time of the run's own processes can be told apart from the
rest of the machine's (:mod:`benchcast.sources.run.quality`), and so that the run can be given a CPU weight.

cgroup v1 keeps ``cpuacct`` (accounting) and ``cpu`` (``cpu.shares``) in one hierarchy or in two
(this machine mounts them apart); one cgroup is made in each distinct hierarchy. cgroup v2: one
cgroup with the ``cpu`` controller (``cpu.stat`` usage, ``cpu.weight``). Each path is recorded in
the device's state record (``created.cpucg``, ``created.cpucg_weight``) before it exists, so device
teardown (and ``teardown-all`` after a killed run) removes it like the memory cgroup
(:mod:`.memlimit`); nothing else is ever removed.

The I/O the benchmark's processes send to the measured block device is counted in a cgroup of
their own too (:func:`count_io`, ``created.cpucg_io``), so that the device's counters less it are
other work on the device (:mod:`benchcast.sources.run.otherio`): cgroup v1 counts a cgroup's requests only
while it has a throttle rule on the device, so it gets one that never throttles (:data:`NO_LIMIT`
bytes per second); cgroup v2 counts them in the CPU cgroup once its parent enables ``io``. A
throttled device's benchmark runs in the tier's own cgroup, which counts them already.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import BenchcastError
from . import base, blockinfo, cgroups, state_record

KEYS = ("cpucg", "cpucg_weight", "cpucg_io")
#: The throttle rule that makes cgroup v1 count a cgroup's requests to a device: 1 TiB/s of reads,
#: which no device here reaches.
NO_LIMIT = 1 << 40


def layout() -> dict | None:
    """Where the cgroups go: ``{"version", "acct", "weight"}`` (parent directories; ``weight`` is
    None when it is the same hierarchy as ``acct``), or None when no CPU accounting is mounted."""
    acct = cgroups.CGROUP_ROOT / "cpuacct"
    if (acct / "cpuacct.usage").exists():
        parent = cgroups.own_cgroup("cpuacct", 1)
        cpu = cgroups.CGROUP_ROOT / "cpu"
        weight = None
        if (cpu / "cpu.shares").exists() and cpu.resolve() != acct.resolve():
            weight = cgroups.own_cgroup("cpu", 1)
        return {"version": 1, "acct": parent, "weight": weight}
    if cgroups.cgroup_v2_root("cpu"):
        return {"version": 2, "acct": cgroups.own_cgroup("cpu", 2), "weight": None}
    return None


def create(rec: state_record.Recorder, cpu_shares: int | None = None) -> list[Path]:
    """Make the benchmark's CPU cgroup(s) (recorded before they exist); with ``cpu_shares``, set its
    weight (v1 ``cpu.shares``, 1024 = the default; v2 ``cpu.weight`` scaled, 100 = the default).
    Returns the cgroups to join (accounting first); [] when this machine has no CPU accounting or
    does not let this process make cgroups (a read-only cgroup file system in a container): the
    run is then measured as before, its interference records without ``other_cpu``."""
    where = layout()
    if where is None or not base.is_root():
        return []
    made = []
    for key, parent in zip(KEYS, (where["acct"], where["weight"])):
        if parent is None:
            continue
        cg = parent / f"benchcast-cpu-{rec.device}-{os.getpid()}"
        if cg.exists():
            raise rec.error(key, f"{cg} already exists")
        rec.set(key, str(cg))
        try:
            if where["version"] == 2:
                ctl = parent / "cgroup.subtree_control"
                if "cpu" not in ctl.read_text().split():
                    ctl.write_text("+cpu")
            cg.mkdir()
        except OSError as exc:
            rec.drop(key)
            rec.note(f"no CPU cgroup for the benchmark: {cg}: {exc.strerror}")
            if not made:
                return []
            break
        made.append(cg)
    if cpu_shares is not None:
        set_weight(rec, made[-1], where["version"], cpu_shares)
    return made + count_io(rec, where, made)


def counted_device(state: dict) -> str | None:
    """The block device whose requests the benchmark's own cgroup counts (:func:`count_io`): the
    device's own or its file system's; None for a tmpfs or a FUSE device (no block device of its
    own) and for a throttled device, whose tier cgroup counts its benchmark's requests."""
    if state.get("kind") in ("throttled", "delayed"):
        return None
    dev = blockinfo.device_of(state)
    return dev if dev and os.path.exists(dev) else None


def count_io(rec: state_record.Recorder, where: dict, made: list[Path]) -> list[Path]:
    """Count what the benchmark's processes send to the measured block device: cgroup v1, a blkio
    cgroup of their own with a rule that never throttles (:data:`NO_LIMIT`), to join beside
    ``made``; v2, ``io`` enabled for the CPU cgroup of ``made``. Returns the cgroups to join more
    ([] when there is no block device, no blkio hierarchy, or the kernel refuses)."""
    dev = counted_device(rec.state)
    if dev is None or not made:
        return []
    mm = blockinfo.majmin(dev)
    if where["version"] == 2:
        try:
            ctl = made[0].parent / "cgroup.subtree_control"
            if "io" not in ctl.read_text().split():
                ctl.write_text("+io")
        except OSError as exc:
            rec.note(f"no I/O count for the benchmark: {ctl}: {exc.strerror}")
        return []
    root = cgroups.CGROUP_ROOT / "blkio"
    if not (root / "blkio.throttle.read_bps_device").exists():
        return []
    cg = cgroups.own_cgroup("blkio", 1) / f"benchcast-cpu-{rec.device}-{os.getpid()}"
    if cg.exists():
        raise rec.error("cpucg_io", f"{cg} already exists")
    rec.set("cpucg_io", str(cg))
    try:
        cg.mkdir()
        (cg / "blkio.throttle.read_bps_device").write_text(f"{mm} {NO_LIMIT}")
    except OSError as exc:
        rec.note(f"no I/O count for the benchmark: {cg}: {exc.strerror}")
        errors: list = []
        if cgroups.cgroup_remove(str(cg), errors):
            rec.drop("cpucg_io")
        return []
    return [cg]


def io_cgroup(state: dict) -> Path | None:
    """The cgroup that counts the benchmark's requests to the measured device, None without one."""
    created = state.get("created", {})
    if created.get("cpucg_io"):
        return Path(created["cpucg_io"])
    cpu = created.get("cpucg")
    if cpu and (Path(cpu) / "io.stat").exists():
        return Path(cpu)
    return None


def set_weight(rec: state_record.Recorder, cg: Path, version: int, cpu_shares: int) -> None:
    fname, value = ("cpu.shares", cpu_shares) if version == 1 else ("cpu.weight", max(1, min(10000, cpu_shares * 100 // 1024)))
    try:
        (cg / fname).write_text(str(value))
    except OSError as exc:
        raise rec.error("cpucg", f"writing {value} to {cg / fname}: {exc.strerror}") from None


def adopt(made: list[Path], pids: list[int]) -> list[tuple[Path, int]]:
    """Move the device's own server processes (a FUSE server: its CPU time serves the benchmark's
    requests, it is part of the device) into the benchmark's cgroups ``made``, so that their CPU
    counts as the run's own and shares its weight, not as the rest of the machine's. Returns where
    each was, for :func:`give_back`; a process that is gone or cannot move is left where it is."""
    moved = []
    version = 2 if made and (made[0] / "cgroup.controllers").exists() else 1
    for cg in made:
        controller = "cpu" if version == 2 else cg.relative_to(cgroups.CGROUP_ROOT).parts[0]
        for pid in pids:
            try:
                was = cgroups.own_cgroup(controller, version, pid)
                (cg / "cgroup.procs").write_text(str(pid))
            except (OSError, BenchcastError):
                continue
            moved.append((was, pid))
    return moved


def give_back(moved: list[tuple[Path, int]]) -> None:
    """Put the processes :func:`adopt` moved back where they were (a server outlives the job)."""
    while moved:
        was, pid = moved.pop()
        try:
            (was / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass


def usage_ns(cg) -> int | None:
    """CPU time (nanoseconds) the processes of cgroup ``cg`` used so far, None when unreadable."""
    cg = Path(cg)
    try:
        if (cg / "cpuacct.usage").exists():
            return int((cg / "cpuacct.usage").read_text())
        for line in (cg / "cpu.stat").read_text().splitlines():
            key, val = line.split()
            if key == "usage_usec":
                return int(val) * 1000
    except (OSError, ValueError):
        return None
    return None


def remove(rec: state_record.Recorder, errors: list) -> None:
    """Remove the recorded CPU cgroups (:func:`benchcast.devices.cgroups.cgroup_remove`, which moves
    leftover processes out first) and drop each from the record once gone."""
    for key in KEYS:
        path = rec.created.get(key)
        if path and cgroups.cgroup_remove(path, errors):
            rec.drop(key)
