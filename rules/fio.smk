# fio grids: one job and one JSON per (study, source, device, cell, repeat).
#
# The measuring rules (fio_run here, ycsb_run, provisioning and teardown) are shell commands over the
# package (`python -m benchcast.fio ...`), not `script:` rules: with the `code` rerun trigger,
# Snakemake reruns a job whose code changed, and a rule's code is its script or its command line.
# A command line changes only when what is measured changes (its params), so editing Python never
# re-measures a device; the analysis rules are scripts and do rerun when their code changes.


rule fio_run:
    input:
        provisioned="results/{study}/devices/{device}/provisioned.json",
        previous=get_previous_runs,
    output:
        # results/{study}/fio/{source}/{device}/{cell}/run{repeat}.json and .fio (benchcast.sources.plan)
        json=protected(bc_plan.pattern("fio", ".json")),
        jobfile=bc_plan.pattern("fio", ".fio"),
    log:
        bc_plan.pattern("fio", ".log", root="logs"),
    priority: get_round
    conda:
        "../envs/devices.yaml"
    resources:
        **MEASURING_RESOURCES,
    params:
        spec=get_device_spec,
        state=get_state_path,
        cell=get_fio_job,
    shell:
        "python -m benchcast.fio run-cell --device {wildcards.device} "
        "--spec {params.spec:q} --state {params.state:q} --cell {params.cell:q} "
        "--repeat {wildcards.repeat} --jobfile {output.jobfile} --output {output.json} --log {log}"
