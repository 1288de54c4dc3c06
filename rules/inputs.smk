# The measuring jobs' and the imports' input and param functions (rules/common.smk: the plan).


def run_of(wildcards):
    """The planned run (benchcast.sources.plan.Run) a measuring job's wildcards name."""
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
            "source": get_ooc_job_source(wildcards),
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
    out = {
        "runs": PLAN[study].outputs(source=source),
        "study_runs": PLAN[study].outputs(),
    }
    if get_source(wildcards)["type"] == "fio":
        out["provisioned"] = [
            f"results/{study}/devices/{d}/provisioned.json" for d in devs
        ]
    out["torn_down"] = [f"results/{study}/devices/{d}/torn_down.json" for d in devs]
    return out


def get_ycsb_job_source(wildcards):
    """The YCSB source's settings as one job sees them (recorded, so a change re-plans the job):
    its own engine and data size, without the keys that say which runs exist (``RUN_AXES``).
    Adding or dropping a size, an engine, a device or a repeat leaves a measured run's settings
    as they were."""
    run = run_of(wildcards)
    return {
        **_job_source(wildcards),
        "engines": [run.engine],
        "data_sizes": [f"{run.size}B"],
    }


def get_ooc_job_source(wildcards):
    """An out-of-core source's settings as one job sees them: its own mode, as
    :func:`get_ycsb_job_source`."""
    return {**_job_source(wildcards), "modes": [run_of(wildcards).mode]}


def _job_source(wildcards):
    return {k: v for k, v in get_source(wildcards).items() if k not in RUN_AXES}


def get_import_files(wildcards):
    src = get_source(wildcards)
    return {"fio": src["fio"], "app": src["app"]}


def get_import_inputs(wildcards):
    """The files an import source reads (folders and globs expanded): a changed, added or removed
    file reruns the import."""
    from benchcast.sources.parse import importers as bc_importers

    src = get_source(wildcards)
    if src["type"] == "ycsb_output":
        from benchcast.sources.run import ycsb as bc_ycsb

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
    """The contents of the files an import reads (benchcast.core.smk.files_digest): a file changed with
    its old modification time kept reruns the import too."""
    src = get_source(wildcards)
    if src["type"] == "soga2018":
        return bc_smk.files_digest(get_import_files(wildcards).values())
    return bc_smk.files_digest(get_import_inputs(wildcards))
