"""Recovery by itself: the start of a run after one that was killed (``kill -9`` of Snakemake, the power
cut of one machine). Like a database at start-up, the next run finishes what the dead one left, then
goes on, instead of refusing: the workflow calls this when the folder holds a run's lock and no
Snakemake process of the folder is alive (:func:`benchcast.core.smk.stale_lock`).

* :func:`orphans`: job processes the dead run left running in the folder (Snakemake killed alone: its
  jobs run on); :func:`stop_orphans` stops them as a stopped run stops its jobs (SIGTERM, so that
  each tears down its device and what it owns; SIGKILL after :data:`benchcast.core.stop.GRACE_S`).
* :func:`settle_incomplete`: the jobs the dead run had started (Snakemake's incomplete markers). A
  measuring job writes each raw output under a temporary name and renames it when complete
  (:mod:`benchcast.core.protect`), so a raw output that exists under its own name is complete: a job whose
  outputs all exist finished after Snakemake died, and its marker goes (the measurement is kept, not
  measured again); a job cut between its renames (some outputs, not all) has the ones it renamed
  removed, as Snakemake removes an incomplete job's outputs, and runs again.
* :func:`clear_locks`: Snakemake's locks, as ``--unlock`` clears them.
* devices and MariaDB servers: torn down by the workflow's ``onstart`` on a local run
  (:func:`benchcast.devices.teardown_all`, :func:`benchcast.sources.run.mariadb.teardown_all`); on a cluster
  the devices are on the nodes, torn down there (``srun ... snakemake teardown``).

:func:`summary` is the one line that says what was done.
"""

from __future__ import annotations

import base64
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import plan
from ...core import protect, stop

#: Snakemake's folder in the working directory.
DOT = ".snakemake"


@dataclass
class Recovery:
    """What the start of a run did about the killed run before it: the jobs of it that were still
    running and were stopped (log or name), the jobs it had started that finished after it died
    (kept), the jobs it cut short (they run again), the outputs of jobs cut between their renames
    (removed), and what the workflow tore down."""

    stopped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    torn_down: list[str] = field(default_factory=list)
    servers: int = 0


def _cwd(pid: int) -> str | None:
    try:
        return os.path.realpath(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def _argv(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        pid = stop.parent(pid)
    return out


def orphans(cwd: str | None = None) -> list[tuple[int, str]]:
    """(pid, label) of the jobs a killed run left running in the folder ``cwd``: processes working
    there that run one of the workflow's entry points (``python -m benchcast.*``) or one of
    Snakemake's rule scripts (``.snakemake/scripts/``), not this process nor its ancestors, the
    outermost of them only (a job's children go with it)."""
    here = os.path.realpath(cwd or os.getcwd())
    mine = _ancestors()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in mine or _cwd(int(entry)) != here:
            continue
        argv = _argv(int(entry))
        is_job = any(a.startswith("benchcast.") for a in argv[argv.index("-m") + 1:][:1]) if "-m" in argv else False
        is_job = is_job or any(".snakemake/scripts/" in a for a in argv[1:2])
        if is_job and stop.alive(int(entry)):
            found[int(entry)] = stop.job_name(int(entry), Path(argv[0]).name if argv else "?")
    outer = {p: n for p, n in found.items() if not _has_ancestor_in(p, found)}
    return sorted(outer.items())


def _has_ancestor_in(pid: int, pids) -> bool:
    seen, up = set(), stop.parent(pid)
    while up > 1 and up not in seen:
        if up in pids:
            return True
        seen.add(up)
        up = stop.parent(up)
    return False


def stop_orphans(jobs: list[tuple[int, str]], grace: float = stop.GRACE_S) -> list[str]:
    """SIGTERM each job (it tears down its device and what it owns; with SIGCONT, so that a job left
    stopped acts on it too), SIGKILL it and what it started when it is still running after
    ``grace`` seconds; returns their labels."""
    stop.send([p for p, _ in jobs], signal.SIGTERM)
    stop.send([p for p, _ in jobs], signal.SIGCONT)
    deadline = time.monotonic() + grace
    left = [p for p, _ in jobs]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [p for p in left if stop.alive(p)]
    for pid in left:
        stop.send([*stop.descendants(pid), pid], signal.SIGKILL)
    return [label for _, label in jobs]


def _markers(root: Path) -> dict[str, Path]:
    """Snakemake's incomplete markers: output path -> marker file (urlsafe base64 names, long ones
    split into folders whose names begin with '@')."""
    base = root / DOT / "incomplete"
    out = {}
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            marker = Path(dirpath) / name
            parts = marker.relative_to(base).parts
            try:
                out[base64.urlsafe_b64decode("".join(p.lstrip("@") for p in parts)).decode()] = marker
            except (ValueError, UnicodeDecodeError):
                continue
    return out


def _outputs(path: str) -> list[str] | None:
    """All outputs of the measuring job that has ``path`` among its outputs, or None."""
    for kind, suffixes in plan.SUFFIXES.items():
        for suffix in suffixes:
            if suffix == ".log":
                continue
            run = plan.parse(path, suffix)
            if run is not None and run.type == kind:
                return [run.path(s) for s in suffixes if s != ".log"]
    return None


def settle_incomplete(root, rec: Recovery) -> None:
    """The measuring jobs the dead run had started (see the module doc): a job whose raw outputs all
    exist is kept (its markers go), one with some but not all has those removed; the others run
    again. Other jobs' outputs are removed and their markers stay: Snakemake reruns them
    (``rerun-incomplete``) with the rest of the study."""
    root = Path(root)
    markers = _markers(root)
    seen = set()
    for path in sorted(markers):
        outs = _outputs(path)
        if outs is None:
            if not path.startswith(("logs/", DOT)):
                # what the cut job left goes, as Snakemake removes an incomplete job's outputs: a
                # marker over an output that exists makes Snakemake run that job alone and stop
                # with exit 0, the study unfinished (a Snakemake kill in build_ooc, issue 52)
                protect.remove(root / path)
                rec.cut.append(path)
            continue
        key = outs[0]
        if key in seen:
            continue
        seen.add(key)
        there = [o for o in outs if os.path.lexists(root / o)]
        if len(there) == len(outs):
            for o in outs:
                if o in markers:
                    markers[o].unlink(missing_ok=True)
            rec.kept.append(key)
            continue
        for o in there:
            protect.remove(root / o)
            rec.removed.append(o)
        rec.cut.append(key)


def clear_locks(root) -> int:
    """Remove Snakemake's lock files (as ``snakemake --unlock``); their number."""
    locks = Path(root) / DOT / "locks"
    n = 0
    for f in locks.glob("*.lock") if locks.is_dir() else ():
        f.unlink(missing_ok=True)
        n += 1
    return n


def after_kill(root=".", grace: float = stop.GRACE_S) -> Recovery:
    """What the start of a run does when the run before it was killed and left its lock: stop the
    jobs it left running, settle the jobs it had started, clear its lock (devices and servers: the
    workflow's onstart). Returns what was done."""
    rec = Recovery()
    rec.stopped = stop_orphans(orphans(str(root)), grace)
    settle_incomplete(root, rec)
    clear_locks(root)
    return rec


def teardown_left(rec: Recovery, results_dirs) -> None:
    """Tear down what the killed run left of each study (``results/<study>``): its MariaDB servers,
    then every device a state record still lists (this machine's: on a local run). Raises
    BenchcastError naming what could not be undone."""
    from ... import devices
    from . import mariadb

    for d in map(Path, results_dirs):
        rec.servers += len(mariadb.teardown_all(d))
        state = d / "devices" / "state"
        if state.is_dir():
            live = stop.live_devices([state])
            devices.teardown_all(state)
            rec.torn_down += [Path(p).stem + (f" ({', '.join(held)})" if held else "") for p, held in live.items()]


def _some(items: list[str], most: int = 4) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def summary(rec: Recovery, local: bool = True) -> str:
    """The one line: the cause (a killed run) and what was done about each job and device."""
    parts = []
    if rec.stopped:
        parts.append(f"stopped {len(rec.stopped)} job(s) it left running ({_some(rec.stopped)})")
    if rec.cut:
        parts.append(f"cut short, run again: {_some(rec.cut)}")
    if rec.kept:
        parts.append(f"finished after it died, kept: {_some(rec.kept)}")
    if rec.removed:
        parts.append(f"removed the outputs of a job cut between its renames: {_some(rec.removed)}")
    if local:
        down = _some(rec.torn_down) if rec.torn_down else "no device was up"
        parts.append(f"torn down: {down}" + (f"; {rec.servers} MariaDB server(s) stopped" if rec.servers else ""))
    else:
        parts.append("its devices are on the nodes: tear them down there (srun --nodelist=NODE snakemake teardown)")
    return ("benchcast: a previous run in this folder was killed (its lock was left in .snakemake/locks and "
            f"no process of it runs): {'; '.join(parts)}; its lock cleared, going on")
