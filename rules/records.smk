# Records of a measured source (fio, YCSB, out-of-core): all its runs -> one tidy record table, without
# the runs interference spoiled (benchcast.sources.run.quality), and the source's quality table.


rule run_records:
    input:
        unpack(get_run_records_inputs),
    output:
        "results/{study}/records/{kind}/{source}.csv",
        "results/{study}/quality/{kind}/{source}.csv",
    log:
        "logs/{study}/{kind}_records/{source}.log",
    wildcard_constraints:
        kind="|".join(bc_plan.MEASURED),
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        quality=get_quality_params,
    script:
        "../scripts/run_records.py"
