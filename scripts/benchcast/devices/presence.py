"""Whether a device is still the one its job provisioned: a benchmark job asks before it keeps a
run. A file system unmounted under the job (``umount -l``: the kernel refuses a plain unmount of a
busy file system, not a lazy one), a loop or zram device taken away once its file system let go of
it, a delayed device whose FUSE server died: the run went on against open files, or against the bare
mount directory (files opened after the unmount land there), so what it measured is not the device.
The job then fails with one line naming the device and what happened, and keeps nothing of the run;
its device is torn down and provisioned again for the next job."""

from __future__ import annotations

import os

from .. import BenchcastError
from . import mounts


def gone(state: dict) -> str | None:
    """Why the device of ``state`` is not there as provisioned any more, or None when it is."""
    from . import KINDS

    kind = KINDS.get(state.get("kind"))
    if kind is None or not state.get("created") or kind.alive(state):  # nothing it made, nothing lost
        return None
    for part in (state, state.get("backing") or {}):
        created = part.get("created") or {}
        mnt = created.get("mount")
        if not mnt:
            continue
        entry = mounts.mount_entry(mnt)
        if entry is None:
            return f"nothing is mounted at {mnt} any more (unmounted under the job)"
        source = created.get("mount_source")
        if source and entry["source"] not in (source, os.path.realpath(source)):
            return f"{mnt} is mounted from {entry['source']} now, not {source}"
        try:
            os.stat(mnt)
        except OSError as exc:
            return f"{mnt}: {exc.strerror} (its file system server is gone)"
    return "it is not there as provisioned any more"


def check(state: dict) -> None:
    """Raise (one line, naming the device and why) when the device went away under the job."""
    why = gone(state)
    if why:
        raise BenchcastError(f"device {state.get('device')}: gone during the run: {why}; nothing of this run "
                             f"is kept")
