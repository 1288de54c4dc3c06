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
        package=get_package_digest,
        content=get_import_digest,
        devices=get_device_ids,
        benchmark=lookup(
            dpath="studies/{study}/sources/{source}/benchmark", within=config
        ),
    script:
        "../scripts/import_soga2018.py"


rule import_fio_json:
    input:
        get_import_inputs,
    output:
        "results/{study}/records/fio_json/{source}.csv",
    log:
        "logs/{study}/import_fio_json/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        content=get_import_digest,
        files=lookup(dpath="studies/{study}/sources/{source}/files", within=config),
    script:
        "../scripts/import_fio_json.py"


rule import_records:
    input:
        get_import_inputs,
    output:
        "results/{study}/records/records/{source}.csv",
    log:
        "logs/{study}/import_records/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        content=get_import_digest,
        files=lookup(dpath="studies/{study}/sources/{source}/files", within=config),
        rename=lookup(
            dpath="studies/{study}/sources/{source}/rename", within=config, default={}
        ),
        devices=get_device_ids,
    script:
        "../scripts/import_records.py"


rule import_ycsb_output:
    input:
        get_import_inputs,
    output:
        "results/{study}/records/ycsb_output/{source}.csv",
    log:
        "logs/{study}/import_ycsb_output/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        content=get_import_digest,
        runs=lookup(dpath="studies/{study}/sources/{source}/runs", within=config),
        devices=get_device_ids,
    script:
        "../scripts/import_ycsb_output.py"


rule import_pkb:
    input:
        get_import_inputs,
    output:
        "results/{study}/records/pkb/{source}.csv",
    log:
        "logs/{study}/import_pkb/{source}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        content=get_import_digest,
        files=lookup(dpath="studies/{study}/sources/{source}/files", within=config),
        ycsb=lookup(
            dpath="studies/{study}/sources/{source}/ycsb", within=config, default=None
        ),
    script:
        "../scripts/import_pkb.py"
