"""loop: a file-backed loop device. A fresh backing file of ``size`` in ``backing_dir`` (made with
O_EXCL, never an existing file), attached with ``losetup --direct-io=on``, formatted and mounted;
teardown unmounts, detaches every loop device on that backing file and deletes the file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from . import base, mounts, specs, state_record



def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)
    specs.size_of(device_id, spec, "size", minimum=1 << 20)
    specs.check_filesystem(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "loop")
    if not os.path.exists("/dev/loop-control"):
        raise base.UnavailableError(f"device {device_id}: kind loop: no /dev/loop-control (loop module missing)")
    if spec.get("backing_dir") and not os.path.isdir(spec["backing_dir"]):
        raise base.UnavailableError(f"device {device_id}: backing_dir: {spec['backing_dir']} is not a directory")


def make_block(rec: state_record.Recorder, spec: dict) -> str:
    """Create the backing file and attach it; return the loop device (recorded as created.loop)."""
    available(rec.device, spec)
    size = specs.size_of(rec.device, spec, "size")
    bdir = Path(os.path.abspath(spec.get("backing_dir") or rec.path.parent))
    bf = bdir / f"benchcast-{rec.device}.img"
    if bf.exists():
        raise rec.error("backing_dir", f"{bf} already exists (left by an earlier run? run teardown-all); refusing to reuse it")
    rec.set("backing_file", str(bf))
    fd = os.open(bf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)
    dio = "on" if specs.setting(spec, "loop", "direct_io") else "off"
    out = base.run(["losetup", "--find", "--show", f"--direct-io={dio}", str(bf)],
                   f"device {rec.device}: losetup").stdout.strip()
    rec.set("loop", out)
    name = os.path.basename(out)
    try:
        dio_now = Path(f"/sys/block/{name}/loop/dio").read_text().strip() == "1"
    except OSError:
        dio_now = None
    if dio == "on" and not dio_now:
        rec.note(f"losetup --direct-io=on was not honoured for {bf} (its filesystem lacks O_DIRECT?)")
    rec.update(block_device=out, loop_direct_io=dio_now)
    return out


def provision(rec: state_record.Recorder, spec: dict) -> None:
    dev = make_block(rec, spec)
    mounts.format_and_mount(rec, dev, spec)


def loops_of(backing_file: str) -> list[str]:
    proc = base.run(["losetup", "-j", backing_file, "-O", "NAME", "-n"], "losetup -j", check=False)
    return [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """Detach every loop device on the backing file, then delete the file."""
    created = rec.created
    if "backing_file" in created:
        bf = created["backing_file"]
        ok = True
        if os.path.exists(bf):
            for loop in loops_of(bf):
                proc = base.run(["losetup", "-d", loop], "losetup -d", check=False)
                if proc.returncode != 0:
                    ok = False
                    errors.append(f"losetup -d {loop}: {proc.stderr.strip()}")
            # detach is asynchronous while the device is still open; wait for it
            for _ in range(20):
                if not loops_of(bf):
                    break
                time.sleep(0.1)
            if ok and not loops_of(bf):
                os.unlink(bf)
            else:
                ok = False
                errors.append(f"{bf} still attached to a loop device")
        if ok:
            rec.drop("loop")
            rec.drop("backing_file")


def teardown(rec: state_record.Recorder) -> list[str]:
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    c = state.get("created", {})
    e = mounts.mount_entry(c["mount"]) if "mount" in c else None
    return e is not None and e["source"] == c.get("loop")


def model(state: dict) -> str:
    bf = state.get("created", {}).get("backing_file", "?")
    return f"loop (direct-io={'on' if state.get('loop_direct_io') else 'off'}) on {os.path.dirname(bf)}"
