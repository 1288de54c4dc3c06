"""The one adapter to Snakemake: the glue of the thin rule scripts (logging to the rule's log file,
one-line errors), the jobs' environment, and every use of Snakemake beyond its documented API.

No other file of the workflow (scripts/, rules/*.smk, Snakefile) touches Snakemake's internals;
tests/test_smk.py greps for them and tests each use below against the installed Snakemake.
Checked against Snakemake 9.27.1 (the pin, requirements.txt). Per use: the private name, what
benchcast relies on, and where.

* ``workflow.dag.needrun_jobs()`` (:func:`needrun_jobs`): the jobs this run will execute, in the
  onstart handler (the DAG is built, nothing has run); each job's ``rule.name``, ``input``,
  ``output`` and ``wildcards``.
* ``workflow.dag.reason(job).updated_input`` (:func:`updated_inputs`): the input files newer than
  the job's outputs, why the job is planned.
* ``workflow.dag.dependencies[job]`` (:func:`dependencies`): the jobs whose outputs the job reads,
  planned or not.
* ``workflow.persistence.metadata(output_file).endtime`` (:func:`output_end_time`): when the job
  that wrote an output ended, from .snakemake/metadata (``metadata`` takes the job's own file
  object, not a string).
* ``workflow.persistence.input_checksums(job, path)`` (:func:`recorded_checksums`): the
  ``sha256:<hex>`` checksums the job's outputs' records hold of an input they read (inputs up to
  1 MB; None for an output without one).
* ``workflow.dag_settings.forcerun`` (:func:`forced`): the rules and files named by --forcerun.
* ``workflow.dag_settings.target_jobs`` (:func:`target_jobs`): the jobs a Snakemake started for
  one job (a Slurm job step: ``--target-jobs rule:wc=value,...``) runs, as ``TargetSpec``
  (``rulename``, ``wildcards_dict``).
* ``workflow.scheduler.failed`` (:func:`failed_jobs`): the jobs that failed, in the onerror handler;
  a group job's ``is_group()`` and ``jobs``.
* ``workflow.touch``, ``workflow.local_exec``, ``workflow.remote_exec``,
  ``workflow.subprocess_exec``, ``workflow.executor_plugin.name``,
  ``workflow.execution_settings.keep_incomplete`` (:func:`touch_run`, :func:`runs_jobs_here`,
  :func:`in_a_job`, :func:`executor_name`, :func:`keeps_incomplete`): how this Snakemake runs.
* ``snakemake.scheduling.job_scheduler.JobScheduler._schedule_reevalutation(self, delay)`` and its
  ``_open_jobs`` semaphore (:func:`coalesce_reevaluations`): replaced by one that keeps one pending
  wake-up timer.
* ``Namedlist._get_names()`` / ``_set_name(name, index, end)`` of a script's ``snakemake.output``
  (:func:`aside`): the names (``output.csv``) follow items replaced by index.
* ``snakemake.io.strip_wildcard_constraints`` (:func:`strip_wildcard_constraints`): a pattern
  without its ``{name,regex}`` constraints (rules/common.smk, outputs.smk).
* ``snakemake.cli.parse_args(argv)`` and ``snakemake.cli.args_to_api(args, parser)``
  (:func:`read_command_line`): Snakemake's own command line, profiles and config merge, run from
  Python (benchcast.core.startup).
* Snakemake's command-line options, read from ``sys.argv`` by the Snakefile before Snakemake tells
  it (:func:`dry_run_requested`, :data:`NO_LOCK_OPTIONS`, :func:`stale_lock`): ``-n`` /
  ``--dry-run`` / ``--dryrun``, the options that take no lock; ``.snakemake/locks/*.lock``, the
  locks a run holds.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from dataclasses import dataclass, field

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


def strip_wildcard_constraints(pattern):
    """``pattern`` without its wildcards' constraints (``{x,[0-9]+}`` -> ``{x}``): Snakemake's own."""
    from snakemake.io import strip_wildcard_constraints as strip

    return strip(pattern)


def read_command_line(argv) -> None:
    """Read the workflow with Snakemake's command line ``argv`` (its profiles and config merge) and
    do what it says, as ``snakemake ARGV`` would; raises what Snakemake raises (SystemExit too)."""
    from snakemake import cli

    parser, args = cli.parse_args(list(argv))
    cli.args_to_api(args, parser)


# --- the workflow in its hooks (onstart, onerror, onsuccess): plain data -------------------------


@dataclass(frozen=True)
class Job:
    """One of Snakemake's jobs as plain data: its rule, input and output paths and wildcards. Equal
    (and hashed) by the job it stands for, which the functions here take back."""

    rule: str
    input: tuple[str, ...] = field(compare=False)
    output: tuple[str, ...] = field(compare=False)
    wildcards: dict = field(compare=False)
    job: object = field(repr=False)


def _job(job) -> Job:
    return Job(job.rule.name, tuple(map(str, job.input)), tuple(map(str, job.output)),
               dict(job.wildcards.items()), job)


def needrun_jobs(workflow) -> list[Job]:
    """The jobs this run will execute (onstart: the DAG is built, nothing has run yet)."""
    return [_job(j) for j in workflow.dag.needrun_jobs()]


def updated_inputs(workflow, job: Job) -> set[str]:
    """The job's input files newer than its outputs (part of why it is planned)."""
    return {str(f) for f in workflow.dag.reason(job.job).updated_input}


def dependencies(workflow, job: Job) -> list[Job]:
    """The jobs whose outputs ``job`` reads, planned or not."""
    return [_job(j) for j in workflow.dag.dependencies[job.job]]


def output_end_time(workflow, job: Job, path: str) -> float | None:
    """When the job that wrote ``path`` (an output of ``job``) ended, as Snakemake recorded it
    (.snakemake/metadata); None without a record or an end time."""
    for f in job.job.output:
        if str(f) == path:
            record = workflow.persistence.metadata(f)
            return None if record is None else record.endtime
    return None


def recorded_checksums(workflow, job: Job, path: str) -> set[str]:
    """The checksums (``sha256:<hex>``) of input ``path`` that the records of ``job``'s outputs hold
    (Snakemake records them of inputs up to 1 MB); empty when none does."""
    return workflow.persistence.input_checksums(job.job, path) - {None}


def forced(workflow) -> set[str]:
    """The rules and files the command line forces to run (--forcerun)."""
    return set(map(str, workflow.dag_settings.forcerun or ()))


def target_jobs(workflow) -> list[tuple[str, dict]]:
    """The jobs a Snakemake started for given jobs runs (--target-jobs, as in a Slurm job step):
    (rule, wildcards) each; none in a run of the workflow's targets."""
    targets = getattr(workflow.dag_settings, "target_jobs", None) or ()
    return [(t.rulename, dict(t.wildcards_dict)) for t in targets]


def failed_jobs(workflow) -> list[Job]:
    """The jobs that failed in this run (onerror), a group job's each."""
    out = []
    for failed in getattr(workflow.scheduler, "failed", ()):
        out += [_job(j) for j in (failed.jobs if failed.is_group() else [failed])]
    return out


def touch_run(workflow) -> bool:
    """Whether this run only touches outputs (--touch): it runs no job."""
    return bool(workflow.touch)


def runs_jobs_here(workflow) -> bool:
    """Whether this Snakemake runs its jobs on this machine (no cluster executor)."""
    return bool(workflow.local_exec)


def in_a_job(workflow) -> bool:
    """Whether this Snakemake was started for a job (by an executor, or per rule job in one)."""
    return bool(workflow.remote_exec or workflow.subprocess_exec)


def executor_name(workflow) -> str:
    """The name of this Snakemake's executor plugin ("local", "slurm", "slurm-jobstep"...); ""
    before it is known."""
    return str(getattr(getattr(workflow, "executor_plugin", None), "name", ""))


def keeps_incomplete(workflow) -> bool:
    """Whether a failed job's outputs stay (--keep-incomplete)."""
    return bool(workflow.execution_settings.keep_incomplete)
