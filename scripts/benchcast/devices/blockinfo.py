"""Facts about a block device: its major:minor, the kernel's I/O counters, the signatures on it
and why it is in use (the safety checks before the workflow touches a real disk)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import BenchcastError
from . import base
from .mounts import mounts_of_source


def majmin_of(dev_t: int) -> str:
    """A device number as ``major:minor`` (an ``st_rdev`` of a device node, an ``st_dev`` of a file)."""
    return f"{os.major(dev_t)}:{os.minor(dev_t)}"


def majmin(dev: str) -> str:
    return majmin_of(os.stat(dev).st_rdev)


def device_of(state: dict) -> str | None:
    """The block device below a provisioned device (``state``): its own (zram, loop, a throttled
    tier's backing device) or, for a directory, its file system's; None for a tmpfs or a FUSE
    file system (no block device of their own)."""
    dev = state.get("block_device")
    if not dev and str(state.get("mounted_from", "")).startswith("/dev/"):
        dev = state["mounted_from"]
    return dev or None


def _read_ahead_files(path) -> list[Path]:
    """Where the readahead window of the file system under ``path`` is kept: its backing device
    info, its device's queue, for a partition its disk's queue (none for no path)."""
    try:
        st = os.stat(path)
    except (OSError, TypeError):
        return []
    mm = majmin_of(st.st_dev)
    dev = Path(f"/sys/dev/block/{mm}")
    return [Path(f"/sys/class/bdi/{mm}/read_ahead_kb"), dev / "queue" / "read_ahead_kb",
            dev.resolve().parent / "queue" / "read_ahead_kb"]


def read_ahead_kb(path) -> int | None:
    """The readahead window (KiB) the kernel uses for files under ``path``: its file system's
    backing device's ``read_ahead_kb`` (``/sys/class/bdi/<major:minor>``: a disk, a loop or zram
    device, a FUSE mount; for a partition its disk's ``queue``); None where it has none (a tmpfs)
    or for no path. A mapped file's faults read that much ahead: the pages a pass over a mapped
    file reads depend on it as much as on the medium."""
    for f in _read_ahead_files(path) if path else []:
        try:
            return int(f.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return None


def set_read_ahead_kb(path, kb: int, what: str = "device") -> int:
    """Set the readahead window of the file system under ``path`` (a device the workflow created)
    to ``kb`` KiB; return what the kernel then reports. Raises BenchcastError when it has no window
    (a tmpfs) or keeps another value, its message starting with ``what``."""
    f = next((f for f in _read_ahead_files(path) if f.exists()), None)
    if f is None:
        raise BenchcastError(f"{what}: read_ahead_kb: {path} has no readahead window of its own")
    try:
        f.write_text(f"{int(kb)}\n")
    except OSError as exc:
        raise BenchcastError(f"{what}: read_ahead_kb: {f}: {exc.strerror}") from None
    got = read_ahead_kb(path)
    if got != int(kb):
        raise BenchcastError(f"{what}: read_ahead_kb: {f} reads {got} after {kb} was written")
    return got


def block_counters(dev: str) -> dict[str, int] | None:
    """The kernel's I/O counters of block device ``dev`` since it appeared (``/sys/class/block/<name>/stat``:
    reads, read_bytes, writes, write_bytes, syncs = flush requests); None when it has none."""
    name = os.path.basename(os.path.realpath(dev))
    try:
        f = [int(x) for x in Path(f"/sys/class/block/{name}/stat").read_text().split()]
    except (OSError, ValueError):
        return None
    if len(f) < 11:
        return None
    return {"reads": f[0], "read_bytes": f[2] * 512, "writes": f[4], "write_bytes": f[6] * 512,
            "syncs": f[15] if len(f) >= 17 else 0}


def cgroup_io(cg, mm: str) -> dict[str, int] | None:
    """The requests and bytes the processes of cgroup ``cg`` sent to the block device ``mm``
    (major:minor) so far (reads, read_bytes, writes, write_bytes): cgroup v1
    ``blkio.throttle.io_serviced`` and ``io_service_bytes`` (counted only while the cgroup has a
    throttle rule on that device), v2 ``io.stat``; None when the cgroup or its statistics are gone.
    Only bios issued by the cgroup's own processes count: a file system's journal thread and
    background writeback are not theirs."""
    cg = Path(cg)
    try:
        if (cg / "blkio.throttle.io_serviced").exists():
            out = {"reads": 0, "writes": 0, "read_bytes": 0, "write_bytes": 0}
            for fname, suffix in (("blkio.throttle.io_serviced", "s"), ("blkio.throttle.io_service_bytes", "_bytes")):
                for f in (line.split() for line in (cg / fname).read_text().splitlines()):
                    if len(f) == 3 and f[0] == mm and f[1] in ("Read", "Write"):
                        out[f"{f[1].lower()}{suffix}"] = int(f[2])
            return out
        for line in (cg / "io.stat").read_text().splitlines():
            f = line.split()
            if f and f[0] == mm:
                kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
                return {"reads": int(kv.get("rios", 0)), "writes": int(kv.get("wios", 0)),
                        "read_bytes": int(kv.get("rbytes", 0)), "write_bytes": int(kv.get("wbytes", 0))}
        return {"reads": 0, "writes": 0, "read_bytes": 0, "write_bytes": 0}
    except (OSError, ValueError):
        return None


JBD2 = Path("/proc/fs/jbd2")


def journal(dev: str) -> dict[str, int] | None:
    """The ext4/jbd2 journal of the file system on block device ``dev``: transactions committed so
    far (``commits``) and the blocks logged per transaction on average (``logged_blocks``), from
    ``/proc/fs/jbd2/<name>-<inode>/info``; None when the device has no such journal."""
    name = os.path.basename(os.path.realpath(dev))
    for info in sorted(JBD2.glob(f"{name}-*/info")):
        try:
            lines = info.read_text().splitlines()
        except OSError:
            return None
        logged = [int(line.split()[0]) for line in lines if line.strip().endswith("logged blocks per transaction")]
        try:
            return {"commits": int(lines[0].split()[0]), "logged_blocks": logged[0] if logged else 0}
        except (IndexError, ValueError):
            return None
    return None


def signatures(dev: str) -> list[str]:
    """Filesystem / partition-table / RAID signatures on ``dev`` (``blkid -p`` and ``wipefs -n``)."""
    found = []
    proc = base.run(["blkid", "-p", "-o", "export", dev], f"blkid {dev}", check=False)
    if proc.returncode == 0:
        kv = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
        found.append(kv.get("TYPE") or kv.get("PTTYPE") or "unknown signature")
    elif proc.returncode not in (2,):
        raise BenchcastError(f"blkid {dev}: exit {proc.returncode}: {proc.stderr.strip()}")
    proc = base.run(["wipefs", "-n", "-J", dev], f"wipefs {dev}", check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        for sig in json.loads(proc.stdout).get("signatures", []):
            found.append(sig.get("type", "unknown signature"))
    return sorted(set(found))


def in_use(dev: str) -> str | None:
    """Why block device ``dev`` is in use (mounted, has holders, mounted partitions), or None."""
    mounted = mounts_of_source(dev)
    if mounted:
        return f"mounted at {mounted[0]}"
    name = os.path.basename(os.path.realpath(dev))
    holders = Path(f"/sys/class/block/{name}/holders")
    if holders.is_dir() and any(holders.iterdir()):
        return f"held by {', '.join(p.name for p in holders.iterdir())}"
    for part in Path(f"/sys/class/block/{name}").glob(f"{name}*"):
        pm = mounts_of_source(f"/dev/{part.name}")
        if pm:
            return f"partition {part.name} is mounted at {pm[0]}"
    try:  # O_EXCL on a block device fails with EBUSY while anyone (a mount, dm, md) holds it
        fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
        os.close(fd)
    except OSError as exc:
        return f"cannot be opened exclusively ({exc.strerror})"
    return None
