# The analysis spine: aggregate -> screen -> predict -> extrapolate; heldout (leave one device out)
# -> predict_intervals.


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
        features="results/{study}/features.csv",
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


rule heldout:
    input:
        aggregated="results/{study}/aggregated.csv",
        screen="results/{study}/screen.csv",
    output:
        chosen_folds="results/{study}/validation/chosen_folds.csv",
        simple_folds="results/{study}/validation/simple_folds.csv",
        simple_summary="results/{study}/validation/simple_summary.csv",
        simple_selection="results/{study}/validation/simple_selection.csv",
        multiple_folds="results/{study}/validation/multiple_folds.csv",
        multiple_summary="results/{study}/validation/multiple_summary.csv",
        multiple_refusals="results/{study}/validation/multiple_refusals.csv",
        multiple_selection="results/{study}/validation/multiple_selection.csv",
    log:
        "logs/{study}/heldout.log",
    conda:
        "../envs/analysis.yaml"
    params:
        features=lambda wc: study_cfg(wc)["features"],
        series=lambda wc: study_cfg(wc)["series"],
        pairing=lambda wc: study_cfg(wc)["pairing"],
        settings=lambda wc: study_cfg(wc)["validate"],
    script:
        "../scripts/heldout.py"


rule predict_intervals:
    input:
        aggregated="results/{study}/aggregated.csv",
        simple="results/{study}/validation/simple_selection.csv",
        multiple="results/{study}/validation/multiple_selection.csv",
    output:
        predictions="results/{study}/validation/target_predictions.csv",
        skipped="results/{study}/validation/target_skipped.csv",
    log:
        "logs/{study}/predict_intervals.log",
    conda:
        "../envs/analysis.yaml"
    params:
        features=lambda wc: study_cfg(wc)["features"],
        series=lambda wc: study_cfg(wc)["series"],
        targets=lambda wc: study_cfg(wc)["targets"],
        settings=lambda wc: study_cfg(wc)["validate"],
        data_sizes=lambda wc: study_cfg(wc)["extrapolate"]["data_sizes"],
    script:
        "../scripts/predict_intervals.py"
