"""The studies a run builds (rules/common.smk): the selected ones, the devices of each this machine
can have, each one's run plan; and how the workflow refuses, before any job runs."""

from benchcast import BenchcastError
from benchcast import devices as bc_devices
from benchcast.sources.run import fio as bc_fio
from benchcast.sources import plan as bc_plan


def refuse(line):
    """Stop the workflow before any job runs with ``line`` (the config key or the file, and what is
    wrong) as the last line on stderr, unframed: SystemExit passes by Snakemake's error report
    (``WorkflowError in file ...`` and the .smk frames) and Python prints the line as the process
    ends; a lock the run took is released on the way out. ``./benchcast.sh run`` reads the workflow
    once before Snakemake starts (benchcast.core.startup) and prints a refusal there alone.
    """
    raise SystemExit(line)


def selected(studies: dict, run: dict) -> list[str]:
    """The studies this run builds (run.studies, else every study); an unknown name raises."""
    names = run.get("studies") or list(studies)
    for name in names:
        if name not in studies:
            raise BenchcastError(f"config: run.studies: unknown study {name!r}")
    return names


def usable(studies: dict, study: str) -> tuple[list[str], list[str]]:
    """(the measured devices of a study this machine can have, the warnings of those skipped):
    optional ones it cannot have are skipped (and said so), a required one it cannot have raises,
    so the workflow stops before anything runs."""
    try:
        found = bc_devices.usable_devices(studies[study].get("devices", {}))
    except BenchcastError as exc:
        raise BenchcastError(f"config: studies.{study}.devices: {exc}") from None
    warnings = [
        f"benchcast: study {study}: skipping optional device {dev}: {reason}" for dev, reason in found.items() if reason
    ]
    return [d for d, reason in found.items() if reason is None], warnings


def plan(studies: dict, run: dict, study: str, devices: list[str]) -> bc_plan.StudyPlan:
    """Every run a study measures on ``devices`` (benchcast.sources.plan), with run.interference's
    extra runs."""
    inter = run.get("interference", {})
    return bc_plan.build(study, studies[study], devices, grid=bc_fio.expand_grid, extra_runs=inter.get("extra_runs", 0))
