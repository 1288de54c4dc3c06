# Config validation, the run plan of each study, the wildcards and the get_* names every stage
# shares, bound to the package's functions (benchcast.workflow: the rule files hold no function).
# The rest of the workflow's glue: inputs.smk (the jobs' inputs and params), checks.smk (before the
# DAG), outputs.smk (the report's outputs), hooks.smk (onstart / onerror / onsuccess).
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
from benchcast.workflow import inputs as bc_inputs  # noqa: E402
from benchcast.workflow import jobparams as bc_jobparams  # noqa: E402
from benchcast.workflow import studies as bc_studies  # noqa: E402

# a refusal: ``refuse(line)``, the line the last on stderr, unframed (SystemExit; benchcast.workflow.studies)
refuse = bc_studies.refuse

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

#: What the start of this run did after a killed one (benchcast.sources.run.recover), or None.
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
    # at start-up, finish what it left and go on (benchcast.sources.run.recover): its jobs still running
    # stopped, the jobs it started settled, its lock cleared here, before Snakemake's lock check;
    # its devices and servers torn down onstart (benchcast.workflow.hooks, recover_killed_run), once
    # it is known where the jobs run (a dry run, and benchcast.core.startup's reading of the
    # workflow, see no stale lock)
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
try:
    SELECTED = bc_studies.selected(STUDIES, RUN)
except BenchcastError as exc:
    refuse(str(exc))

from benchcast import devices as bc_devices  # noqa: E402
from benchcast.sources import plan as bc_plan  # noqa: E402
from benchcast.sources.run import quality as bc_quality  # noqa: E402

#: The analysis code (the package without its device code): a param of every rule that runs
#: Python over results, so a changed analysis reruns them and never a measurement.
PACKAGE_DIGEST = bc_smk.package_digest(_SCRIPTS)

#: Rules whose outputs are raw measurements: never re-measured unless the user names them.
MEASURING_RULES = {"fio_run", "ycsb_run", "ooc_run"}

#: The workflow's folder relative to the working directory ("." when run from the checkout): paths
#: that decide reruns are relative, so a tree moved together with its workflow plans nothing.
BASE = os.path.relpath(workflow.basedir)

#: Measured devices of each selected study this machine can have; optional ones it cannot are
#: skipped (and said so), a required one it cannot have stops the workflow here, before anything runs.
USABLE = {}
#: Every run each selected study measures (fio cells, YCSB and ooc jobs on the devices this machine
#: has), built once (benchcast.sources.plan): the get_* functions below read it.
PLAN = {}
try:
    for _study in SELECTED:
        USABLE[_study], _skipped = bc_studies.usable(STUDIES, _study)
        for _warning in _skipped:
            logger.warning(_warning)
    for _study in SELECTED:
        PLAN[_study] = bc_studies.plan(STUDIES, RUN, _study, USABLE[_study])
except BenchcastError as exc:
    refuse(str(exc))


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


#: The input and param functions of the rules (benchcast.workflow.inputs, .jobparams), over the
#: config, the plan and the analysis code's digest: bound here to the get_* names the rules use.
JOBS = bc_jobparams.JobParams(STUDIES, RUN, PLAN, PACKAGE_DIGEST)
get_package_digest = JOBS.package_digest
get_device_ids = JOBS.device_ids
get_record_files = JOBS.record_files
get_device_spec = JOBS.device_spec_json
get_state_path = JOBS.state_path
get_device_slurm_extra = JOBS.slurm_extra
get_device_constraint = JOBS.constraint
get_round = JOBS.round
get_quality_params = JOBS.quality_params
state_path = bc_inputs.state_path


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
#: in the environment (benchcast.sources.run.quality.guard), not as params: how a run is protected is not what
#: it measures, so a change of it never plans a measurement again (each run's record says what it had).
os.environ[bc_quality.GUARD_ENV] = json.dumps(bc_quality.guard_settings(RUN))
