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
        devices=get_device_ids,
        benchmark=lookup(
            dpath="studies/{study}/sources/{source}/benchmark", within=config
        ),
    script:
        "../scripts/import_soga2018.py"
