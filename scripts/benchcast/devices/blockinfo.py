"""Facts about a block device: its major:minor, the kernel's I/O counters, the signatures on it
and why it is in use (the safety checks before the workflow touches a real disk)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import BenchcastError
from . import base
from .mounts import mounts_of_source


def majmin(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


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
