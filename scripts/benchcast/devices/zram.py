"""zram: a compressed RAM block device. A fresh /dev/zramN from ``hot_add`` (never an existing
one), ``comp_algorithm`` and ``disksize`` set through sysfs, a filesystem made and mounted; teardown
unmounts, resets and ``hot_remove``s it."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from . import base, mounts, specs, state_record

CONTROL = Path("/sys/class/zram-control")


def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)
    specs.size_of(device_id, spec, "disksize", minimum=1 << 20)
    specs.check_filesystem(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "zram")
    if not (CONTROL / "hot_add").exists():
        raise base.UnavailableError(
            f"device {device_id}: kind zram: the kernel has no zram (no {CONTROL}/hot_add; modprobe zram)"
        )


def algorithms(name: str) -> list[str]:
    text = Path(f"/sys/block/{name}/comp_algorithm").read_text()
    return [a.strip("[]") for a in text.split()]


def make_block(rec: state_record.Recorder, spec: dict) -> str:
    """Create and size a fresh zram device; return its /dev path (recorded as created.zram)."""
    available(rec.device, spec)
    n = (CONTROL / "hot_add").read_text().strip()
    dev = f"/dev/zram{n}"
    rec.set("zram", dev)
    name = f"zram{n}"
    rec.update(sysfs_ino=os.stat(f"/sys/block/{name}").st_ino)  # which zram{n} is ours (_ours)
    algo = spec.get("comp_algorithm")
    if algo:
        have = algorithms(name)
        if algo not in have:
            raise rec.error("comp_algorithm", f"{algo!r} not offered by the kernel (have: {', '.join(have)})")
        Path(f"/sys/block/{name}/comp_algorithm").write_text(algo)
    size = specs.size_of(rec.device, spec, "disksize")
    Path(f"/sys/block/{name}/disksize").write_text(str(size))
    for _ in range(50):  # udev may take a moment to create the node
        if os.path.exists(dev):
            break
        time.sleep(0.05)
    rec.update(block_device=dev, comp_algorithm=next(a for a in Path(f"/sys/block/{name}/comp_algorithm").read_text().split() if a.startswith("[")).strip("[]"))
    return dev


def provision(rec: state_record.Recorder, spec: dict) -> None:
    dev = make_block(rec, spec)
    mounts.format_and_mount(rec, dev, spec)


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """Reset and hot-remove the zram device (not while mounted by anyone)."""
    created = rec.created
    if "zram" in created:
        dev = created["zram"]
        name = os.path.basename(dev)
        sysd = Path(f"/sys/block/{name}")
        if sysd.exists():
            other = mounts.mounts_of_source(dev)
            if other:
                errors.append(f"{dev} is mounted at {other[0]} (not by this record): left alone")
            elif not _ours(rec, sysd):  # gone already, and its number taken by someone else's
                rec.note(f"{dev} is no longer the device this record made (another zram of that number): left alone")
            else:
                # just after umount, udev's probes may still hold the device open: reset
                # answers EBUSY then, so retry for a few seconds before giving up
                for attempt in range(50):
                    try:
                        (sysd / "reset").write_text("1")
                        Path("/sys/class/zram-control/hot_remove").write_text(name.removeprefix("zram"))
                        break
                    except OSError as exc:
                        if exc.errno != errno.EBUSY or attempt == 49:
                            errors.append(f"reset/hot_remove {dev}: {exc.strerror}")
                            break
                        time.sleep(0.1)
        if not sysd.exists() or not errors:
            rec.drop("zram")


def _ours(rec: state_record.Recorder, sysd: Path) -> bool:
    """Whether the zram device at ``sysd`` is still the one this record made (its sysfs node, whose
    inode number a new device of the same number does not get; a device reset by someone keeps it).
    A record left stale (its teardown could not write it) may name a number the kernel has since
    given to another zram device."""
    want = rec.state.get("sysfs_ino")
    try:
        return want is None or os.stat(sysd).st_ino == want
    except OSError:
        return True


def teardown(rec: state_record.Recorder) -> list[str]:
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    c = state.get("created", {})
    return "mount" in c and mounts.mount_entry(c["mount"]) is not None and (
        mounts.mount_entry(c["mount"])["source"] == c.get("zram"))


def model(state: dict) -> str:
    return f"zram ({state.get('comp_algorithm', '?')})"
