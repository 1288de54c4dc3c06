"""blockdev: an explicitly named block device or partition. Formatted and mounted only when the
config marks it ``disposable: true``; even then refused while it is mounted or held anywhere, and
refused while it holds any filesystem / partition-table signature unless ``overwrite: true``.
Teardown unmounts it; the filesystem made on it stays."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import base, blockinfo, mounts, specs, state_record



def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)
    specs.check_filesystem(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "blockdev")
    path = spec["path"]
    try:
        st = os.stat(path)
    except OSError:
        raise base.UnavailableError(f"device {device_id}: path: {path} does not exist") from None
    if not stat.S_ISBLK(st.st_mode):
        raise base.BenchcastError(f"device {device_id}: path: {path} is not a block device")


def _disk_of(majmin: str) -> str:
    """The whole disk a block device (major:minor) belongs to: itself, or a partition's parent."""
    sysd = Path(f"/sys/dev/block/{majmin}")
    if (sysd / "partition").exists():
        return (sysd.resolve().parent / "dev").read_text().strip()
    return majmin


def plan_refusal(device_id: str, spec: dict) -> str | None:
    """What planning can already refuse, without root and without touching the device: not marked
    disposable; the disk of the root file system (or a partition of it); a device that is mounted
    or used as swap. None when planning finds nothing (the job checks again before formatting).
    A path that does not exist here is left to the job (on a cluster it exists on the node)."""
    path = spec["path"]
    if spec.get("disposable") is not True:
        return (f"{path} is not marked disposable: true; refusing to format or write-test it "
                f"(use kind dir for a directory on an existing filesystem)")
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return f"{path} is not a block device"
    mine = blockinfo.majmin_of(st.st_rdev)
    root = blockinfo.majmin_of(os.stat("/").st_dev)
    if mine in (root, _disk_of(root)):
        return f"{path} holds the root file system (or is its disk); refusing it even with disposable: true"
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            f = line.split()
            if f[2] == mine or _disk_of(f[2]) == mine:
                return f"{path} is mounted ({f[4]}); refusing to format it"
    with open("/proc/swaps") as fh:
        for line in list(fh)[1:]:
            name = line.split()[0]
            try:
                same = os.path.realpath(name) == os.path.realpath(path)
                if same or blockinfo.majmin_of(os.stat(name).st_rdev) == mine:
                    return f"{path} is in use as swap; refusing to format it"
            except OSError:
                continue
    return None


def safety_refusal(device_id: str, spec: dict) -> str | None:
    """Why the workflow may not format ``spec['path']``, or None when it may."""
    path = spec["path"]
    if spec.get("disposable") is not True:
        return (f"{path} is not marked disposable: true; refusing to format or write-test it "
                f"(use kind dir for a directory on an existing filesystem)")
    busy = blockinfo.in_use(path)
    if busy:
        return f"{path} is in use ({busy}); refusing to format it"
    sigs = blockinfo.signatures(path)
    if sigs and spec.get("overwrite") is not True:
        return (f"{path} holds a signature ({', '.join(sigs)}); refusing to format it "
                f"without overwrite: true")
    return None


def provision(rec: state_record.Recorder, spec: dict) -> None:
    available(rec.device, spec)
    why = safety_refusal(rec.device, spec)
    if why:
        raise rec.error("disposable" if "disposable" in why else "path", why)
    dev = os.path.realpath(spec["path"])
    rec.set("formattable", dev)
    mounts.format_and_mount(rec, dev, spec)
    rec.update(block_device=dev)


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """Nothing to undo on the device itself: forget that it was formattable."""
    rec.drop("formattable")


def teardown(rec: state_record.Recorder) -> list[str]:
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    c = state.get("created", {})
    e = mounts.mount_entry(c["mount"]) if "mount" in c else None
    return e is not None and os.path.realpath(e["source"]) == c.get("formattable")


def model(state: dict) -> str:
    dev = state.get("block_device")
    if not dev:
        return "blockdev"
    proc = base.run(["lsblk", "-dn", "-o", "MODEL", dev], "lsblk", check=False)
    return (proc.stdout.strip() or os.path.basename(dev))
