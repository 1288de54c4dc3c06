"""tmpfs: DRAM as a device. A fresh tmpfs of ``size`` mounted at ``mountpoint``; without root, a
fresh directory under /dev/shm (the machine's existing tmpfs, whose size is not ours to set) and a
note saying so."""

from __future__ import annotations

import os
import tempfile

from . import base, mounts, specs, state_record
from . import dir as dir_kind



def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)
    specs.size_of(device_id, spec, "size")
    specs.mount_opts_of(device_id, spec)


def available(device_id: str, spec: dict) -> None:
    if not base.is_root() and not specs.setting(spec, "tmpfs", "shm_fallback"):
        base.ensure_root(device_id, "tmpfs")


def provision(rec: state_record.Recorder, spec: dict) -> None:
    size = specs.size_of(rec.device, spec, "size")
    if not base.is_root():
        if not specs.setting(spec, "tmpfs", "shm_fallback"):
            base.ensure_root(rec.device, "tmpfs")
        d = tempfile.mkdtemp(prefix=f"benchcast-{rec.device}-", dir="/dev/shm")
        rec.set("shm_dir", d)
        rec.note(f"not root: using directory {d} on the existing /dev/shm tmpfs instead of a fresh "
                 f"tmpfs of {size} bytes; its size and mount options are not ours")
        entry = mounts.findmnt("-T", d)
        rec.update(target=d, mount_options=entry[0]["options"] if entry else "")
    else:
        mp = mounts.prepare_mountpoint(rec, mounts.default_mountpoint(rec, spec))
        opts = [f"size={size}", "mode=0755", *specs.mount_opts_of(rec.device, spec)]
        mounts.do_mount(rec, f"benchcast-{rec.device}", mp, "tmpfs", opts)
    # kernels before 6.6 refuse O_DIRECT on tmpfs
    target = rec.state["target"]
    ok, why = dir_kind.probe_direct(target)
    rec.note(f"O_DIRECT probe in {target}: {why}")
    rec.update(direct_ok=ok)


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """The /dev/shm directory used instead of a tmpfs when not root."""
    mounts.remove_tree(rec, "shm_dir", errors)


def teardown(rec: state_record.Recorder) -> list[str]:
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    c = state.get("created", {})
    if "shm_dir" in c:
        return os.path.isdir(c["shm_dir"])
    return "mount" in c and mounts.mount_entry(c["mount"]) is not None


def model(state: dict) -> str:
    return "DRAM (tmpfs)" if "mount" in state.get("created", {}) else "DRAM (/dev/shm directory)"
