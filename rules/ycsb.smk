# YCSB: our bindings built once; load + workloads per (device, engine, data size, repeat).


rule build_ycsb:
    input:
        pom="ycsb/pom.xml",
        sources=YCSB_SOURCES,
    output:
        YCSB_JAR,
    log:
        "logs/build_ycsb.log",
    conda:
        "../envs/ycsb.yaml"
    params:
        script=f"{BASE}/scripts/build_ycsb.sh",
    shell:
        "bash {params.script:q} {output} > {log} 2>&1"


rule ycsb_run:
    input:
        # ancient: rebuilding the bindings never re-measures by itself
        jar=ancient(YCSB_JAR),
        provisioned="results/{study}/devices/{device}/provisioned.json",
        previous=get_previous_runs,
    output:
        records=protected(
            "results/{study}/ycsb/{source}/{device}/{engine}/{size}/run{repeat}.csv"
        ),
        raw=protected(
            directory(
                "results/{study}/ycsb/{source}/{device}/{engine}/{size}/run{repeat}"
            )
        ),
    log:
        "logs/{study}/ycsb/{source}/{device}/{engine}/{size}/run{repeat}.log",
    priority: get_round
    conda:
        "../envs/ycsb.yaml"
    resources:
        benchmark_slots=1,
        machine=MACHINE,
        slurm_extra=get_device_slurm_extra,
        constraint=get_device_constraint,
    params:
        # a function of the wildcards alone: Snakemake records such params (not those that take
        # input or output), so a changed YCSB setting is seen as a change of the measurement
        job=lambda wc: json.dumps(
            {
                "study": wc.study,
                "device": wc.device,
                "spec": device_spec(wc.study, wc.device),
                "state": state_path(wc.study, wc.device),
                "source_name": wc.source,
                "source": get_ycsb_job_source(wc),
                "engine": wc.engine,
                "size": int(wc.size),
                "repeat": int(wc.repeat),
                "jar": YCSB_JAR,
                "records": ycsb_output(wc, ".csv"),
                "raw": ycsb_output(wc, ""),
                **stop_rule(wc),
            }
        ),
    shell:
        "python -m benchcast.ycsb_job --job {params.job:q} --log {log}"


rule ycsb_records:
    input:
        unpack(get_ycsb_record_inputs),
    output:
        "results/{study}/records/ycsb/{source}.csv",
        "results/{study}/quality/ycsb/{source}.csv",
    log:
        "logs/{study}/ycsb_records/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        quality=get_quality_params,
    script:
        "../scripts/join_records.py"
