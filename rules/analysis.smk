# The analysis spine: aggregate -> screen -> predict -> extrapolate.


rule aggregate:
    input:
        get_record_files,
    output:
        "results/{study}/aggregated.csv",
    log:
        "logs/{study}/aggregate.log",
    conda:
        "../envs/analysis.yaml"
    params:
        trim=lambda wc: study_cfg(wc)["aggregate"]["trim"],
    script:
        "../scripts/aggregate.py"


rule screen:
    input:
        "results/{study}/aggregated.csv",
    output:
        screen="results/{study}/screen.csv",
        best="results/{study}/best.csv",
    log:
        "logs/{study}/screen.log",
    conda:
        "../envs/analysis.yaml"
    params:
        features=lambda wc: study_cfg(wc)["features"],
        series=lambda wc: study_cfg(wc)["series"],
        pairing=lambda wc: study_cfg(wc)["pairing"],
        min_devices=lambda wc: study_cfg(wc)["screen"]["min_devices"],
    script:
        "../scripts/screen.py"


rule predict:
    input:
        "results/{study}/screen.csv",
    output:
        "results/{study}/predictions.csv",
    log:
        "logs/{study}/predict.log",
    conda:
        "../envs/analysis.yaml"
    params:
        targets=lambda wc: study_cfg(wc)["targets"],
    script:
        "../scripts/predict.py"


rule extrapolate:
    input:
        aggregated="results/{study}/aggregated.csv",
        predictions="results/{study}/predictions.csv",
    output:
        fits="results/{study}/extrapolation_fits.csv",
        points="results/{study}/extrapolation.csv",
    log:
        "logs/{study}/extrapolate.log",
    conda:
        "../envs/analysis.yaml"
    params:
        features=lambda wc: study_cfg(wc)["features"],
        series=lambda wc: study_cfg(wc)["series"],
        extrapolate=lambda wc: study_cfg(wc)["extrapolate"],
    script:
        "../scripts/extrapolate.py"
