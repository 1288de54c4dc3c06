"""Mounts: what is mounted where (findmnt, /proc/self/mountinfo), making a filesystem and mounting
it on a device this workflow owns, and the generic teardown of a filesystem kind (unmount, the
kind's own device, the mount directory) and of a directory the workflow made."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from . import base
from .base import UnavailableError
from .specs import fstype_of, list_of_str, mount_opts_of
from .state_record import Recorder


def findmnt(*args) -> list[dict]:
    """findmnt -J entries (flattened); [] when nothing matches."""
    proc = base.run(["findmnt", "-J", "-o", "TARGET,SOURCE,FSTYPE,OPTIONS", *args], "findmnt", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return []
    out = []

    def walk(items):
        for fs in items:
            out.append({k: fs.get(k) for k in ("target", "source", "fstype", "options")})
            walk(fs.get("children", []))

    walk(json.loads(proc.stdout).get("filesystems", []))
    return out


def mounts_of_source(dev: str) -> list[str]:
    """Mount points where block device ``dev`` (or anything named so) is mounted."""
    real = os.path.realpath(dev)
    targets = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            parts = line.split()
            sep = parts.index("-")
            source = parts[sep + 2]
            if source in (dev, real):
                targets.append(parts[4].replace("\\040", " "))
    return targets


def is_mountpoint(path) -> bool:
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as fh:
        return any(line.split()[4].replace("\\040", " ") == path for line in fh)


def mount_entry(path) -> dict | None:
    """The mountinfo entry mounted exactly at ``path`` (last one wins), or None."""
    path = os.path.realpath(path)
    found = None
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            parts = line.split()
            if parts[4].replace("\\040", " ") == path:
                sep = parts.index("-")
                found = {
                    "target": path,
                    "fstype": parts[sep + 1],
                    "source": parts[sep + 2],
                    "options": ",".join(dict.fromkeys(
                        (parts[5] + ("," + parts[sep + 3] if len(parts) > sep + 3 else "")).split(","))),
                }
    return found


def format_and_mount(rec: Recorder, dev: str, spec: dict) -> None:
    """mkfs ``dev`` with the spec's fstype and options, then mount it at the spec's mount point:
    the common tail of the block-backed kinds (zram, loop, blockdev)."""
    fs = fstype_of(rec.device, spec)
    mkfs(rec, dev, fs, list_of_str(rec.device, spec, "mkfs_options"))
    mp = prepare_mountpoint(rec, default_mountpoint(rec, spec))
    do_mount(rec, dev, mp, fs, mount_opts_of(rec.device, spec))


def default_mountpoint(rec: Recorder, spec: dict) -> Path:
    if spec.get("mountpoint"):
        return Path(spec["mountpoint"])
    return rec.path.parent / "mnt" / rec.device


def prepare_mountpoint(rec: Recorder, path: Path) -> Path:
    """Make (or accept) an empty, unmounted directory to mount on; record it if we made it."""
    path = Path(os.path.abspath(path))
    if path.exists():
        if not path.is_dir():
            raise rec.error("mountpoint", f"{path} exists and is not a directory")
        if is_mountpoint(path):
            raise rec.error("mountpoint", f"{path} is already a mount point; refusing to mount over it")
        if any(path.iterdir()):
            raise rec.error("mountpoint", f"{path} is not empty; refusing to mount over it")
    else:
        rec.set("mountdir", str(path))
        path.mkdir(parents=True)
    return path


def do_mount(rec: Recorder, source: str, target: Path, fstype: str, options: list[str]) -> None:
    rec.set("mount", str(target))
    rec.set("mount_source", source)
    cmd = ["mount", "-t", fstype]
    if options:
        cmd += ["-o", ",".join(options)]
    base.run(cmd + [source, str(target)], f"device {rec.device}: mount")
    entry = mount_entry(target)
    rec.update(target=str(target), mount_options=entry["options"] if entry else ",".join(options))


def mkfs(rec: Recorder, dev: str, fstype: str, extra: list[str]) -> None:
    """Make a filesystem on ``dev``: only on a device this record says the workflow owns."""
    owned = {rec.created.get(k) for k in ("zram", "loop", "pmem", "formattable")}
    if dev not in owned:
        raise rec.error("mkfs", f"refusing to format {dev}: not a device this workflow created or owns")
    if fstype == "ext4":
        cmd = ["mkfs.ext4", "-q", "-F", *extra, dev]
    else:
        cmd = ["mkfs.xfs", "-q", "-f", *extra, dev]
    if shutil.which(cmd[0]) is None:
        raise UnavailableError(f"device {rec.device}: fstype: {cmd[0]} is not installed")
    base.run(cmd, f"device {rec.device}: mkfs")
    rec.note(f"{' '.join(cmd)}")


def _umount(target: str, source: str | None, errors: list) -> bool:
    entry = mount_entry(target)
    if entry is None:
        return True
    if source and entry["source"] not in (source, os.path.realpath(source)):
        errors.append(f"{target} is mounted from {entry['source']}, not {source}: left alone")
        return False
    for attempt in range(5):
        proc = base.run(["umount", target], "umount", check=False)
        if proc.returncode == 0 or mount_entry(target) is None:
            return True
        time.sleep(0.2 * (attempt + 1))
    errors.append(f"umount {target} failed: {proc.stderr.strip()}")
    return False


def teardown_mounted(rec: Recorder, undo_device=None) -> list[str]:
    """Undo a filesystem kind's resources in ``rec.created``, in reverse order of making; return
    error strings: unmount, then (once unmounted) ``undo_device(rec, errors)`` (the kind's own
    device: zram reset, loop detach, namespace destroy ...), then the mount directory.

    Each resource leaves the record as soon as it is gone, so a second call only retries what
    failed. Only resources named in the record are touched.
    """
    created = rec.created
    errors: list[str] = []
    if "mount" in created:
        if _umount(created["mount"], created.get("mount_source"), errors):
            rec.drop("mount")
            rec.drop("mount_source")
    if "mount" not in created:
        if undo_device is not None:
            undo_device(rec, errors)
    if "mountdir" in created:
        d = created["mountdir"]
        try:
            if os.path.isdir(d) and not is_mountpoint(d):
                _clear_stray(rec, d)
                os.rmdir(d)
        except OSError as exc:
            errors.append(f"rmdir {d}: {exc.strerror}")
        if not os.path.exists(d):
            rec.drop("mountdir")
    return errors


def _clear_stray(rec: Recorder, d: str) -> None:
    """Empty the mount directory this workflow made, once nothing is mounted on or below it: what is
    in it was written by a job after its file system was unmounted under it (files opened after a
    lazy unmount land in the bare directory), never anything of the user's."""
    if not any(True for _ in os.scandir(d)):
        return
    real = os.path.realpath(d) + "/"
    with open("/proc/self/mountinfo") as fh:
        if any(line.split()[4].startswith(real) for line in fh):
            return
    rec.note(f"{d}: removed what a job wrote there after its file system was unmounted under it")
    for entry in os.scandir(d):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def remove_tree(rec: "Recorder", key: str, errors: list) -> bool:
    """Remove the directory ``rec.created[key]`` names (if any) and drop it from the record; False
    (with the error noted) when it could not be removed."""
    d = rec.created.get(key)
    if d:
        shutil.rmtree(d, ignore_errors=True)
        if os.path.exists(d):
            errors.append(f"cannot remove {d}")
            return False
        rec.drop(key)
    return True
