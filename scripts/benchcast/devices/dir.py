"""dir: an existing directory on a mounted filesystem; nothing is formatted or mounted.

The benchmark writes into a fresh subdirectory ``benchcast-<device>`` of ``path``, removed at
teardown. Whether O_DIRECT works there is probed for real (open with O_DIRECT, write one aligned
block) and recorded as ``direct_ok``: older kernels refuse O_DIRECT on tmpfs, some FUSE and network
filesystems do too.
"""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path

from . import base, mounts, specs, state_record



def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    p = Path(spec["path"])
    if not p.is_dir():
        raise base.UnavailableError(f"device {device_id}: path: {p} is not an existing directory")


def probe_direct(directory, block: int = 4096) -> tuple[bool, str]:
    """Really open a file with O_DIRECT in ``directory`` and write one aligned block."""
    path = os.path.join(directory, ".benchcast-odirect-probe")
    buf = mmap.mmap(-1, block)  # page-aligned memory, as O_DIRECT needs
    buf.write(b"b" * block)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
    except OSError as exc:
        return False, f"open(O_DIRECT) failed: {errno.errorcode.get(exc.errno, exc.errno)}"
    try:
        n = os.write(fd, buf)
        ok = n == block
        why = "aligned O_DIRECT write succeeded" if ok else f"short O_DIRECT write ({n} bytes)"
    except OSError as exc:
        ok, why = False, f"O_DIRECT write failed: {errno.errorcode.get(exc.errno, exc.errno)}"
    finally:
        os.close(fd)
        buf.close()
        try:
            os.unlink(path)
        except OSError:
            pass
    return ok, why


def provision(rec: state_record.Recorder, spec: dict) -> None:
    available(rec.device, spec)
    root = Path(os.path.abspath(spec["path"]))
    entry = mounts.findmnt("-T", str(root))
    if not entry:
        raise rec.error("path", f"{root} is not on a mounted filesystem (findmnt -T finds nothing)")
    sub = root / f"benchcast-{rec.device}"
    if sub.exists():
        raise rec.error("path", f"{sub} already exists (left by an earlier run? run teardown-all); refusing to reuse it")
    rec.set("probe_dir", str(sub))
    sub.mkdir()
    ok, why = probe_direct(sub)
    rec.note(f"O_DIRECT probe in {sub}: {why}")
    rec.update(target=str(sub), direct_ok=ok, mount_options=entry[0]["options"],
               filesystem=entry[0]["fstype"], mounted_from=entry[0]["source"])


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """The fresh subdirectory benchmarks wrote into."""
    mounts.remove_tree(rec, "probe_dir", errors)


def teardown(rec: state_record.Recorder) -> list[str]:
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    return os.path.isdir(state.get("created", {}).get("probe_dir", "/nonexistent"))


def model(state: dict) -> str:
    return f"directory on {state.get('filesystem', '?')} ({state.get('mounted_from', '?')})"
