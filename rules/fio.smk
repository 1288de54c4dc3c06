# fio grids: one job and one JSON per (study, source, device, cell, repeat); records per source.
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
        json=protected("results/{study}/fio/{source}/{device}/{cell}/run{repeat}.json"),
        jobfile="results/{study}/fio/{source}/{device}/{cell}/run{repeat}.fio",
    log:
        "logs/{study}/fio/{source}/{device}/{cell}/run{repeat}.log",
    priority: get_round
    conda:
        "../envs/devices.yaml"
    resources:
        benchmark_slots=1,
        machine=MACHINE,
        slurm_extra=get_device_slurm_extra,
        constraint=get_device_constraint,
    params:
        spec=lambda wc: json.dumps(device_spec(wc.study, wc.device)),
        state=lambda wc: state_path(wc.study, wc.device),
        cell=lambda wc: json.dumps(get_fio_job_cell(wc)),
    shell:
        "python -m benchcast.fio run-cell --device {wildcards.device} "
        "--spec {params.spec:q} --state {params.state:q} --cell {params.cell:q} "
        "--repeat {wildcards.repeat} --jobfile {output.jobfile} --output {output.json} --log {log}"


rule fio_records:
    input:
        unpack(get_fio_record_inputs),
    output:
        "results/{study}/records/fio/{source}.csv",
        "results/{study}/quality/fio/{source}.csv",
    log:
        "logs/{study}/fio_records/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        quality=get_quality_params,
    script:
        "../scripts/fio_records.py"
