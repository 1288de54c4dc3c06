"""The workflow's hooks (rules/hooks.smk: onstart, onerror, and what a Slurm job does as it exits):
refusals before any job, the machine check, progress, stop, teardown.

:class:`Hooks` holds what they read of the workflow (the studies, the run's settings, Snakemake's
``workflow`` object and ``logger``, ``refuse`` of rules/common.smk); what they read of Snakemake's
run (the planned jobs, the failed ones...) goes through :mod:`benchcast.core.smk`, the adapter.
In sources/ because it drives the devices and the sources' servers (teardown, recovery).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import BenchcastError
from .. import devices as bc_devices
from ..core import smk as bc_smk


def state_dir(study) -> Path:
    """The folder of a study's device state records."""
    return Path(f"results/{study}/devices/state")


@dataclass
class Hooks:
    """The workflow as its hooks see it, and the stop watch onstart started (for onerror)."""

    workflow: object  #: Snakemake's ``workflow`` (read through benchcast.core.smk only)
    studies: dict  #: config["studies"]
    selected: list  #: the studies this run builds
    run: dict  #: config["run"]
    remeasure: list  #: config["remeasure"]: the raw results the user asks to measure again
    recovery: object  #: what the start of this run did after a killed one (sources.recover), or None
    logger: object  #: Snakemake's logger
    refuse: Callable[[str], None]  #: stop before any job runs with one line (rules/common.smk)
    measuring_rules: frozenset  #: rules whose outputs are raw measurements
    stop: object = field(default=None, init=False)  #: benchcast.core.stop's watch, once started

    def measuring(self, jobs) -> list:
        return [j for j in jobs if j.rule in self.measuring_rules]

    def recover_killed_run(self) -> None:
        """onstart, when the run before was killed (``recovery``): on a local run, tear down the
        MariaDB servers and devices it left, of every study (as `snakemake teardown`); then the one
        line of what the start of this run did. On a cluster the devices are on the nodes: the line
        says so."""
        if self.recovery is None:
            return
        from ..sources.run import recover as bc_recover

        local = bc_smk.runs_jobs_here(self.workflow)
        if local:
            try:
                bc_recover.teardown_left(self.recovery, [f"results/{s}" for s in self.studies])
            except BenchcastError as exc:
                self.refuse(
                    f"benchcast: a previous run in this folder was killed; tearing down what it left "
                    f"failed: {exc}. Nothing was run"
                )
        self.logger.warning(bc_recover.summary(self.recovery, local))

    def refuse_changed_outputs(self) -> None:
        """onstart: stop before anything runs where a job would read a file this workflow made (an
        analysis, table or record file) that was changed after its job wrote it (its time is no
        longer the one Snakemake recorded, and its content not what the jobs after it read): a record
        file or aggregated.csv cut short or edited by hand, whose jobs after it failed (or finished)
        on it after rewriting their outputs. Raw measurements are not checked here (the re-measure
        guard keeps them)."""
        wf = self.workflow
        if bc_smk.touch_run(wf):
            return
        needrun = set(bc_smk.needrun_jobs(wf))
        for job in needrun:
            updated = bc_smk.updated_inputs(wf, job)
            for dep in bc_smk.dependencies(wf, job):
                if dep in needrun or dep.rule in self.measuring_rules:
                    continue
                for f in (x for x in dep.output if x in updated):
                    endtime = bc_smk.output_end_time(wf, dep, f)
                    if endtime is None or not os.path.isfile(f):
                        continue
                    # what the job reading it recorded of it (files up to 1 MB): none, no judgement
                    read = bc_smk.recorded_checksums(wf, job, f)
                    if (
                        read
                        and abs(os.path.getmtime(f) - endtime) > 1e-3
                        and f"sha256:{bc_smk.file_sha256(f)}" not in read
                    ):
                        self.refuse(
                            f"benchcast: {f}: changed after the run made it (rule {dep.rule}); the jobs "
                            f"after it would read it as it is now. Delete it, and the next run makes it "
                            f"again from its inputs. Nothing was run"
                        )

    def refuse_remeasure(self) -> None:
        """onstart: stop before anything runs when a planned measuring job would overwrite an
        existing raw result the user did not name (--config remeasure=[...] or --forcerun);
        benchcast.core.protect. Then :meth:`preflight`, and on a local run a device that needs root
        stops the run (jobs run here, as this user)."""
        from ..core import protect

        wf = self.workflow
        if bc_smk.touch_run(wf):  # --touch marks existing results up to date: it measures nothing
            return
        jobs = bc_smk.needrun_jobs(wf)
        why = protect.refusal(
            [(job.rule, list(job.output)) for job in self.measuring(jobs)],
            patterns=self.remeasure,
            forcerun=bc_smk.forced(wf),
            listing="logs/remeasure-refused.txt",
        )
        if why:
            self.refuse(why)
        self.preflight()
        if bc_smk.runs_jobs_here(wf):
            for job in jobs:
                if job.rule == "provision_device":
                    study, device = job.wildcards["study"], job.wildcards["device"]
                    why = bc_devices.needs_root(device, self.studies[study]["devices"][device])
                    if why:
                        self.refuse(
                            f"benchcast: studies.{study}.devices.{why}; run as root, "
                            f"or mark the device optional: true"
                        )

    def machine_check(self) -> None:
        """onstart: before measuring, one line of what else uses the machine; with
        run.interference.wait_quiet, wait (that long at most) for a quiet machine
        (benchcast.sources.run.quality)."""
        from ..sources.run import quality as bc_quality

        if not self.measuring(bc_smk.needrun_jobs(self.workflow)):
            return
        inter = self.run.get("interference", {})
        bc_quality.wait_for_quiet(
            inter.get("wait_quiet") or 0,
            inter.get("other_cpu"),
            lambda line: self.logger.info(f"benchcast: {line}"),
            exclude=(os.getpid(),),
            io_some=inter.get("io_some"),
        )

    def start_progress(self) -> None:
        """onstart: one line per finished benchmark job (runs done / planned, time left), from a
        thread that only looks for the jobs' outputs (benchcast.core.progress)."""
        import time

        from ..core import progress as bc_progress

        planned = [
            bc_progress.Planned(
                kind,
                job.output,
                bc_progress.WEIGHTS[kind](
                    self.studies[job.wildcards["study"]]["sources"][job.wildcards["source"]]
                ),
            )
            for job in self.measuring(bc_smk.needrun_jobs(self.workflow))
            for kind in [job.rule.split("_")[0]]
        ]
        if planned:
            bc_progress.watch(
                bc_progress.Progress(planned, time.monotonic()),
                lambda line: self.logger.info(line),
            )

    def preflight(self) -> None:
        """onstart: every existing raw output a planned records job will read parses; else one line
        naming it, before any job deletes an earlier result. (The imported files are read, checks
        and all, before the DAG is built: rules/checks.smk.)"""
        from ..sources.parse import preflight as bc_preflight

        try:
            jobs = bc_smk.needrun_jobs(self.workflow)
            produced = {f for job in jobs for f in job.output}
            for job in jobs:
                if job.rule == "run_records":
                    for f in job.input:
                        if f not in produced and os.path.exists(f):
                            bc_preflight.check_file(f)
        except BenchcastError as exc:
            self.refuse(f"benchcast: {exc}")

    def start_stop_watch(self) -> None:
        """onstart: SIGTERM/SIGINT/SIGHUP stop the run within a minute: Snakemake's own SIGTERM
        handling (stop scheduling) run from a thread, the running jobs told to stop, which tear down
        their devices, then the onerror teardown (benchcast.core.stop)."""
        import signal

        from ..core import stop as bc_stop

        # the scheduler's own handler: stop scheduling, wait for the running jobs
        snakemake_stop = signal.getsignal(signal.SIGTERM)
        self.stop = bc_stop.watch(
            then=snakemake_stop if callable(snakemake_stop) else None,
            state_dirs=[state_dir(study) for study in self.selected],
            server_dirs=[f"results/{study}" for study in self.selected],
        )

    def release_devices_at_exit(self, state_path: Callable[[str, str], str]) -> None:
        """Inside a Slurm job (a device's round of benchmarks, its provisioning or its teardown):
        when the job's Snakemake process exits, finished or stopped by Slurm (scancel, time limit:
        SIGTERM, then SIGKILL after KillWait), tear down the devices of its jobs on this node
        (benchcast.devices.release; ``state_path(study, device)``: a device's state record). The
        node is the job's only while it runs; the next job of a device provisions it again. Not on
        one machine, where a device stays until its teardown job."""
        if not os.environ.get("SLURM_JOB_ID") or not bc_smk.in_a_job(self.workflow):
            return
        import atexit

        atexit.register(release_at_exit, self.workflow, self.measuring_rules, state_path)

    def clear_failed_outputs(self) -> None:
        """onerror, with keep-incomplete (profiles/slurm, so that a cancelled or failed round job
        keeps the benchmarks it finished): remove what Snakemake would have removed for the other
        failed jobs, whose outputs may be partial. Measurements are exempt: they are written under
        a temporary name and renamed when whole (benchcast.core.protect), so a stopped one leaves no
        output."""
        import shutil

        if not bc_smk.keeps_incomplete(self.workflow):
            return
        for job in bc_smk.failed_jobs(self.workflow):
            if job.rule in self.measuring_rules:
                continue
            for f in job.output:
                if os.path.isdir(f) and not os.path.islink(f):
                    shutil.rmtree(f)
                elif os.path.lexists(f):
                    os.remove(f)
                else:
                    continue
                self.logger.warning(f"benchcast: removed {f}: its job failed")

    def teardown_everything(self) -> None:
        """After a failed or interrupted run (onerror): tear down every device a state record still
        lists and stop any MariaDB server a killed job left, so nothing stays mounted or running.
        A stopped run (SIGTERM/SIGINT/SIGHUP) ends with one line: what was stopped and torn down.
        On a cluster this reaches only the head node's devices; run `snakemake teardown` there too.
        """
        from ..core import stop as bc_stop
        from ..sources.run import mariadb as bc_mariadb

        stopped = self.stop is not None and self.stop.signal is not None
        if stopped:
            # the stop thread has signalled the jobs (and killed those past the grace time)
            self.stop.done.wait(bc_stop.GRACE_S + 10)
        servers = 0
        for study in self.selected:
            try:
                servers += len(bc_mariadb.teardown_all(f"results/{study}"))
            except Exception as exc:  # keep going: the devices matter more
                self.logger.error(f"benchcast: stopping MariaDB servers of {study}: {exc}")
            if state_dir(study).is_dir():
                try:
                    for path, res in bc_devices.teardown_all(state_dir(study)).items():
                        if not stopped:
                            self.logger.warning(f"benchcast: teardown {path}: {res}")
                except BenchcastError as exc:
                    self.logger.error(f"benchcast: {exc}")
        if stopped:
            left = bc_stop.live_devices([state_dir(study) for study in self.selected])
            self.logger.error(bc_stop.summary(self.stop, list(left), servers))


def device_rules(measuring_rules) -> set[str]:
    """Rules whose jobs leave a device provisioned on their node."""
    return set(measuring_rules) | {"provision_device", "teardown_device"}


def release_at_exit(workflow, measuring_rules, state_path) -> None:
    """At the exit of a Slurm job's Snakemake (:meth:`Hooks.release_devices_at_exit`): release the
    devices of its target jobs. Only the job's own Snakemake (executor slurm-jobstep), not the one
    it starts per rule job (srun): the device stays up from one benchmark of the round to the
    next."""
    if "slurm-jobstep" not in bc_smk.executor_name(workflow):
        return
    rules = device_rules(measuring_rules)
    states = {
        state_path(wildcards["study"], wildcards["device"])
        for rule, wildcards in bc_smk.target_jobs(workflow)
        if rule in rules
    }
    for path, res in bc_devices.release(sorted(states)).items():
        print(f"benchcast: released {path} on leaving the node: {res}", file=sys.stderr)
