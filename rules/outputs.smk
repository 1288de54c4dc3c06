# The final targets and the report's outputs.


def reported(path, subcategory, caption=None):
    """A study's output shown in the report: results/{study}/<path>, under the study and
    ``subcategory``, with the caption report/<caption>.rst (default: the file's own name).
    """
    caption = caption or os.path.splitext(os.path.basename(path))[0]
    return report(
        f"results/{{study}}/{path}",
        caption=f"../report/{caption}.rst",
        category="{study}",
        subcategory=subcategory,
    )


def get_focus(wildcards):
    rep = STUDIES[wildcards.study].get("report", {})
    return {
        "focus": rep.get("focus", {}),
        "focus_data_size": rep.get("focus_data_size"),
    }


def get_device_labels(wildcards):
    devs = STUDIES[wildcards.study].get("devices", {})
    return {d: spec.get("label", d) for d, spec in devs.items()}


def has_series(study):
    return bc_config.has_series(STUDIES[study])


def has_ooc(study):
    return any(src["type"] == "ooc" for src in STUDIES[study]["sources"].values())


def get_memory_limits(wildcards):
    """Record source label -> the memory its data could be cached in (benchcast.config.settings.memory_lines)."""
    return bc_settings.memory_lines(STUDIES[wildcards.study]["sources"])


def quality_tables(study):
    """The per-source quality tables of a study's measured sources (made beside their records)."""
    return [
        f"results/{study}/quality/{src['type']}/{name}.csv"
        for name, src in STUDIES[study]["sources"].items()
        if src["type"] in ("fio", "ycsb", "ooc")
    ]


def get_quality_inputs(wildcards):
    """The quality tables of a study's measured sources, and its verdicts when it has series."""
    study = wildcards.study
    verdicts = [f"results/{study}/validation/verdicts.csv"] if has_series(study) else []
    return {"tables": quality_tables(study), "verdicts": verdicts}


def get_final_outputs():
    """The final targets, every output of the report's rules (REPORT_RULES; with out-of-core sources
    REPORT_OOC_RULES; with series REPORT_SERIES_RULES, in rules/report.smk) and the quality tables of
    the measured sources; with series also every analysis output (ANALYSIS_RULES, in
    rules/analysis.smk) and the record tables."""
    out = []
    for study in SELECTED:
        out += rule_outputs(REPORT_RULES, study)
        # the per-source quality tables, made beside each source's records
        out += quality_tables(study)
        if has_ooc(study):
            out += rule_outputs(REPORT_OOC_RULES, study)
        if has_series(study):
            out += rule_outputs(REPORT_SERIES_RULES + ANALYSIS_RULES, study)
            out += get_record_files_of(study)
    if workflow.is_main_process:
        from benchcast.sources.parse import preflight as _preflight

        try:
            _preflight.check_output_files(out)
        except BenchcastError as exc:
            refuse(f"benchcast: {exc}")
    return out


def rule_outputs(names, study):
    """Every output of the named per-study rules, not only those a later rule reads (a chart's HTML
    beside its SVG, every table of a table rule, predictions.csv behind the tables): Snakemake
    plans a missing file only when it is needed, so a file a failed or killed job left missing
    would otherwise stay missing, with exit 0 and stale results beside it."""
    return [
        f
        for name in names
        for f in expand(
            [
                strip_wildcard_constraints(str(p))
                for p in workflow.get_rule(name).output
            ],
            study=study,
        )
    ]
