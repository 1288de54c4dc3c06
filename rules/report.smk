# Report: the paper-shaped tables (CSV) and the Altair charts, declared with report() and captions.


rule tables_screening:
    input:
        screen="results/{study}/screen.csv",
        best="results/{study}/best.csv",
    output:
        table08=report(
            "results/{study}/tables/table08_r2_by_feature.csv",
            caption="../report/table08.rst",
            category="{study}",
            subcategory="Screening",
        ),
        table09_10=report(
            "results/{study}/tables/table09_10_best_feature.csv",
            caption="../report/table09_10.rst",
            category="{study}",
            subcategory="Screening",
        ),
        table11=report(
            "results/{study}/tables/table11_mean_best_r2.csv",
            caption="../report/table11.rst",
            category="{study}",
            subcategory="Screening",
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
        table12=report(
            "results/{study}/tables/table12_predictions.csv",
            caption="../report/table12.rst",
            category="{study}",
            subcategory="Prediction",
        ),
        table13=report(
            "results/{study}/tables/table13_extrapolated.csv",
            caption="../report/table13.rst",
            category="{study}",
            subcategory="Prediction",
        ),
        table14=report(
            "results/{study}/tables/table14_size_fit_r2.csv",
            caption="../report/table14.rst",
            category="{study}",
            subcategory="Prediction",
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
        html=report(
            "results/{study}/charts/fig3_scatter.html",
            caption="../report/fig3_scatter.rst",
            category="{study}",
            subcategory="Charts",
        ),
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
        html=report(
            "results/{study}/charts/fig4_data_size.html",
            caption="../report/fig4_data_size.rst",
            category="{study}",
            subcategory="Charts",
        ),
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
        html=report(
            "results/{study}/charts/heatmap_best_r2.html",
            caption="../report/heatmap_best_r2.rst",
            category="{study}",
            subcategory="Charts",
        ),
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
        table=report(
            "results/{study}/tables/device_figures.csv",
            caption="../report/device_figures_table.rst",
            category="{study}",
            subcategory="Devices",
        ),
        svg="results/{study}/charts/device_figures.svg",
        html=report(
            "results/{study}/charts/device_figures.html",
            caption="../report/device_figures.rst",
            category="{study}",
            subcategory="Devices",
        ),
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
        table=report(
            "results/{study}/tables/ooc_relative.csv",
            caption="../report/ooc_relative_table.rst",
            category="{study}",
            subcategory="Out of core",
        ),
        svg="results/{study}/charts/ooc_relative.svg",
        html=report(
            "results/{study}/charts/ooc_relative.html",
            caption="../report/ooc_relative.rst",
            category="{study}",
            subcategory="Out of core",
        ),
    log:
        "logs/{study}/chart_ooc.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        limits=get_ooc_limits,
        labels=get_device_labels,
    script:
        "../scripts/chart_ooc.py"


rule workload_classes:
    input:
        "results/{study}/aggregated.csv",
    output:
        report(
            "results/{study}/tables/workload_classes.csv",
            caption="../report/workload_classes.rst",
            category="{study}",
            subcategory="Applications",
        ),
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
        verdicts=report(
            "results/{study}/tables/validity_verdicts.csv",
            caption="../report/validity_verdicts.rst",
            category="{study}",
            subcategory="Validity",
        ),
        tiers=report(
            "results/{study}/tables/validity_tiers.csv",
            caption="../report/validity_tiers.rst",
            category="{study}",
            subcategory="Validity",
        ),
        simple=report(
            "results/{study}/tables/validity_simple_selection.csv",
            caption="../report/validity_simple_selection.rst",
            category="{study}",
            subcategory="Validity",
        ),
        multiple=report(
            "results/{study}/tables/validity_multiple_selection.csv",
            caption="../report/validity_multiple_selection.rst",
            category="{study}",
            subcategory="Validity",
        ),
        coverage=report(
            "results/{study}/tables/validity_coverage.csv",
            caption="../report/validity_coverage.rst",
            category="{study}",
            subcategory="Validity",
        ),
        refusals=report(
            "results/{study}/tables/validity_refusals.csv",
            caption="../report/validity_refusals.rst",
            category="{study}",
            subcategory="Validity",
        ),
        intervals=report(
            "results/{study}/tables/validity_target_intervals.csv",
            caption="../report/validity_target_intervals.rst",
            category="{study}",
            subcategory="Validity",
        ),
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
        report(
            "results/{study}/tables/validity_data_size.csv",
            caption="../report/validity_data_size.rst",
            category="{study}",
            subcategory="Validity",
        ),
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
        html=report(
            "results/{study}/charts/latency_size.html",
            caption="../report/latency_size.rst",
            category="{study}",
            subcategory="Charts",
        ),
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
        html=report(
            "results/{study}/charts/heldout.html",
            caption="../report/heldout.rst",
            category="{study}",
            subcategory="Validity",
        ),
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
        html=report(
            "results/{study}/charts/target_intervals.html",
            caption="../report/target_intervals.rst",
            category="{study}",
            subcategory="Validity",
        ),
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
        table=report(
            "results/{study}/tables/noise.csv",
            caption="../report/noise_table.rst",
            category="{study}",
            subcategory="Noise",
        ),
        speed=report(
            "results/{study}/tables/machine_speed.csv",
            caption="../report/machine_speed.rst",
            category="{study}",
            subcategory="Noise",
        ),
        svg="results/{study}/charts/noise.svg",
        html=report(
            "results/{study}/charts/noise.html",
            caption="../report/noise.rst",
            category="{study}",
            subcategory="Noise",
        ),
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
        table=report(
            "results/{study}/tables/app_overview.csv",
            caption="../report/app_overview_table.rst",
            category="{study}",
            subcategory="Applications",
        ),
        svg="results/{study}/charts/app_overview.svg",
        html=report(
            "results/{study}/charts/app_overview.html",
            caption="../report/app_overview.rst",
            category="{study}",
            subcategory="Applications",
        ),
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
        report(
            "results/{study}/tables/inventory.csv",
            caption="../report/inventory.rst",
            category="{study}",
            subcategory="Inventory",
        ),
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
        table=report(
            "results/{study}/tables/quality.csv",
            caption="../report/quality.rst",
            category="{study}",
            subcategory="Measurement quality",
        ),
        line=report(
            "results/{study}/quality/summary.txt",
            caption="../report/quality_summary.rst",
            category="{study}",
            subcategory="Measurement quality",
        ),
    log:
        "logs/{study}/quality.log",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        tolerance=lookup(dpath="studies/{study}/validate/tolerance", within=config),
    script:
        "../scripts/quality_summary.py"


# What rule all asks for of the report: every output of these rules (get_final_outputs), by which
# studies get them; the file names are written once, in the rules above.
REPORT_RULES = ["noise", "app_overview", "inventory", "quality", "device_figures"]
REPORT_OOC_RULES = ["chart_ooc"]
REPORT_SERIES_RULES = [
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
