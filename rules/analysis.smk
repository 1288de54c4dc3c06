# The analysis spine: aggregate -> screen -> predict -> extrapolate; heldout (leave one device out)
# -> predict_intervals; size_validation (hold out the largest data size; the two-stage chain).


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
        package=get_package_digest,
        trim=lookup(dpath="studies/{study}/aggregate/trim", within=config),
        value=lookup(dpath="studies/{study}/aggregate/value", within=config),
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
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        pairing=lookup(dpath="studies/{study}/pairing", within=config),
        min_devices=lookup(dpath="studies/{study}/screen/min_devices", within=config),
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
        package=get_package_digest,
        targets=lookup(dpath="studies/{study}/targets", within=config),
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
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        extrapolate=lookup(dpath="studies/{study}/extrapolate", within=config),
    script:
        "../scripts/extrapolate.py"


rule heldout:
    input:
        aggregated="results/{study}/aggregated.csv",
        screen="results/{study}/screen.csv",
    output:
        chosen_folds="results/{study}/validation/chosen_folds.csv",
        tiers="results/{study}/validation/tiers.csv",
        verdicts="results/{study}/validation/verdicts.csv",
        simple_folds="results/{study}/validation/simple_folds.csv",
        simple_summary="results/{study}/validation/simple_summary.csv",
        simple_selection="results/{study}/validation/simple_selection.csv",
        multiple_folds="results/{study}/validation/multiple_folds.csv",
        multiple_summary="results/{study}/validation/multiple_summary.csv",
        multiple_refusals="results/{study}/validation/multiple_refusals.csv",
        multiple_selection="results/{study}/validation/multiple_selection.csv",
        nested_selection="results/{study}/validation/nested_selection.csv",
        nested_draws="results/{study}/validation/nested_draws.csv",
    log:
        "logs/{study}/heldout.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        pairing=lookup(dpath="studies/{study}/pairing", within=config),
        settings=lookup(dpath="studies/{study}/validate", within=config),
    script:
        "../scripts/heldout.py"


rule predict_intervals:
    input:
        aggregated="results/{study}/aggregated.csv",
        simple="results/{study}/validation/simple_selection.csv",
        multiple="results/{study}/validation/multiple_selection.csv",
        nested="results/{study}/validation/nested_selection.csv",
        draws="results/{study}/validation/nested_draws.csv",
    output:
        predictions="results/{study}/validation/target_predictions.csv",
        skipped=reported("validation/target_skipped.csv", "Validity"),
    log:
        "logs/{study}/predict_intervals.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        targets=lookup(dpath="studies/{study}/targets", within=config),
        settings=lookup(dpath="studies/{study}/validate", within=config),
        data_sizes=lookup(dpath="studies/{study}/extrapolate/data_sizes", within=config),
    script:
        "../scripts/predict_intervals.py"


rule cards:
    input:
        aggregated="results/{study}/aggregated.csv",
        screen="results/{study}/screen.csv",
    output:
        figures="results/{study}/validation/card_figures.csv",
        verdicts="results/{study}/validation/card_verdicts.csv",
        folds="results/{study}/validation/card_folds.csv",
        selection="results/{study}/validation/card_selection.csv",
        value="results/{study}/validation/figure_value.csv",
    log:
        "logs/{study}/cards.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        pairing=lookup(dpath="studies/{study}/pairing", within=config),
        settings=lookup(dpath="studies/{study}/validate", within=config),
        targets=lookup(dpath="studies/{study}/targets", within=config),
    script:
        "../scripts/cards.py"


rule answers:
    input:
        aggregated="results/{study}/aggregated.csv",
        figures="results/{study}/validation/card_figures.csv",
        verdicts="results/{study}/validation/card_verdicts.csv",
        selection="results/{study}/validation/card_selection.csv",
        value="results/{study}/validation/figure_value.csv",
        study_verdicts="results/{study}/validation/verdicts.csv",
    output:
        table="results/{study}/validation/answers.csv",
        lines="results/{study}/validation/answers.txt",
    log:
        "logs/{study}/answers.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        targets=lookup(dpath="studies/{study}/targets", within=config),
        settings=lookup(dpath="studies/{study}/validate", within=config),
    script:
        "../scripts/answers.py"


rule size_validation:
    input:
        aggregated="results/{study}/aggregated.csv",
        screen="results/{study}/screen.csv",
    output:
        folds="results/{study}/validation/size_folds.csv",
        summary="results/{study}/validation/size_summary.csv",
        forms="results/{study}/validation/size_forms.csv",
    log:
        "logs/{study}/size_validation.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        features=lookup(dpath="studies/{study}/features", within=config),
        series=lookup(dpath="studies/{study}/series", within=config),
        memory=get_memory_limits,
        settings=lookup(dpath="studies/{study}/validate", within=config),
    script:
        "../scripts/size_validation.py"


# Every analysis output is also a final target of a study with series (FINAL_OUTPUTS).
ANALYSIS_RULES = [
    "aggregate",
    "screen",
    "predict",
    "extrapolate",
    "heldout",
    "predict_intervals",
    "cards",
    "answers",
    "size_validation",
]
