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


rule all:
    default_target: True
    input:
        get_final_outputs(),


# `snakemake compare`: every comparison configured under compare: (rules/compare.smk)
rule compare:
    input:
        expand(
            "results/compare/{name}/ratios.{ext}",
            name=COMPARE,
            ext=["csv", "svg", "html"],
        ),
