"""Rule script: the study's answer page (the report's first entry; its landing page shows it too)
and how good the predictions are per family, as a table."""
from pathlib import Path

from benchcast.report import answer_page, tables
from benchcast.core import smk


def main(sm):
    answers = tables.read_table(sm.input.answers, answer_page.ANSWER_COLUMNS)
    verdicts = tables.read_table(sm.input.verdicts)
    quality = Path(sm.input.quality).read_text().splitlines()
    value, figures = tables.read_table(sm.input.value), tables.read_table(sm.input.figures)
    Path(sm.output.page).write_text(answer_page.page(sm.wildcards.study, answers, verdicts, quality, value, figures))
    tables.write_report_table(answer_page.how_good(verdicts), sm.output.good)


smk.run(main, snakemake)  # noqa: F821
