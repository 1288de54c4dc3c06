"""Control groups: the hierarchy that offers a controller, the cgroup this process is in, joining
one, and removing one this workflow made."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import BenchcastError
from .mounts import findmnt


CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_v2_root(controller: str) -> Path | None:
    """The mounted cgroup v2 hierarchy that offers ``controller`` (io, memory), or None."""
    for entry in findmnt("-t", "cgroup2"):
        root = Path(entry["target"])
        try:
            if controller in (root / "cgroup.controllers").read_text().split():
                return root
        except OSError:
            pass
    return None


def own_cgroup(controller: str, version: int, pid: int | str = "self") -> Path:
    """The cgroup directory this process (or process ``pid``) is in now, for ``controller`` (v1:
    that controller's hierarchy; v2: the unified one)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        num, controllers, path = line.split(":", 2)
        if version == 1 and controller in controllers.split(","):
            return CGROUP_ROOT / controller / path.lstrip("/")
        if version == 2 and num == "0":
            return (cgroup_v2_root(controller) or CGROUP_ROOT) / path.lstrip("/")
    raise BenchcastError(f"cgroup: cannot tell which {controller} cgroup this process is in")


def join_cgroup(cg) -> None:
    """Move this process (and so the children it starts from now on) into cgroup ``cg``."""
    Path(cg, "cgroup.procs").write_text(str(os.getpid()))


def cgroup_remove(path: str, errors: list) -> bool:
    """Remove a cgroup this workflow made, first moving any process a killed run left in it to the
    parent; False (with the error noted) when it stays."""
    p = Path(path)
    if not p.exists():
        return True
    parent_procs = p.parent / "cgroup.procs"
    for _ in range(3):
        try:
            pids = (p / "cgroup.procs").read_text().split()
        except OSError:
            pids = []
        for pid in pids:  # move leftovers (a killed run's fio) out so the cgroup can go
            try:
                parent_procs.write_text(pid)
            except OSError:
                pass
        try:
            p.rmdir()
            return True
        except OSError as exc:
            err = exc
            time.sleep(0.1)
    errors.append(f"cannot remove cgroup {path}: {err.strerror}")
    return False
