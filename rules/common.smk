# Config validation, the study expansion and the get_* input functions shared by all stages.
import json
import os
import re
import sys
from pathlib import Path

_SCRIPTS = str(Path(workflow.basedir, "scripts").resolve())
sys.path.insert(0, _SCRIPTS)

from benchcast import smk as bc_smk  # noqa: E402
from snakemake.io import strip_wildcard_constraints  # noqa: E402

# Jobs find the package and the Python that runs Snakemake through the environment, not through
# params or shell text: the environment is no rerun trigger, so a results tree copied or moved
# elsewhere (cp -a, rsync to a cluster) plans nothing, however Snakemake is started.
bc_smk.job_environment(_SCRIPTS)
# Snakemake's scheduler would otherwise spin a CPU beside every benchmark (benchcast.smk)
bc_smk.coalesce_reevaluations()
from benchcast import BenchcastError  # noqa: E402
from benchcast import config as bc_config  # noqa: E402
from benchcast import configfiles as bc_configfiles  # noqa: E402

_OVERLAYS = [str(f) for f in workflow.overwrite_configfiles or ()]
try:
    # the files Snakemake merged, read again: duplicate keys, a merge changing a device's kind
    bc_configfiles.check_files(
        [str(f) for f in workflow.configfiles if str(f) not in _OVERLAYS], _OVERLAYS
    )
    bc_configfiles.check_merged(config)
    bc_config.validate(config, Path(workflow.basedir) / "config" / "schema.yaml")
except BenchcastError as exc:
    raise WorkflowError(str(exc)) from None

# a run in progress in this tree: named here, before Snakemake's lock or incomplete-files errors
if workflow.is_main_process:
    _others = bc_smk.runs_here()
    if _others:
        raise WorkflowError(
            f"benchcast: a run is in progress in this folder (snakemake, pid "
            f"{', '.join(map(str, _others))}); wait for it to end, or stop it, and run again. "
            f"Nothing was run"
        )
    # before Snakemake's many-line LockException: a lock no live run holds
    if bc_smk.stale_lock():
        raise WorkflowError(
            "benchcast: a previous run in this folder was killed and left its lock in "
            ".snakemake/locks (no snakemake process of this folder runs on this machine); "
            "`./benchcast.sh teardown` clears it (and tears down what that run left), then "
            "run again. Nothing was run"
        )

# before Snakemake's own checks of write-protected outputs
if not bc_smk.dry_run_requested():
    try:
        from benchcast import preflight as _preflight

        _preflight.check_writable("results")
    except BenchcastError as exc:
        raise WorkflowError(f"benchcast: {exc}") from None

STUDIES = config["studies"]
RUN = config.get("run", {})
SELECTED = RUN.get("studies") or list(STUDIES)
for _name in SELECTED:
    if _name not in STUDIES:
        raise WorkflowError(f"config: run.studies: unknown study {_name!r}")

from benchcast import devices as bc_devices  # noqa: E402
from benchcast import fio as bc_fio  # noqa: E402
from benchcast import plan as bc_plan  # noqa: E402
from benchcast import quality as bc_quality  # noqa: E402
from benchcast import settings as bc_settings  # noqa: E402

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
        raise WorkflowError(f"config: studies.{study}.devices: {exc}") from None
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
        raise WorkflowError(str(exc)) from None


#: Every run each selected study measures (fio cells, YCSB and ooc jobs on the devices this machine
#: has), built once (benchcast.plan): the get_* functions below read it.
PLAN = {study: _plan(study) for study in SELECTED}


def study_names(study):
    """What the study's sources bring, before any job runs: (figures, series, cells). Figures:
    (workload, block size, metric or None: any) of every device figure it measures (its fio grids
    on the devices this machine has) or imports; series: (benchmark, engine, workload, op; None:
    any) of its application results; cells: the imported application results (benchcast.preflight
    .CELL; None where the study also measures some). Imports are read by the import itself
    (benchcast.preflight); all three are None where it refuses a file (its own check, before any
    job, names it)."""
    from benchcast import fiojson as bc_fiojson
    from benchcast import preflight as bc_preflight

    sources = STUDIES[study]["sources"]
    measured = {n: s for n, s in sources.items() if s["type"] in ("ycsb", "ooc")}
    figures, series = set(), bc_config.measured_series(measured)
    cells = None if measured else set()
    seen = set()  # the devices the imports' rows name
    for name, src in sources.items():
        if src["type"] == "fio":
            figures |= {
                (bc_fiojson.workload(c["rw"], c.get("extra") or {}), c["bs"], None)
                for (s, _, _), c in PLAN[study].cells.items()
                if s == name
            }
        elif src["type"] in bc_preflight.IMPORT_KINDS:
            got = bc_preflight.import_names(
                src, list(STUDIES[study].get("devices", {})) or None
            )
            if got is None:
                return None, None, None
            figures |= got[0]
            series |= got[1]
            cells = None if cells is None else cells | got[2]
            seen |= got[3]
    try:
        bc_preflight.check_imported_devices(
            f"config: studies.{study}", STUDIES[study].get("devices", {}), seen
        )
    except BenchcastError as exc:
        raise WorkflowError(str(exc)) from None
    return figures, series, cells


def check_cards(study):
    """A spec card no device figure of the study can feed is an error, or with allow_unused: true a
    warning (here and in the run's last lines, onsuccess); returns the warnings. So is a feature
    name (features.workloads, block_sizes, metrics) no source of the study has (features
    .allow_unused). The report's focus must name application results the study has (its runs'
    names, its imported files'), and, where they are all imported, on screen.min_devices devices
    at its data size.
    """
    from benchcast import preflight as bc_preflight

    # read for every study: an imported device no imported row names is refused there
    measured, series, cells = study_names(study)
    # device figures alone: no card is predicted, no focus
    if not bc_config.has_series(STUDIES[study]):
        return []
    spec, where = STUDIES[study], f"config: studies.{study}"
    least = spec["screen"]["min_devices"]
    try:
        if series is not None:
            # the focus and the pairing rules name results the study has
            bc_config.check_series_names(where, spec, series)
        # every application result imported: the focus fitted at its data size
        if cells:
            bc_preflight.check_series_selection(where, spec.get("series"), cells)
            bc_preflight.check_focus_devices(
                where, spec.get("report", {}), least, cells, spec.get("series")
            )
        if measured is not None:  # the imports read: their application tables' series
            for src in spec["sources"].values():
                if src["type"] == "soga2018":
                    bc_preflight.check_app_series(src["app"], least)
                    bc_preflight.check_fio_figures(src["fio"], least)
    except BenchcastError as exc:
        raise WorkflowError(str(exc)) from None
    if measured is None:
        return []
    targets = spec.get("targets", {})
    cards = [
        (
            name,
            "none of its figures is measured or imported by the study, no model can use it",
            targets[name]["allow_unused"],
        )
        for name in bc_config.unused_cards(targets, measured)
    ]
    names = [
        (key, what, spec["features"]["allow_unused"])
        for key, what in bc_config.unused_features(spec["features"], measured)
    ]
    warnings = (
        unused(
            f"studies.{study}.targets",
            cards,
            ("fix its figures or set allow_unused: true", "it gets no prediction"),
        )
        + unused(
            f"studies.{study}.features",
            names,
            ("fix it or set features.allow_unused: true", "it is no candidate feature"),
        )
        + [w for w in [bc_preflight.one_size_warning(where, spec, cells)] if w]
        + [  # a figure of a card that no device has: a warning, the card's other figures serve
            f"benchcast: studies.{study}.targets.{key}: no device of the study has this figure, "
            f"no model uses it (its card's other figures do)"
            for key in bc_config.unused_figures(targets, measured)
        ]
    )
    # the cards and feature names first: a pairing that allows none of them says less
    if series is not None:
        try:
            bc_preflight.check_figure_devices(where, spec, least)
            bc_preflight.check_focus_pairing(where, spec, measured, series)
        except BenchcastError as exc:
            raise WorkflowError(str(exc)) from None
    return warnings


def unused(where, items, advice):
    """Names of ``where`` the study cannot use, (key, what, allowed): a config error, or where
    allowed (allow_unused: true) a warning, returned for the run's last lines. One implementation
    for spec cards and feature names; ``advice``: (what to do, what it means when allowed).
    """
    warnings = []
    for key, what, allowed in items:
        if not allowed:
            raise WorkflowError(f"config: {where}.{key}: {what}; {advice[0]}")
        warnings.append(
            f"benchcast: {where}.{key}: {what} (allow_unused: true): {advice[1]}"
        )
    return warnings


# the import sources' files are read here once, by the run's own process (not by each job's)
UNUSED_CARDS = (
    [w for study in SELECTED for w in check_cards(study)]
    if workflow.is_main_process
    else []
)
for _warning in UNUSED_CARDS:
    logger.warning(_warning)


def warn_unused_cards():
    """onsuccess: the spec cards and feature names allowed unused, in the run's last lines."""
    for warning in UNUSED_CARDS:
        logger.warning(warning)


#: What each wildcard matches (benchcast.plan: the engines, modes and programs of their modules).
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


#: Device keys that do not shape a measurement: changing them must not rerun a benchmark.
COSMETIC_DEVICE_KEYS = {"label", "node", "constraint"}


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


STOP_KEYS = ("max_repeats", "stable_cv")

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
#: in the environment (benchcast.quality.guard), not as params: how a run is protected is not what
#: it measures, so a change of it never plans a measurement again (each run's record says what it had).
os.environ[bc_quality.GUARD_ENV] = json.dumps(bc_quality.guard_settings(RUN))


def run_of(wildcards):
    """The planned run (benchcast.plan.Run) a measuring job's wildcards name."""
    w = dict(wildcards.items())
    fields = {k: int(v) if k == "size" else v for k, v in w.items()}
    fields["repeat"] = int(fields["repeat"])
    return bc_plan.Run(type=get_source(wildcards)["type"], **fields)


def get_previous_runs(wildcards):
    """Repeat until stable: a run beyond the source's ``repeats`` reads the earlier runs of its fio
    cell or YCSB job (and waits for them); the runs within ``repeats`` read nothing."""
    run = run_of(wildcards)
    if run.repeat < get_source(wildcards)["repeats"]:
        return []
    return [run.again(r).path() for r in range(run.repeat)]


def stop_rule(wildcards):
    """What a run beyond ``repeats`` needs to decide whether it is needed (nothing for the others,
    so that their recorded params stay as they were)."""
    previous = get_previous_runs(wildcards)
    if not previous:
        return {}
    src = get_source(wildcards)
    extra = int(wildcards.repeat) - bc_plan.planned_runs(src)
    if extra >= 0:
        return {
            "previous": previous,
            "spoil": {"thresholds": thresholds(), "extra": extra},
        }
    return {"previous": previous, "stable_cv": src["stable_cv"]}


def get_device_spec(wildcards):
    """The device's spec as a job gets it (JSON; without the keys that shape no measurement)."""
    return json.dumps(device_spec(wildcards.study, wildcards.device))


def get_state_path(wildcards):
    return state_path(wildcards.study, wildcards.device)


def get_fio_job(wildcards):
    """What a fio run measures (param ``cell``, JSON): the cell's options, the stop rule of a run
    beyond ``repeats``."""
    return json.dumps({**get_fio_cell(wildcards), **stop_rule(wildcards)})


def _job(wildcards):
    """What every YCSB and ooc job names first: study, device and its spec, state, source name."""
    return {
        "study": wildcards.study,
        "device": wildcards.device,
        "spec": device_spec(wildcards.study, wildcards.device),
        "state": state_path(wildcards.study, wildcards.device),
        "source_name": wildcards.source,
    }


def get_ycsb_job(wildcards):
    """A YCSB job's settings (param ``job``, JSON): a function of the wildcards alone, so Snakemake
    records it and a changed YCSB setting is a change of the measurement."""
    run = run_of(wildcards)
    return json.dumps(
        {
            **_job(wildcards),
            "source": get_ycsb_job_source(wildcards),
            "engine": run.engine,
            "size": run.size,
            "repeat": run.repeat,
            "jar": YCSB_JAR,
            "records": run.path(".csv"),
            "raw": run.path(""),
            **stop_rule(wildcards),
        }
    )


def get_ooc_job(wildcards):
    """An out-of-core job's settings (param ``job``, JSON), recorded as :func:`get_ycsb_job`'s."""
    run = run_of(wildcards)
    return json.dumps(
        {
            **_job(wildcards),
            "source": get_source(wildcards),
            "mode": run.mode,
            "repeat": run.repeat,
            "binaries": get_ooc_binaries(wildcards),
            "records": run.path(".csv"),
            "raw": run.path(""),
        }
    )


YCSB_SOURCES = sorted(str(p) for p in Path(BASE, "ycsb", "src").rglob("*.java"))
YCSB_JAR = "results/ycsb/benchcast-ycsb.jar"
OOC_DIR = str(Path(BASE, "ooc"))


def ooc_binary(program):
    return f"results/ooc/bin/{program}"


def get_ooc_binaries(wildcards):
    return {p: ooc_binary(p) for p in get_source(wildcards)["programs"]}


def get_ooc_binary_inputs(wildcards):
    """The programs an ooc job runs, ancient: rebuilding them never re-measures by itself."""
    return [ancient(b) for b in get_ooc_binaries(wildcards).values()]


def get_device_benchmarks(wildcards):
    """Every benchmark output on one device: the device's teardown waits for all of them."""
    if wildcards.study not in PLAN:
        return []
    return PLAN[wildcards.study].outputs(device=wildcards.device)


def get_fio_cell(wildcards):
    try:
        return PLAN[wildcards.study].cell(
            wildcards.source, wildcards.device, wildcards.cell
        )
    except KeyError:
        raise WorkflowError(
            f"fio: no cell {wildcards.cell} on device {wildcards.device} in "
            f"studies.{wildcards.study}.sources.{wildcards.source}"
        )


def get_run_records_inputs(wildcards):
    """A measured source's runs, the study's runs (their speed probes), and its devices' teardown
    records; a fio source also their provisioning records (the devices' provenance)."""
    study, source = wildcards.study, wildcards.source
    devs = PLAN[study].devices(source)
    # every run of the study: the machine's speed around each run is the median of theirs nearby
    out = {"runs": PLAN[study].outputs(source=source), "study_runs": PLAN[study].outputs()}
    if get_source(wildcards)["type"] == "fio":
        out["provisioned"] = [
            f"results/{study}/devices/{d}/provisioned.json" for d in devs
        ]
    out["torn_down"] = [f"results/{study}/devices/{d}/torn_down.json" for d in devs]
    return out


def get_ycsb_job_source(wildcards):
    """The YCSB source's settings as a job sees them: without the repeat-until-stable keys, which
    say how many runs there are, not how one is made."""
    return {k: v for k, v in get_source(wildcards).items() if k not in STOP_KEYS}


def get_source(wildcards):
    try:
        return STUDIES[wildcards.study]["sources"][wildcards.source]
    except KeyError:
        raise WorkflowError(
            f"config: studies.{wildcards.study}.sources: no source {wildcards.source!r}"
        )


def get_import_files(wildcards):
    src = get_source(wildcards)
    return {"fio": src["fio"], "app": src["app"]}


def get_import_inputs(wildcards):
    """The files an import source reads (folders and globs expanded): a changed, added or removed
    file reruns the import."""
    from benchcast import importers as bc_importers

    src = get_source(wildcards)
    if src["type"] == "ycsb_output":
        from benchcast import ycsb as bc_ycsb

        try:
            outputs = [
                p
                for run in src["runs"]
                for p in bc_importers.ycsb_output_files(run["files"])
            ]
        except BenchcastError as exc:
            raise WorkflowError(
                f"config: studies.{wildcards.study}.sources.{wildcards.source}.runs: {exc}"
            ) from None
        logs = [log for p in outputs for log in bc_ycsb.histogram_logs(p)]
        return sorted({str(p) for p in outputs + logs})
    entries = (
        src["files"].values() if isinstance(src["files"], dict) else [src["files"]]
    )
    try:
        return sorted(
            {
                str(p)
                for e in entries
                for p in bc_importers.input_files(
                    e, bc_importers.FILE_PATTERNS[src["type"]]
                )
            }
        )
    except BenchcastError as exc:
        raise WorkflowError(
            f"config: studies.{wildcards.study}.sources.{wildcards.source}.files: {exc}"
        ) from None


def get_import_digest(wildcards):
    """The contents of the files an import reads (benchcast.smk.files_digest): a file changed with
    its old modification time kept reruns the import too."""
    src = get_source(wildcards)
    if src["type"] == "soga2018":
        return bc_smk.files_digest(get_import_files(wildcards).values())
    return bc_smk.files_digest(get_import_inputs(wildcards))


# every import's files listed before the DAG is built: a missing file or a glob matching none is one
# line here (raised in the input function, it ended in Snakemake's traceback; a paper-shaped table
# that is not there was no error at all where the import's earlier output stood)
if workflow.is_main_process:
    from types import SimpleNamespace

    for _study in SELECTED:
        for _name, _src in STUDIES[_study]["sources"].items():
            if _src["type"] in ("fio_json", "pkb", "records", "ycsb_output"):
                get_import_inputs(SimpleNamespace(study=_study, source=_name))
            for _key in ("fio", "app") if _src["type"] == "soga2018" else ():
                if not os.path.exists(_src[_key]):
                    raise WorkflowError(
                        f"config: studies.{_study}.sources.{_name}.{_key}: {_src[_key]}: no such file"
                    )


def reported(path, subcategory, caption=None):
    """A study's output shown in the report: results/{study}/<path>, under the study and
    ``subcategory``, with the caption report/<caption>.rst (default: the file's own name).
    """
    caption = caption or os.path.splitext(os.path.basename(path))[0]
    return report(
        f"results/{{study}}/{path}",
        caption=f"../report/{caption}.rst",
        category="{study}",
        subcategory=subcategory,
    )


def get_focus(wildcards):
    rep = STUDIES[wildcards.study].get("report", {})
    return {
        "focus": rep.get("focus", {}),
        "focus_data_size": rep.get("focus_data_size"),
    }


def get_device_labels(wildcards):
    devs = STUDIES[wildcards.study].get("devices", {})
    return {d: spec.get("label", d) for d, spec in devs.items()}


def has_series(study):
    return bc_config.has_series(STUDIES[study])


def has_ooc(study):
    return any(src["type"] == "ooc" for src in STUDIES[study]["sources"].values())


def get_memory_limits(wildcards):
    """Record source label -> the memory its data could be cached in (benchcast.settings.memory_lines)."""
    return bc_settings.memory_lines(STUDIES[wildcards.study]["sources"])


def quality_tables(study):
    """The per-source quality tables of a study's measured sources (made beside their records)."""
    return [
        f"results/{study}/quality/{src['type']}/{name}.csv"
        for name, src in STUDIES[study]["sources"].items()
        if src["type"] in ("fio", "ycsb", "ooc")
    ]


def get_quality_inputs(wildcards):
    """The quality tables of a study's measured sources, and its verdicts when it has series."""
    study = wildcards.study
    verdicts = [f"results/{study}/validation/verdicts.csv"] if has_series(study) else []
    return {"tables": quality_tables(study), "verdicts": verdicts}


def get_final_outputs():
    """The final targets, every output of the report's rules (REPORT_RULES; with out-of-core sources
    REPORT_OOC_RULES; with series REPORT_SERIES_RULES, in rules/report.smk) and the quality tables
    of the measured sources; with series also
    every analysis output (ANALYSIS_RULES, in rules/analysis.smk) and the record tables.
    """
    out = []
    for study in SELECTED:
        out += rule_outputs(REPORT_RULES, study)
        # the per-source quality tables, made beside each source's records
        out += quality_tables(study)
        if has_ooc(study):
            out += rule_outputs(REPORT_OOC_RULES, study)
        if has_series(study):
            out += rule_outputs(REPORT_SERIES_RULES + ANALYSIS_RULES, study)
            out += get_record_files_of(study)
    if workflow.is_main_process:
        from benchcast import preflight as _preflight

        try:
            _preflight.check_output_files(out)
        except BenchcastError as exc:
            raise WorkflowError(f"benchcast: {exc}") from None
    return out


def rule_outputs(names, study):
    """Every output of the named per-study rules, not only those a later rule reads (a chart's HTML
    beside its SVG, every table of a table rule, predictions.csv behind the tables): Snakemake
    plans a missing file only when it is needed, so a file a failed or killed job left missing
    would otherwise stay missing, with exit 0 and stale results beside it."""
    return [
        f
        for name in names
        for f in expand(
            [
                strip_wildcard_constraints(str(p))
                for p in workflow.get_rule(name).output
            ],
            study=study,
        )
    ]


def refuse_changed_outputs():
    """onstart: stop before anything runs where a job would read a file this workflow made (an
    analysis, table or record file) that was changed after its job wrote it (its time is no longer
    the one Snakemake recorded, and its content not what the jobs after it read): a record file or
    aggregated.csv cut short or edited by hand, whose jobs after it failed (or finished) on it after
    rewriting their outputs. Raw measurements are not checked here (the re-measure guard keeps
    them)."""
    if workflow.touch:
        return
    dag = workflow.dag
    needrun = set(dag.needrun_jobs())
    for job in needrun:
        updated = {str(f) for f in dag.reason(job).updated_input}
        for dep in dag.dependencies[job]:
            if dep in needrun or dep.rule.name in MEASURING_RULES:
                continue
            for f in (x for x in dep.output if str(x) in updated):
                record = workflow.persistence.metadata(f)
                if record is None or record.endtime is None or not os.path.isfile(f):
                    continue
                # what the job reading it recorded of it (files up to 1 MB): none, no judgement
                read = workflow.persistence.input_checksums(job, str(f)) - {None}
                if (
                    read
                    and abs(os.path.getmtime(f) - record.endtime) > 1e-3
                    and f"sha256:{bc_smk.file_sha256(str(f))}" not in read
                ):
                    raise WorkflowError(
                        f"benchcast: {f}: changed after the run made it (rule {dep.rule.name}); the jobs "
                        f"after it would read it as it is now. Delete it, and the next run makes it "
                        f"again from its inputs. Nothing was run"
                    )


def refuse_remeasure():
    """onstart: stop before anything runs when a planned measuring job would overwrite an existing
    raw result the user did not name (--config remeasure=[...] or --forcerun); benchcast.protect.
    """
    from benchcast import protect

    if workflow.touch:  # --touch marks existing results up to date: it measures nothing
        return
    planned = [
        (job.rule.name, [str(f) for f in job.output])
        for job in workflow.dag.needrun_jobs()
        if job.rule.name in MEASURING_RULES
    ]
    why = protect.refusal(
        planned,
        patterns=config.get("remeasure", []),
        forcerun=set(workflow.dag_settings.forcerun or ()),
        listing="logs/remeasure-refused.txt",
    )
    if why:
        raise WorkflowError(why)
    preflight()
    if (
        workflow.local_exec
    ):  # jobs run here, as this user: a device that needs root stops the run now
        for job in workflow.dag.needrun_jobs():
            if job.rule.name == "provision_device":
                spec = STUDIES[job.wildcards.study]["devices"][job.wildcards.device]
                why = bc_devices.needs_root(job.wildcards.device, spec)
                if why:
                    raise WorkflowError(
                        f"benchcast: studies.{job.wildcards.study}.devices.{why}; run as root, "
                        f"or mark the device optional: true"
                    )


def machine_check():
    """onstart: before measuring, one line of what else uses the machine; with
    run.interference.wait_quiet, wait (that long at most) for a quiet machine (benchcast.quality).
    """
    if not any(j.rule.name in MEASURING_RULES for j in workflow.dag.needrun_jobs()):
        return
    inter = RUN.get("interference", {})
    bc_quality.wait_for_quiet(
        inter.get("wait_quiet", 0),
        inter.get("other_cpu"),
        lambda line: logger.info(f"benchcast: {line}"),
        exclude=(os.getpid(),),
        io_some=inter.get("io_some"),
    )


def start_progress():
    """onstart: one line per finished benchmark job (runs done / planned, time left), from a thread
    that only looks for the jobs' outputs (benchcast.progress)."""
    import time

    from benchcast import progress as bc_progress

    planned = [
        bc_progress.Planned(
            kind,
            tuple(str(f) for f in job.output),
            bc_progress.WEIGHTS[kind](
                STUDIES[job.wildcards.study]["sources"][job.wildcards.source]
            ),
        )
        for job in workflow.dag.needrun_jobs()
        if job.rule.name in MEASURING_RULES
        for kind in [job.rule.name.split("_")[0]]
    ]
    if planned:
        bc_progress.watch(
            bc_progress.Progress(planned, time.monotonic()),
            lambda line: logger.info(line),
        )


def preflight():
    """onstart: the results folder takes files, and every existing file a planned records or import
    job will read parses; else one line naming it, before any job deletes an earlier result.
    """
    from benchcast import preflight as bc_preflight

    try:
        jobs = list(workflow.dag.needrun_jobs())
        produced = {str(f) for job in jobs for f in job.output}
        for job in jobs:
            if job.rule.name == "run_records":
                for f in map(str, job.input):
                    if f not in produced and os.path.exists(f):
                        bc_preflight.check_file(f)
            elif job.rule.name == "import_soga2018":
                devs = list(STUDIES[job.wildcards.study].get("devices", {})) or None
                bc_preflight.check_import(job.input.fio, job.input.app, devs)
            elif job.rule.name.startswith("import_"):
                bc_preflight.check_import_source(
                    get_source(job.wildcards),
                    get_device_ids(job.wildcards),
                    key=f"config: studies.{job.wildcards.study}.sources.{job.wildcards.source}",
                )
    except BenchcastError as exc:
        refuse_last(f"benchcast: {exc}")


def refuse_last(line):
    """Stop the run before any job ran with ``line`` (naming the file and what is wrong) as the
    last line on stderr, once: printed when the process exits, after Snakemake's report of the
    stop, so that no listing of jobs or input files buries it."""
    import atexit

    atexit.register(lambda: print(line, file=sys.stderr, flush=True))
    raise WorkflowError(
        "benchcast: an input was refused before any job ran; why is the last line"
    )


def start_stop_watch():
    """onstart: SIGTERM/SIGINT/SIGHUP stop the run within a minute: Snakemake's own SIGTERM handling
    (stop scheduling) run from a thread, the running jobs told to stop, which tear down their
    devices, then the onerror teardown (benchcast.stop)."""
    import signal

    from benchcast import stop as bc_stop

    global STOP
    # the scheduler's own handler: stop scheduling, wait for the running jobs
    snakemake_stop = signal.getsignal(signal.SIGTERM)
    STOP = bc_stop.watch(
        then=snakemake_stop if callable(snakemake_stop) else None,
        state_dirs=[state_dir(study) for study in SELECTED],
        server_dirs=[f"results/{study}" for study in SELECTED],
    )


STOP = None


def state_dir(study):
    return Path(f"results/{study}/devices/state")


#: Rules whose jobs leave a device provisioned on their node.
DEVICE_RULES = MEASURING_RULES | {"provision_device", "teardown_device"}


def release_devices_at_exit():
    """Inside a Slurm job (a device's round of benchmarks, its provisioning or its teardown): when
    the job's Snakemake process exits, finished or stopped by Slurm (scancel, time limit: SIGTERM,
    then SIGKILL after KillWait), tear down the devices of its jobs on this node
    (benchcast.devices.release). The node is the job's only while it runs; the next job of a device
    provisions it again. Not on one machine, where a device stays until its teardown job.
    """
    if not os.environ.get("SLURM_JOB_ID") or not (
        workflow.remote_exec or workflow.subprocess_exec
    ):
        return
    import atexit

    def release():
        # only the job's own Snakemake (executor slurm-jobstep), not the one it starts per rule
        # job (srun): the device stays up from one benchmark of the round to the next
        plugin = getattr(workflow, "executor_plugin", None)
        if "slurm-jobstep" not in str(getattr(plugin, "name", "")):
            return
        targets = getattr(workflow.dag_settings, "target_jobs", None) or ()
        states = {
            state_path(t.wildcards_dict["study"], t.wildcards_dict["device"])
            for t in targets
            if t.rulename in DEVICE_RULES
        }
        for path, res in bc_devices.release(sorted(states)).items():
            print(
                f"benchcast: released {path} on leaving the node: {res}",
                file=sys.stderr,
            )

    atexit.register(release)


release_devices_at_exit()


def clear_failed_outputs():
    """onerror, with keep-incomplete (profiles/slurm, so that a cancelled or failed round job keeps
    the benchmarks it finished): remove what Snakemake would have removed for the other failed jobs,
    whose outputs may be partial. Measurements are exempt: they are written under a temporary name
    and renamed when whole (benchcast.protect), so a stopped one leaves no output."""
    import shutil

    if not workflow.execution_settings.keep_incomplete:
        return
    for failed in getattr(workflow.scheduler, "failed", ()):
        for job in failed.jobs if failed.is_group() else [failed]:
            if job.rule.name in MEASURING_RULES:
                continue
            for f in map(str, job.output):
                if os.path.isdir(f) and not os.path.islink(f):
                    shutil.rmtree(f)
                elif os.path.lexists(f):
                    os.remove(f)
                else:
                    continue
                logger.warning(f"benchcast: removed {f}: its job failed")


def teardown_everything():
    """After a failed or interrupted run (onerror): tear down every device a state record still
    lists and stop any MariaDB server a killed job left, so nothing stays mounted or running.
    A stopped run (SIGTERM/SIGINT/SIGHUP) ends with one line: what was stopped and torn down.
    On a cluster this reaches only the head node's devices; run `snakemake teardown` there too.
    """
    from benchcast import mariadb as bc_mariadb
    from benchcast import stop as bc_stop

    stopped = STOP is not None and STOP.signal is not None
    if stopped:
        # the stop thread has signalled the jobs (and killed those past the grace time)
        STOP.done.wait(bc_stop.GRACE_S + 10)
    servers = 0
    for study in SELECTED:
        try:
            servers += len(bc_mariadb.teardown_all(f"results/{study}"))
        except Exception as exc:  # keep going: the devices matter more
            logger.error(f"benchcast: stopping MariaDB servers of {study}: {exc}")
        if state_dir(study).is_dir():
            try:
                for path, res in bc_devices.teardown_all(state_dir(study)).items():
                    if not stopped:
                        logger.warning(f"benchcast: teardown {path}: {res}")
            except BenchcastError as exc:
                logger.error(f"benchcast: {exc}")
    if stopped:
        left = bc_stop.live_devices([state_dir(study) for study in SELECTED])
        logger.error(bc_stop.summary(STOP, list(left), servers))
