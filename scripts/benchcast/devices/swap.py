"""Swap on the device under test, for one out-of-core job: a swap file in the device's directory
(written out in full, ``mkswap``, ``swapon -p PRIORITY``), so that the anonymous memory a program
cannot keep under its memory limit is paged to and from this device.

The file is recorded in the device's state (``created.swapfile``) before it exists, so the job
(after it ends, fails or gets SIGTERM), device teardown and ``teardown-all`` (after SIGKILL) turn it
off and remove it. Swap the workflow did not create is never touched: :func:`others` lists it, so a
job can refuse to run (pages could go there) or say so.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import base, mounts, state_record

PROC_SWAPS = Path("/proc/swaps")
#: Filesystems that cannot hold a swap file (tmpfs pages are memory; FUSE has no block mapping).
NO_SWAPFILE = {"tmpfs", "ramfs", "fuse", "fuseblk"}


def active() -> list[dict]:
    """The active swap areas (/proc/swaps): filename, type, size and used in bytes, priority."""
    rows = []
    for line in PROC_SWAPS.read_text().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 5:
            name = parts[0].replace("\\040", " ")
            rows.append({"filename": name, "type": parts[1], "size": int(parts[2]) * 1024,
                         "used": int(parts[3]) * 1024, "priority": int(parts[4])})
    return rows


def others(own=()) -> list[dict]:
    """Active swap areas that are not ``own`` (paths): swap this workflow did not make."""
    mine = {os.path.realpath(p) for p in own}
    return [s for s in active() if os.path.realpath(s["filename"]) not in mine]


def is_active(path) -> bool:
    real = os.path.realpath(path)
    return any(os.path.realpath(s["filename"]) == real for s in active())


def create(rec: state_record.Recorder, directory, size: int, priority: int = 10) -> Path:
    """Make and turn on a swap file of ``size`` bytes in ``directory`` (the device's target),
    recorded as ``created.swapfile`` before it exists."""
    base.ensure_root(rec.device, "swap")
    directory = Path(directory)
    found = mounts.findmnt("-T", str(directory))  # the filesystem the directory is on
    fstype = found[0].get("fstype", "") if found else ""
    if fstype.split(".")[0] in NO_SWAPFILE:
        raise base.UnavailableError(f"device {rec.device}: swap: a swap file cannot live on {fstype}")
    path = directory / f"benchcast-swap-{os.getpid()}"
    if path.exists():
        raise rec.error("swapfile", f"{path} already exists")
    rec.set("swapfile", str(path))
    pages = max(10, size // 4096)  # mkswap wants at least 10 pages
    with open(path, "wb") as f:  # written out, not sparse: swapon refuses files with holes
        os.fchmod(f.fileno(), 0o600)
        chunk = b"\0" * (1 << 20)
        left = pages * 4096
        while left:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())
    base.run(["mkswap", path], f"device {rec.device}: swap")
    base.run(["swapon", "-p", str(int(priority)), path], f"device {rec.device}: swap")
    rec.update(swap_size=pages * 4096, swap_priority=int(priority))
    return path


def remove(rec: state_record.Recorder, errors: list) -> None:
    """Turn off and delete the recorded swap file, and drop it from the record once gone (a swap
    file in use cannot be turned off while its pages do not fit in memory: that is an error)."""
    path = rec.created.get("swapfile")
    if not path:
        return
    if is_active(path):
        proc = base.run(["swapoff", path], f"device {rec.device}: swap", check=False, timeout=600)
        if proc.returncode != 0:
            errors.append(f"swapoff {path}: {base.one_line(proc)}")
            return
    try:
        Path(path).unlink(missing_ok=True)
    except OSError as exc:
        errors.append(f"removing {path}: {exc.strerror}")
        return
    rec.drop("swapfile")
