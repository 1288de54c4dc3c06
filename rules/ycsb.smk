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
        # results/{study}/ycsb/{source}/{device}/{engine}/{size}/run{repeat}.csv and the raw
        # folder beside it (benchcast.sources.plan)
        records=protected(bc_plan.pattern("ycsb", ".csv")),
        raw=protected(directory(bc_plan.pattern("ycsb", ""))),
    log:
        bc_plan.pattern("ycsb", ".log", root="logs"),
    priority: get_round
    conda:
        "../envs/ycsb.yaml"
    resources:
        **MEASURING_RESOURCES,
    params:
        job=get_ycsb_job,
    shell:
        "python -m benchcast.ycsb_job --job {params.job:q} --log {log}"
