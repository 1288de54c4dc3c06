# onstart / onerror / onsuccess (Snakefile): refusals before any job, progress, stop, teardown.


def recover_killed_run():
    """onstart, when the run before was killed (RECOVERY): on a local run, tear down the MariaDB
    servers and devices it left, of every study (as `snakemake teardown`); then the one line of
    what the start of this run did. On a cluster the devices are on the nodes: the line says so.
    """
    if RECOVERY is None:
        return
    from benchcast.sources.run import recover as bc_recover

    if workflow.local_exec:
        try:
            bc_recover.teardown_left(RECOVERY, [f"results/{s}" for s in STUDIES])
        except BenchcastError as exc:
            refuse(
                f"benchcast: a previous run in this folder was killed; tearing down what it left "
                f"failed: {exc}. Nothing was run"
            )
    logger.warning(bc_recover.summary(RECOVERY, workflow.local_exec))


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
                    refuse(
                        f"benchcast: {f}: changed after the run made it (rule {dep.rule.name}); the jobs "
                        f"after it would read it as it is now. Delete it, and the next run makes it "
                        f"again from its inputs. Nothing was run"
                    )


def refuse_remeasure():
    """onstart: stop before anything runs when a planned measuring job would overwrite an existing
    raw result the user did not name (--config remeasure=[...] or --forcerun); benchcast.core.protect.
    """
    from benchcast.core import protect

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
        refuse(why)
    preflight()
    if (
        workflow.local_exec
    ):  # jobs run here, as this user: a device that needs root stops the run now
        for job in workflow.dag.needrun_jobs():
            if job.rule.name == "provision_device":
                spec = STUDIES[job.wildcards.study]["devices"][job.wildcards.device]
                why = bc_devices.needs_root(job.wildcards.device, spec)
                if why:
                    refuse(
                        f"benchcast: studies.{job.wildcards.study}.devices.{why}; run as root, "
                        f"or mark the device optional: true"
                    )


def machine_check():
    """onstart: before measuring, one line of what else uses the machine; with
    run.interference.wait_quiet, wait (that long at most) for a quiet machine (benchcast.sources.quality).
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
    that only looks for the jobs' outputs (benchcast.core.progress)."""
    import time

    from benchcast.core import progress as bc_progress

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
    """onstart: every existing raw output a planned records job will read parses; else one line
    naming it, before any job deletes an earlier result. (The imported files are read, checks and
    all, before the DAG is built: rules/checks.smk.)"""
    from benchcast.sources.parse import preflight as bc_preflight

    try:
        jobs = list(workflow.dag.needrun_jobs())
        produced = {str(f) for job in jobs for f in job.output}
        for job in jobs:
            if job.rule.name == "run_records":
                for f in map(str, job.input):
                    if f not in produced and os.path.exists(f):
                        bc_preflight.check_file(f)
    except BenchcastError as exc:
        refuse(f"benchcast: {exc}")


def start_stop_watch():
    """onstart: SIGTERM/SIGINT/SIGHUP stop the run within a minute: Snakemake's own SIGTERM handling
    (stop scheduling) run from a thread, the running jobs told to stop, which tear down their
    devices, then the onerror teardown (benchcast.core.stop)."""
    import signal

    from benchcast.core import stop as bc_stop

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
    and renamed when whole (benchcast.core.protect), so a stopped one leaves no output.
    """
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
    from benchcast.sources.run import mariadb as bc_mariadb
    from benchcast.core import stop as bc_stop

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
