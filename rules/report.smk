# Report: the answer page, the paper-shaped tables (CSV) and the Altair charts, each declared with
# reported() (rules/outputs.smk: report() with its caption).

# A study's first three subcategories, in the order a reader asks (Snakemake's report sorts them by
# name: the numbers keep that order; the landing page shows the answer pages, report/workflow.rst).
ANSWER = "1. Answer"
HOW_GOOD = "2. How good is it"
HOW_CLEAN = "3. How clean was the measurement"


rule answer_page:
    input:
        answers="results/{study}/validation/answers.csv",
        value="results/{study}/validation/figure_value.csv",
        figures="results/{study}/validation/card_figures.csv",
        verdicts="results/{study}/validation/verdicts.csv",
        quality="results/{study}/quality/summary.txt",
    output:
        page=reported("answer/answer.html", ANSWER, caption="answer"),
        good=reported("tables/how_good.csv", HOW_GOOD, caption="how_good"),
    log:
        "logs/{study}/answer_page.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
    script:
        "../scripts/answer_page.py"


rule tables_screening:
    input:
        screen="results/{study}/screen.csv",
        best="results/{study}/best.csv",
    output:
        table08=reported(
            "tables/table08_r2_by_feature.csv", "Screening", caption="table08"
        ),
        table09_10=reported(
            "tables/table09_10_best_feature.csv", "Screening", caption="table09_10"
        ),
        table11=reported(
            "tables/table11_mean_best_r2.csv", "Screening", caption="table11"
        ),
    log:
        "logs/{study}/tables_screening.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        report=get_focus,
    script:
        "../scripts/tables_screening.py"


rule tables_prediction:
    input:
        best="results/{study}/best.csv",
        predictions="results/{study}/predictions.csv",
        fits="results/{study}/extrapolation_fits.csv",
        points="results/{study}/extrapolation.csv",
    output:
        table12=reported(
            "tables/table12_predictions.csv", "Prediction", caption="table12"
        ),
        table13=reported(
            "tables/table13_extrapolated.csv", "Prediction", caption="table13"
        ),
        table14=reported(
            "tables/table14_size_fit_r2.csv", "Prediction", caption="table14"
        ),
    log:
        "logs/{study}/tables_prediction.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        report=get_focus,
    script:
        "../scripts/tables_prediction.py"


rule chart_fig3_scatter:
    input:
        aggregated="results/{study}/aggregated.csv",
        features="results/{study}/features.csv",
        screen="results/{study}/screen.csv",
        predictions="results/{study}/predictions.csv",
    output:
        svg="results/{study}/charts/fig3_scatter.svg",
        html=reported("charts/fig3_scatter.html", "Charts"),
    log:
        "logs/{study}/chart_fig3_scatter.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        report=get_focus,
        labels=get_device_labels,
    script:
        "../scripts/chart_fig3_scatter.py"


rule chart_fig4_data_size:
    input:
        aggregated="results/{study}/aggregated.csv",
        predictions="results/{study}/predictions.csv",
        points="results/{study}/extrapolation.csv",
        best="results/{study}/best.csv",
    output:
        svg="results/{study}/charts/fig4_data_size.svg",
        html=reported("charts/fig4_data_size.html", "Charts"),
    log:
        "logs/{study}/chart_fig4_data_size.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        report=get_focus,
        labels=get_device_labels,
    script:
        "../scripts/chart_fig4_data_size.py"


rule chart_heatmap_best_r2:
    input:
        best="results/{study}/best.csv",
    output:
        svg="results/{study}/charts/heatmap_best_r2.svg",
        html=reported("charts/heatmap_best_r2.html", "Charts"),
    log:
        "logs/{study}/chart_heatmap_best_r2.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
    script:
        "../scripts/chart_heatmap_best_r2.py"


rule device_figures:
    input:
        "results/{study}/aggregated.csv",
    output:
        table=reported(
            "tables/device_figures.csv", "Devices", caption="device_figures_table"
        ),
        svg="results/{study}/charts/device_figures.svg",
        html=reported("charts/device_figures.html", "Devices"),
    log:
        "logs/{study}/device_figures.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        metrics=lookup(dpath="studies/{study}/features/metrics", within=config),
        labels=get_device_labels,
    script:
        "../scripts/device_figures.py"


rule chart_ooc:
    input:
        "results/{study}/aggregated.csv",
    output:
        table=reported(
            "tables/ooc_relative.csv", "Out of core", caption="ooc_relative_table"
        ),
        svg="results/{study}/charts/ooc_relative.svg",
        html=reported("charts/ooc_relative.html", "Out of core"),
    log:
        "logs/{study}/chart_ooc.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        memory=get_memory_limits,
        labels=get_device_labels,
    script:
        "../scripts/chart_ooc.py"


rule workload_classes:
    input:
        "results/{study}/aggregated.csv",
    output:
        reported("tables/workload_classes.csv", "Applications"),
    log:
        "logs/{study}/workload_classes.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        labels=get_device_labels,
        memory=get_memory_limits,
    script:
        "../scripts/workload_classes.py"


rule tables_validity:
    input:
        aggregated="results/{study}/aggregated.csv",
        chosen="results/{study}/validation/chosen_folds.csv",
        tiers="results/{study}/validation/tiers.csv",
        verdicts="results/{study}/validation/verdicts.csv",
        simple_selection="results/{study}/validation/simple_selection.csv",
        multiple_selection="results/{study}/validation/multiple_selection.csv",
        refusals="results/{study}/validation/multiple_refusals.csv",
        predictions="results/{study}/validation/target_predictions.csv",
    output:
        verdicts=reported("tables/validity_verdicts.csv", "Validity"),
        tiers=reported("tables/validity_tiers.csv", "Validity"),
        simple=reported("tables/validity_simple_selection.csv", "Validity"),
        multiple=reported("tables/validity_multiple_selection.csv", "Validity"),
        coverage=reported("tables/validity_coverage.csv", "Validity"),
        refusals=reported("tables/validity_refusals.csv", "Validity"),
        intervals=reported("tables/validity_target_intervals.csv", "Validity"),
    log:
        "logs/{study}/tables_validity.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        level=lookup(dpath="studies/{study}/validate/level", within=config),
        labels=get_device_labels,
    script:
        "../scripts/tables_validity.py"


rule table_data_size:
    input:
        "results/{study}/validation/size_summary.csv",
    output:
        reported("tables/validity_data_size.csv", "Validity"),
    log:
        "logs/{study}/table_data_size.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
    script:
        "../scripts/table_data_size.py"


rule chart_latency_size:
    input:
        aggregated="results/{study}/aggregated.csv",
        folds="results/{study}/validation/size_folds.csv",
    output:
        svg="results/{study}/charts/latency_size.svg",
        html=reported("charts/latency_size.html", "Charts"),
    log:
        "logs/{study}/chart_latency_size.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        labels=get_device_labels,
        memory=get_memory_limits,
    script:
        "../scripts/chart_latency_size.py"


rule chart_heldout:
    input:
        "results/{study}/validation/chosen_folds.csv",
    output:
        svg="results/{study}/charts/heldout.svg",
        html=reported("charts/heldout.html", "Validity"),
    log:
        "logs/{study}/chart_heldout.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        labels=get_device_labels,
    script:
        "../scripts/chart_heldout.py"


rule chart_target_intervals:
    input:
        predictions="results/{study}/validation/target_predictions.csv",
        best="results/{study}/best.csv",
    output:
        svg="results/{study}/charts/target_intervals.svg",
        html=reported("charts/target_intervals.html", "Validity"),
    log:
        "logs/{study}/chart_target_intervals.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        report=get_focus,
    script:
        "../scripts/chart_target_intervals.py"


rule noise:
    input:
        "results/{study}/aggregated.csv",
    output:
        table=reported("tables/noise.csv", "Noise", caption="noise_table"),
        speed=reported("tables/machine_speed.csv", "Noise"),
        svg="results/{study}/charts/noise.svg",
        html=reported("charts/noise.html", "Noise"),
    log:
        "logs/{study}/noise.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        threshold=lookup(dpath="studies/{study}/report/noise_cv", within=config),
        labels=get_device_labels,
    script:
        "../scripts/noise.py"


rule app_overview:
    input:
        "results/{study}/aggregated.csv",
    output:
        table=reported(
            "tables/app_overview.csv", "Applications", caption="app_overview_table"
        ),
        svg="results/{study}/charts/app_overview.svg",
        html=reported("charts/app_overview.html", "Applications"),
    log:
        "logs/{study}/app_overview.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        labels=get_device_labels,
    script:
        "../scripts/app_overview.py"


rule inventory:
    input:
        get_record_files,
    output:
        reported("tables/inventory.csv", "Inventory"),
    log:
        "logs/{study}/inventory.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
    script:
        "../scripts/inventory.py"


rule quality:
    input:
        unpack(get_quality_inputs),
    output:
        table=reported("tables/quality.csv", HOW_CLEAN, caption="quality"),
        line=reported("quality/summary.txt", HOW_CLEAN, caption="quality_summary"),
    log:
        "logs/{study}/quality.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        tolerance=lookup(dpath="studies/{study}/validate/tolerance", within=config),
    script:
        "../scripts/quality_summary.py"


# What rule all asks for of the report: every output of these rules (FINAL_OUTPUTS), by which
# studies get them; the file names are written once, in the rules above.
REPORT_RULES = ["noise", "app_overview", "inventory", "quality", "device_figures"]
REPORT_OOC_RULES = ["chart_ooc"]
REPORT_SERIES_RULES = [
    "answer_page",
    "tables_screening",
    "tables_prediction",
    "tables_validity",
    "table_data_size",
    "chart_fig3_scatter",
    "chart_fig4_data_size",
    "chart_heatmap_best_r2",
    "chart_heldout",
    "chart_target_intervals",
    "chart_latency_size",
    "workload_classes",
]
