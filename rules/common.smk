# Config validation, the run plan of each study, the wildcards and the get_* functions every stage
# shares. The rest of the workflow's Python: inputs.smk (the jobs' inputs and params), checks.smk
# (before the DAG), outputs.smk (the final targets), hooks.smk (onstart / onerror / onsuccess).
import json
import os
import re
import sys
from pathlib import Path

_SCRIPTS = str(Path(workflow.basedir, "scripts").resolve())
sys.path.insert(0, _SCRIPTS)

from benchcast.core import smk as bc_smk  # noqa: E402
from benchcast.core.smk import strip_wildcard_constraints  # noqa: E402

# Jobs find the package and the Python that runs Snakemake through the environment, not through
# params or shell text: the environment is no rerun trigger, so a results tree copied or moved
# elsewhere (cp -a, rsync to a cluster) plans nothing, however Snakemake is started.
bc_smk.job_environment(_SCRIPTS)
# Snakemake's scheduler would otherwise spin a CPU beside every benchmark (benchcast.core.smk)
bc_smk.coalesce_reevaluations()
from benchcast import BenchcastError  # noqa: E402
from benchcast import config as bc_config  # noqa: E402
from benchcast.config import configfiles as bc_configfiles  # noqa: E402


def refuse(line):
    """Stop the workflow before any job runs with ``line`` (the config key or the file, and what is
    wrong) as the last line on stderr, unframed: SystemExit passes by Snakemake's error report
    (``WorkflowError in file ...`` and the .smk frames) and Python prints the line as the process
    ends; a lock the run took is released on the way out. ``./benchcast.sh run`` reads the workflow
    once before Snakemake starts (benchcast.core.startup) and prints a refusal there alone.
    """
    raise SystemExit(line)


_OVERLAYS = [str(f) for f in workflow.overwrite_configfiles or ()]
try:
    # the files Snakemake merged, read again: duplicate keys, a merge changing a device's kind
    bc_configfiles.check_files(
        [str(f) for f in workflow.configfiles if str(f) not in _OVERLAYS], _OVERLAYS
    )
    bc_configfiles.check_merged(config)
    bc_config.validate(config, Path(workflow.basedir) / "config" / "schema.yaml")
except BenchcastError as exc:
    refuse(str(exc))

#: What the start of this run did after a killed one (benchcast.sources.recover), or None.
RECOVERY = None

# a run in progress in this tree: named here, before Snakemake's lock or incomplete-files errors
if workflow.is_main_process:
    _others = bc_smk.runs_here()
    if _others:
        refuse(
            f"benchcast: a run is in progress in this folder (snakemake, pid "
            f"{', '.join(map(str, _others))}); wait for it to end, or stop it, and run again. "
            f"Nothing was run"
        )
    # a lock no live run holds: the run before was killed (kill -9, a power cut). Like a database
    # at start-up, finish what it left and go on (benchcast.sources.recover): its jobs still running
    # stopped, the jobs it started settled, its lock cleared here, before Snakemake's lock check;
    # its devices and servers torn down onstart (recover_killed_run), once it is known where
    # the jobs run (a dry run, and benchcast.core.startup's reading of the workflow, see no stale lock)
    if bc_smk.stale_lock():
        from benchcast.sources.run import recover as bc_recover

        RECOVERY = bc_recover.after_kill(".")

# before Snakemake's own checks of write-protected outputs
if not bc_smk.dry_run_requested():
    try:
        from benchcast.sources.parse import preflight as _preflight

        _preflight.check_writable("results")
    except BenchcastError as exc:
        refuse(f"benchcast: {exc}")

STUDIES = config["studies"]
RUN = config.get("run", {})
SELECTED = RUN.get("studies") or list(STUDIES)
for _name in SELECTED:
    if _name not in STUDIES:
        refuse(f"config: run.studies: unknown study {_name!r}")

from benchcast import devices as bc_devices  # noqa: E402
from benchcast.sources.run import fio as bc_fio  # noqa: E402
from benchcast.sources import plan as bc_plan  # noqa: E402
from benchcast.sources.run import quality as bc_quality  # noqa: E402
from benchcast.config import settings as bc_settings  # noqa: E402

#: The analysis code (the package without its device code): a param of every rule that runs
#: Python over results, so a changed analysis reruns them and never a measurement.
PACKAGE_DIGEST = bc_smk.package_digest(_SCRIPTS)

#: Rules whose outputs are raw measurements: never re-measured unless the user names them.
MEASURING_RULES = {"fio_run", "ycsb_run", "ooc_run"}

#: The workflow's folder relative to the working directory ("." when run from the checkout): paths
#: that decide reruns are relative, so a tree moved together with its workflow plans nothing.
BASE = os.path.relpath(workflow.basedir)


def _usable(study):
    """Measured devices of a study this machine can have; optional ones it cannot are skipped
    (and said so), a required one it cannot have stops the workflow here, before anything runs.
    """
    try:
        usable = bc_devices.usable_devices(STUDIES[study].get("devices", {}))
    except BenchcastError as exc:
        refuse(f"config: studies.{study}.devices: {exc}")
    for dev, reason in usable.items():
        if reason:
            logger.warning(
                f"benchcast: study {study}: skipping optional device {dev}: {reason}"
            )
    return [d for d, reason in usable.items() if reason is None]


USABLE = {s: _usable(s) for s in SELECTED}


def _plan(study):
    inter = RUN.get("interference", {})
    try:
        return bc_plan.build(
            study,
            STUDIES[study],
            USABLE[study],
            grid=bc_fio.expand_grid,
            extra_runs=inter.get("extra_runs", 0),
        )
    except BenchcastError as exc:
        refuse(str(exc))


#: Every run each selected study measures (fio cells, YCSB and ooc jobs on the devices this machine
#: has), built once (benchcast.sources.plan): the get_* functions below read it.
PLAN = {study: _plan(study) for study in SELECTED}


#: What each wildcard matches (benchcast.sources.plan: the engines, modes and programs of their modules).
WILDCARDS = bc_plan.wildcard_constraints(STUDIES)


wildcard_constraints:
    study=WILDCARDS["study"],
    source=WILDCARDS["source"],
    device=WILDCARDS["device"],
    cell=WILDCARDS["cell"],
    repeat=WILDCARDS["repeat"],
    engine=WILDCARDS["engine"],
    size=WILDCARDS["size"],
    mode=WILDCARDS["mode"],
    program=WILDCARDS["program"],


def get_package_digest(wildcards):
    """The analysis code's digest (:data:`PACKAGE_DIGEST`), as a function of the wildcards: only
    those params are recorded for the params rerun trigger."""
    return PACKAGE_DIGEST


def get_device_ids(wildcards):
    """The study's device ids (None if it names none: then an import accepts any)."""
    return list(STUDIES[wildcards.study].get("devices", {})) or None


def get_record_files(wildcards):
    """Every source of a study writes one record table: results/{study}/records/{type}/{source}.csv."""
    return get_record_files_of(wildcards.study)


def get_record_files_of(study):
    return [
        f"results/{study}/records/{src['type']}/{name}.csv"
        for name, src in STUDIES[study]["sources"].items()
    ]


def state_path(study, device):
    """The device's state record: what this workflow created (not a rule output, so Snakemake never
    deletes it; teardown-all reads it after a killed run)."""
    return f"results/{study}/devices/state/{device}.json"


#: Device keys that do not shape a measurement: changing them must not rerun a benchmark (`sources` says
#: which sources measure the device; a source it no longer names plans nothing new, a new one its runs).
COSMETIC_DEVICE_KEYS = {"label", "node", "constraint", "sources"}


def device_spec(study, device):
    spec = STUDIES[study]["devices"][device]
    return {k: v for k, v in spec.items() if k not in COSMETIC_DEVICE_KEYS}


def get_device_slurm_extra(wildcards):
    """Slurm: a device's group job owns its node, and runs on the node that has the device."""
    node = STUDIES[wildcards.study]["devices"][wildcards.device].get("node")
    return "--exclusive" + (f" --nodelist={node}" if node else "")


def get_device_constraint(wildcards):
    """Slurm: a node feature the device needs (sbatch -C), if the config names one."""
    return STUDIES[wildcards.study]["devices"][wildcards.device].get("constraint")


def get_round(wildcards):
    """Measurements in rounds: a benchmark job's priority is minus its repeat, so the greedy
    scheduler runs repeat r of every provisioned device before repeat r + 1 of any. A slow stretch
    of the machine then falls on one repeat of several devices, which the trimmed mean drops or
    averages, and not on every repeat of one device (docs/archive/ablation-2026-11.md, session 19).
    Only the order changes: priority is no rerun trigger. On a cluster each round of a device is its
    own job(s).
    """
    return -int(wildcards.repeat)


def get_quality_params(wildcards):
    """What a records rule needs to leave out the runs interference spoiled, and to state each
    record at the reference speed (run.speed)."""
    return {
        "thresholds": thresholds(),
        "repeats": get_source(wildcards)["repeats"],
        "speed": RUN["speed"],
    }


def thresholds():
    """The interference thresholds (run.interference), figure -> largest value a clean run shows."""
    return {
        k: v
        for k, v in RUN.get("interference", {}).items()
        if k in bc_quality.FIGURES and v is not None
    }


#: A measuring source's keys that say which runs exist, not how one is made (the repeat-until-stable
#: keys among them): a job's recorded settings leave them out (rules/inputs.smk), so a new size,
#: device or repeat re-plans no measured run.
RUN_AXES = ("devices", "repeats", "max_repeats", "stable_cv")

#: A measuring job takes the whole machine (resource `machine`, profiles: every other job takes
#: one unit of it by default), so no other job of the workflow runs beside a benchmark.
MACHINE = 100

#: What every measuring rule asks of the scheduler, one definition that all of them unpack
#: (`**MEASURING_RESOURCES` under `resources`): one benchmark slot, the whole machine, and on
#: Slurm the device's node and the node feature it needs.
MEASURING_RESOURCES = dict(
    benchmark_slots=1,
    machine=MACHINE,
    slurm_extra=get_device_slurm_extra,
    constraint=get_device_constraint,
)


#: How the measuring jobs protect their runs (run.shield, run.interference.wait_run): handed to them
#: in the environment (benchcast.sources.quality.guard), not as params: how a run is protected is not what
#: it measures, so a change of it never plans a measurement again (each run's record says what it had).
os.environ[bc_quality.GUARD_ENV] = json.dumps(bc_quality.guard_settings(RUN))


def get_source(wildcards):
    try:
        return STUDIES[wildcards.study]["sources"][wildcards.source]
    except KeyError:
        raise WorkflowError(
            f"config: studies.{wildcards.study}.sources: no source {wildcards.source!r}"
        )
