# Out-of-core programs (STREAM, a 2-D stencil): built once; one job per (device, mode, repeat) runs
# every program at every working set, under the memory limit, over swap on the device or a mapped
# file of it.


rule build_ooc:
    input:
        source=f"{OOC_DIR}/{{program}}.c",
        header=f"{OOC_DIR}/ooc.h",
    output:
        ooc_binary("{program}"),
    log:
        "logs/build_ooc/{program}.log",
    conda:
        "../envs/ooc.yaml"
    shell:
        "python -m benchcast.ooc build {wildcards.program} {output} > {log} 2>&1"


rule ooc_run:
    input:
        # ancient: rebuilding the programs never re-measures by itself
        binaries=lambda wildcards: [
            ancient(b) for b in get_ooc_binaries(wildcards).values()
        ],
        provisioned="results/{study}/devices/{device}/provisioned.json",
    output:
        # results/{study}/ooc/{source}/{device}/{mode}/run{repeat}.csv and the raw folder
        # beside it (benchcast.sources.plan)
        records=protected(bc_plan.pattern("ooc", ".csv")),
        raw=protected(directory(bc_plan.pattern("ooc", ""))),
    log:
        bc_plan.pattern("ooc", ".log", root="logs"),
    priority: get_round
    # a failed job runs again from the start, its partial output cleared first. A program the memory
    # cgroup kills (at a working set as large as the limit, over swap on a capped device) is retried
    # inside the job, after a pause (benchcast.sources.run.ooc.KILL_RETRIES): this retry comes at once, and in
    # session 19 it was killed too
    retries: 1
    conda:
        "../envs/ooc.yaml"
    resources:
        **MEASURING_RESOURCES,
    params:
        job=get_ooc_job,
    shell:
        "python -m benchcast.ooc_job --job {params.job:q} --log {log}"
