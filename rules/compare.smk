# Compare: two result trees (or two studies) side by side, per cell; `snakemake compare` builds every
# comparison configured under `compare:`. Never part of rule all, and never plans anything upstream:
# each side is an existing aggregated.csv, named by its absolute path, which no rule's output matches.
from benchcast.report import tables as bc_tables  # noqa: E402

COMPARE = config.get("compare", {})


rule compare_cells:
    input:
        a=lambda w: bc_tables.aggregated_path(COMPARE[w.name]["a"]),
        b=lambda w: bc_tables.aggregated_path(COMPARE[w.name]["b"]),
    output:
        table=report(
            "results/compare/{name}/ratios.csv",
            caption="../report/compare_table.rst",
            category="compare",
            subcategory="{name}",
        ),
        spread=report(
            "results/compare/{name}/spread.csv",
            caption="../report/compare_spread.rst",
            category="compare",
            subcategory="{name}",
        ),
        svg="results/compare/{name}/ratios.svg",
        html=report(
            "results/compare/{name}/ratios.html",
            caption="../report/compare.rst",
            category="compare",
            subcategory="{name}",
        ),
    log:
        "logs/compare/{name}.log",
    wildcard_constraints:
        name="|".join(map(re.escape, COMPARE)) or "(?!)",
    conda:
        "../envs/analysis.yaml"
    params:
        package=get_package_digest,
        names=lookup(dpath="compare/{name}/names", within=config),
        max_cells=lookup(dpath="compare/{name}/max_cells", within=config),
    script:
        "../scripts/compare.py"
