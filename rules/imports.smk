# Import sources: existing results turned into tidy records.


rule import_soga2018:
    input:
        unpack(get_import_files),
    output:
        "results/{study}/records/soga2018/{source}.csv",
    log:
        "logs/{study}/import_soga2018/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        devices=lambda wc: list(study_cfg(wc).get("devices", {})) or None,
        benchmark=lambda wc: get_source(wc).get("benchmark", "ycsb"),
    script:
        "../scripts/import_soga2018.py"
