"""delayed: a slower device of known latency. A FUSE file system (``delayfs.c`` beside this module,
built with the system compiler on first use) passes every request through to a backing device
(tmpfs, dir, zram or loop; spec under ``backing``) and adds a fixed delay to every read, every write
and every fsync/fdatasync that reaches it, measured from when the request arrived.

A throttled device caps a rate (a request below the cap sees the backing device's own latency); a
delayed device adds latency to each request, as a slower medium would, so applications that issue
a few synchronous I/Os per operation slow down in proportion. The delays add to FUSE's own round
trip (tens of microseconds here), which fio measures like any other device's latency.

The file system server runs as its own session (it outlives the job that mounted it, like any
mount); teardown unmounts it, which ends the server, then tears the backing device down.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

from .. import BenchcastError
from . import base, loop, mounts, specs, state_record, tmpfs, zram
from . import dir as dir_kind

SOURCE = Path(__file__).with_name("delayfs.c")
DELAYS = ("read_delay_us", "write_delay_us", "sync_delay_us")
#: The kinds a delayed device can wrap.
BACKING = {"tmpfs": tmpfs, "dir": dir_kind, "zram": zram, "loop": loop}
FUSE_DEV = Path("/dev/fuse")


def backing_module(device_id: str, spec: dict):
    b = spec.get("backing")
    if not isinstance(b, dict) or b.get("kind") not in BACKING:
        raise BenchcastError(
            f"device {device_id}: backing: must be a device spec of kind {', '.join(BACKING)}"
        )
    return BACKING[b["kind"]]


def delays_ns(device_id: str, spec: dict) -> dict[str, int]:
    """{read_delay_ns: .., write_delay_ns: .., sync_delay_ns: ..} from the spec's microseconds."""
    if not any(k in spec for k in DELAYS):
        raise BenchcastError(f"device {device_id}: kind delayed needs at least one of {', '.join(DELAYS)}")
    out = {}
    for key in DELAYS:
        v = specs.setting(spec, "delayed", key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise BenchcastError(f"device {device_id}: {key}: must be a number of microseconds >= 0, not {v!r}")
        out[key.replace("_us", "_ns")] = int(round(v * 1000))
    return out


def threads_of(device_id: str, spec: dict) -> int:
    n = specs.setting(spec, "delayed", "threads")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise BenchcastError(f"device {device_id}: threads: must be a positive integer, not {n!r}")
    return n


def check(device_id: str, spec: dict) -> None:
    specs.check_wrapper(device_id, spec, backing_module)
    delays_ns(device_id, spec)
    threads_of(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "delayed")
    backing_module(device_id, spec).available(f"{device_id}.backing", spec["backing"])
    if not FUSE_DEV.exists():
        raise base.UnavailableError(f"device {device_id}: kind delayed: no {FUSE_DEV} (the kernel has no FUSE)")
    for tool in ("cc", "pkg-config"):
        if shutil.which(tool) is None:
            raise base.UnavailableError(f"device {device_id}: kind delayed: {tool} is not installed")
    if subprocess.run(["pkg-config", "--exists", "fuse3"]).returncode != 0:
        raise base.UnavailableError(f"device {device_id}: kind delayed: libfuse3 development files "
                                    f"are not installed (Debian: libfuse3-dev)")


def build(bin_dir) -> Path:
    """The delayfs binary for the current source, compiled into ``bin_dir`` when missing (named by
    the source's hash, written under a temporary name and renamed, so a half-built one never runs)."""
    digest = hashlib.sha1(SOURCE.read_bytes()).hexdigest()[:12]
    exe = Path(bin_dir) / f"delayfs-{digest}"
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    flags = base.run(["pkg-config", "--cflags", "--libs", "fuse3"], "delayfs: pkg-config").stdout.split()
    tmp = exe.with_name(f".{exe.name}.{os.getpid()}")
    base.run(["cc", "-O2", "-Wall", "-o", tmp, SOURCE, *flags], "delayfs: cc")
    os.replace(tmp, exe)
    return exe


def provision(rec: state_record.Recorder, spec: dict) -> None:
    available(rec.device, spec)
    delays = delays_ns(rec.device, spec)
    exe = build(rec.path.parent / "bin")
    mod = backing_module(rec.device, spec)
    # the backing device mounts at <state dir>/mnt/<id>-backing, the FUSE file system at .../<id>
    child = rec.child("backing", {"device": f"{rec.device}-backing", "kind": spec["backing"]["kind"],
                                  "created": {}})
    child.save()
    mod.provision(child, spec["backing"])
    data = Path(child.state["target"]) / "delayfs-data"
    if data.exists():
        raise rec.error("backing", f"{data} already exists (left by an earlier run? run teardown-all)")
    rec.set("data_dir", str(data))
    data.mkdir()
    mp = mounts.prepare_mountpoint(rec, mounts.default_mountpoint(rec, spec))
    rec.set("mount", str(mp))
    rec.set("mount_source", "delayfs")
    stats = rec.path.with_name(f"{rec.path.stem}.delayfs-stats")
    rec.set("stats_file", str(stats))
    opts = ",".join(["fsname=delayfs", "subtype=delayfs", "allow_other", f"max_threads={threads_of(rec.device, spec)}",
                     *(f"{k}={v}" for k, v in delays.items()), f"stats={stats}"])
    # without -f the server mounts, then forks into its own session and the command returns
    base.run([exe, data, mp, "-o", opts], f"device {rec.device}: delayfs")
    entry = mounts.mount_entry(mp)
    if entry is None:
        raise rec.error("mount", f"delayfs exited but nothing is mounted at {mp}")
    rec.note(f"{exe.name} {data} {mp} -o {opts}")
    ok, why = dir_kind.probe_direct(mp)
    rec.note(f"O_DIRECT probe in {mp}: {why}")
    rec.update(target=str(mp), direct_ok=ok, mount_options=entry["options"], delays_ns=delays,
               backing_model=mod.model(child.state))


COUNTERS = ("reads", "read_bytes", "writes", "write_bytes", "syncs")


def counters(state: dict) -> dict[str, int] | None:
    """Requests the file system server has served since it started (reads, read_bytes, writes,
    write_bytes, syncs), from its shared counter file; None when there is none."""
    path = state.get("created", {}).get("stats_file")
    try:
        raw = Path(path).read_bytes() if path else b""
    except OSError:
        return None
    if len(raw) < 48:
        return None
    values = struct.unpack("<6Q", raw[:48])
    return dict(zip(COUNTERS, values[:5]))


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """Once unmounted (the server has ended): the counter file, the data directory, then the
    backing device."""
    if "stats_file" in rec.created:
        Path(rec.created["stats_file"]).unlink(missing_ok=True)
        rec.drop("stats_file")
    if not mounts.remove_tree(rec, "data_dir", errors):
        return
    sub = rec.state.get("backing")
    if isinstance(sub, dict) and (sub.get("created") or {}):
        errors += BACKING[sub.get("kind", "tmpfs")].teardown(state_record.Recorder(sub, rec.path, parent=rec))


def teardown(rec: state_record.Recorder) -> list[str]:
    """Unmount the FUSE file system (a dead server's mount too), then the data directory and the
    backing device, then the mount directory."""
    return mounts.teardown_mounted(rec, _undo)


def servers(state: dict) -> list[int]:
    """The process ids of this device's file system server (started as ``delayfs DATA MOUNT ...``)."""
    c = state.get("created", {})
    want = [os.fsencode(str(c.get("data_dir", ""))), os.fsencode(str(c.get("mount", "")))]
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0") if proc.name.isdigit() else []
        except OSError:
            continue
        if len(argv) > 2 and Path(os.fsdecode(argv[0])).name.startswith("delayfs") and argv[1:3] == want:
            pids.append(int(proc.name))
    return pids


def alive(state: dict) -> bool:
    c = state.get("created", {})
    sub = state.get("backing") or {}
    if "mount" not in c or mounts.mount_entry(c["mount"]) is None:
        return False
    try:  # a mount whose server died answers ENOTCONN
        os.stat(c["mount"])
    except OSError:
        return False
    return BACKING[sub.get("kind", "tmpfs")].alive(sub)


def model(state: dict) -> str:
    d = state.get("delays_ns") or {}
    # sorted: a state read back from its record has its keys sorted, one a job provisioned itself has
    # them in the order made; the records' provenance must not tell the two apart
    us = ", ".join(f"{k.split('_')[0]} +{d[k] / 1000:g} us" for k in sorted(d))
    return f"delayfs over {state.get('backing_model', '?')} ({us})"
