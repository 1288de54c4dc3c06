"""Glue for the thin rule scripts: logging to the rule's log file and one-line errors."""

from __future__ import annotations

import logging
import os
import sys
import traceback

from .. import BenchcastError
from . import protect


def run(main, snakemake) -> None:
    """Run ``main(snakemake)`` with logging into ``snakemake.log[0]``.

    A :class:`BenchcastError` ends the job with its one-line message (in the log and on stderr) and
    exit status 1; any other exception is logged with its traceback and re-raised.
    """
    log_path = snakemake.log[0] if len(snakemake.log) else None
    handlers = [logging.StreamHandler(sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", handlers=handlers, force=True)
    log = logging.getLogger("benchcast")
    pairs = aside(getattr(snakemake, "output", []))
    try:
        main(snakemake)
        for tmp, final in pairs:
            protect.commit_as(tmp, final)
    except BenchcastError as exc:
        log.error("benchcast: %s", exc)
        sys.exit(1)
    except OSError as exc:  # what the machine refused (a full file system): one line, naming the file
        from .cli import os_error

        log.error("benchcast: %s: %s", snakemake.rule, os_error(exc))
        sys.exit(1)
    except Exception:
        log.error("%s", traceback.format_exc())
        raise
    finally:
        for tmp, _final in pairs:
            protect.remove(os.path.dirname(tmp))


def aside(output) -> list[tuple[str, str]]:
    """Point a job's outputs (Snakemake's ``output``, names included) at the same names in hidden
    sibling folders (:func:`benchcast.core.protect.aside_path`); :func:`run` renames them when the job
    is done, so a failed, killed or disk-full job never leaves a partial file under an output's
    name. Returns (aside, final) path pairs."""
    pairs = [(str(protect.aside_path(p)), str(p)) for p in output]
    for tmp, _final in pairs:
        protect.remove(os.path.dirname(tmp))  # what a killed job left
        os.makedirs(os.path.dirname(tmp))
    for i, (tmp, _final) in enumerate(pairs):
        output[i] = tmp
    for name, (start, end) in list(getattr(output, "_get_names", lambda: ())()):
        output._set_name(name, start, end)
    return pairs


def job_environment(package_dir: str) -> None:
    """Set this process's environment, which every job inherits (Slurm jobs too: sbatch exports it):
    ``package_dir`` first on PYTHONPATH, and the folder of the Python running Snakemake first on
    PATH, so shell rules' ``python`` is the one with the pinned packages (.venv/bin/snakemake
    started without an activated venv). With ``--sdm conda`` a rule's own env still comes first."""
    import os

    old = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != package_dir]
    os.environ["PYTHONPATH"] = os.pathsep.join([package_dir, *old])
    here = os.path.dirname(sys.executable)
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != here]
    os.environ["PATH"] = os.pathsep.join([here, *path])


def dry_run_requested(argv=None) -> bool:
    """Whether the snakemake command line asks for a dry run (-n, --dry-run, --dryrun, or -n among
    combined short flags). Snakemake tells a Snakefile only later, after its own checks."""
    for arg in (sys.argv if argv is None else argv)[1:]:
        if arg in ("--dry-run", "--dryrun", "-n"):
            return True
        if arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha() and "n" in arg[1:]:
            return True
    return False


#: Targets and options of a Snakemake command that builds no study's results: the cure after a
#: killed run (``teardown``, ``--unlock``) and the side-by-side of finished trees (``compare``).
NO_RESULTS = ("teardown", "compare", "--unlock")


def builds_results(argv=None) -> bool:
    """Whether the snakemake command line builds a study's results, so that the study's inputs (its
    spec cards and names against what its sources bring, its imported files) must be good before
    anything runs: not for ``teardown``, ``compare`` or ``--unlock``, which read none of them (a
    bad imported file must not stand in the way of cleaning up after a killed run)."""
    return not any(arg in NO_RESULTS for arg in (sys.argv if argv is None else argv)[1:])


#: Options with which Snakemake does not lock the working directory (or clears its lock).
NO_LOCK_OPTIONS = ("--unlock", "--nolock", "--report", "--lint", "--list-rules", "--summary",
                   "--detailed-summary", "--list-target-rules", "--dag", "--rulegraph", "--filegraph")


#: True while benchcast.core.startup reads the workflow before a run (no stale lock then: see stale_lock).
READING = False


def stale_lock(argv=None, cwd: str | None = None) -> bool:
    """Whether this Snakemake command would stop at a lock no run holds: the command locks the
    working directory (no dry run, none of :data:`NO_LOCK_OPTIONS`) and ``.snakemake/locks`` holds
    a lock, where no other Snakemake process runs (:func:`runs_here`: a run killed with SIGKILL,
    or a power loss, leaves its lock behind)."""
    argv = sys.argv if argv is None else argv
    if dry_run_requested(argv) or any(a.split("=")[0] in NO_LOCK_OPTIONS for a in argv[1:]):
        return False
    if READING:
        return False  # read before the run (./benchcast.sh run): the run itself recovers, and says so
    if "teardown" in argv[1:]:  # the cure: its rule writes no file, so no lock stops it
        return False
    locks = os.path.join(cwd or os.getcwd(), ".snakemake", "locks")
    try:
        held = [f for f in os.listdir(locks) if f.endswith(".lock")]
    except OSError:
        return False
    return bool(held) and not runs_here(cwd)


def package_digest(package_dir: str, exclude=("devices",)) -> str:
    """A digest of the package's Python code (its ``*.py`` files by relative path and content,
    leaving out the subpackages ``exclude``: the device code that shapes measurements, not their
    analysis). A parameter of every rule that runs Python over results, so that a changed analysis
    (a ``git pull``) reruns those rules; the measuring rules do not have it, so it never
    re-measures. Moving the tree does not change it."""
    import hashlib
    from pathlib import Path

    root = Path(package_dir) / "benchcast"
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in exclude:
            continue
        h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def file_sha256(path: str) -> str:
    """The sha256 hex digest of a file's bytes (as Snakemake records the inputs a job read)."""
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def files_digest(paths) -> str:
    """A digest of files' contents (by path and bytes; a file that cannot be read counts by its path
    alone: the import's own check names it). A parameter of every import rule: a file replaced by
    one with other content but an older modification time (``cp -p``, ``rsync -t``, an unpacked
    archive) reruns the import, where Snakemake's modification-time trigger would keep the results
    of the old file."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(str(p) for p in paths):
        try:
            content = file_sha256(path)
        except OSError:
            content = "unreadable"
        h.update(f"{path}\0{content}\0".encode())
    return h.hexdigest()[:16]


def runs_here(cwd: str | None = None) -> list[int]:
    """Process ids of the other Snakemake runs in this working directory (a run in progress in the
    same tree), found in /proc: a process whose command is snakemake (``snakemake ...``,
    ``python -m snakemake ...``, ``python .../bin/snakemake ...``) with the same working directory,
    not this process nor one of its ancestors. Linux only; elsewhere none are found."""
    import os

    cwd = os.path.realpath(cwd or os.getcwd())
    mine, pid = set(), os.getpid()
    while pid > 1 and pid not in mine:
        mine.add(pid)
        pid = _parent(pid)
    out = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit() or int(entry) in mine:
            continue
        try:
            argv = open(f"/proc/{entry}/cmdline", "rb").read().decode(errors="replace").split("\0")
            here = os.path.realpath(os.readlink(f"/proc/{entry}/cwd"))
        except OSError:
            continue
        if here == cwd and _is_snakemake(argv):
            out.append(int(entry))
    return sorted(out)


def _parent(pid: int) -> int:
    try:
        stat = open(f"/proc/{pid}/stat").read()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _is_snakemake(argv: list[str]) -> bool:
    import os

    names = [os.path.basename(a) for a in argv[:2]]
    return "snakemake" in names or argv[1:3] == ["-m", "snakemake"]


def coalesce_reevaluations() -> None:
    """Keep Snakemake's scheduler from spinning beside a benchmark.

    Snakemake 9 (with its default job rate limit, 100 jobs per second) schedules a timer that wakes
    its scheduler again on every pass of the scheduler loop; each timer that fires runs another
    pass, which schedules another timer. The passes multiply with every job that finishes while
    other jobs wait for a resource (here: the benchmark slot and the whole machine, held by the
    measuring job), until the main process spins a whole CPU beside the benchmark (a default run
    started 306,000 timers and used 614 s of CPU in 30 minutes). One pending timer is enough: it
    wakes the scheduler within the limit's timespan either way. Idempotent."""
    import threading

    from snakemake.scheduling import job_scheduler

    cls = job_scheduler.JobScheduler
    if getattr(cls._schedule_reevalutation, "benchcast", False):
        return

    def once(self, delay) -> None:
        pending = getattr(self, "_benchcast_timer", None)
        if pending is not None and pending.is_alive():
            return
        timer = threading.Timer(delay, self._open_jobs.release)
        timer.daemon = True  # a pending wake-up never holds the process at its end
        self._benchcast_timer = timer
        timer.start()

    once.benchcast = True
    cls._schedule_reevalutation = once
