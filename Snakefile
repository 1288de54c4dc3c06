# benchcast: predict how an application would perform on a storage device you do not have.
# Thin: the stages live in rules/, the logic in scripts/benchcast/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/inputs.smk"
include: "rules/checks.smk"
include: "rules/outputs.smk"
include: "rules/hooks.smk"
include: "rules/imports.smk"
include: "rules/devices.smk"
include: "rules/fio.smk"
include: "rules/ycsb.smk"
include: "rules/ooc.smk"
include: "rules/records.smk"
include: "rules/analysis.smk"
include: "rules/report.smk"
include: "rules/compare.smk"


#: The final targets (benchcast.workflow.targets.final_outputs): every output of the report's rules
#: (REPORT_RULES; with out-of-core sources REPORT_OOC_RULES; with series REPORT_SERIES_RULES, in
#: rules/report.smk, and ANALYSIS_RULES, in rules/analysis.smk), checked before any job.
FINAL_RULES = {
    "report": REPORT_RULES,
    "ooc": REPORT_OOC_RULES,
    "series": REPORT_SERIES_RULES + ANALYSIS_RULES,
}
try:
    FINAL_OUTPUTS = bc_targets.checked(
        bc_targets.final_outputs(
            STUDIES,
            SELECTED,
            FINAL_RULES,
            {
                name: [
                    strip_wildcard_constraints(str(p))
                    for p in workflow.get_rule(name).output
                ]
                for names in FINAL_RULES.values()
                for name in names
            },
        ),
        workflow.is_main_process,
    )
except BenchcastError as exc:
    refuse(str(exc))


rule all:
    default_target: True
    input:
        FINAL_OUTPUTS,


# `snakemake compare`: every comparison configured under compare: (rules/compare.smk)
rule compare:
    input:
        expand(
            "results/compare/{name}/ratios.{ext}",
            name=COMPARE,
            ext=["csv", "svg", "html"],
        ),
