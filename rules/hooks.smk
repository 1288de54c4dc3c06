# onstart / onerror / onsuccess: refusals before any job, progress, stop, teardown; and what a
# Slurm job does as it exits. The code is benchcast.workflow.hooks; what it reads of Snakemake's run
# goes through benchcast.core.smk.
from benchcast.workflow import hooks as bc_hooks

HOOKS = bc_hooks.Hooks(
    workflow=workflow,
    studies=STUDIES,
    selected=SELECTED,
    run=RUN,
    remeasure=config.get("remeasure", []),
    recovery=RECOVERY,
    logger=logger,
    refuse=refuse,
    measuring_rules=frozenset(MEASURING_RULES),
)
# inside a Slurm job: when its Snakemake exits, the devices of its jobs on this node are released
HOOKS.release_devices_at_exit(state_path)


onstart:
    HOOKS.recover_killed_run()
    HOOKS.start_stop_watch()
    HOOKS.refuse_remeasure()
    HOOKS.refuse_changed_outputs()
    HOOKS.machine_check()
    HOOKS.start_progress()


onerror:
    HOOKS.clear_failed_outputs()
    HOOKS.teardown_everything()


onsuccess:
    # the spec cards and feature names allowed unused (rules/checks.smk), in the run's last lines
    for warning in UNUSED_CARDS:
        logger.warning(warning)
