"""Rule script: the answer for every spec card and series (the prediction of the procedure the card's
validation chose, with its interval and held-out error), as a table, and one line per card."""
from benchcast.prediction import answers
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    cards = answers.CardTables(*(tables.read_table(getattr(sm.input, k)) for k in ("figures", "verdicts", "selection",
                                                                                 "value")))
    noise = tables.read_table(sm.input.study_verdicts).set_index("series")["interior_noise_mape"]
    table = answers.answers(tables.read_aggregated(sm.input.aggregated), sm.params.features, sm.params.series,
                            sm.params.targets or {}, cards, sm.params.settings, noise.astype(float))
    table.to_csv(sm.output.table, index=False)
    with open(sm.output.lines, "w") as f:
        f.writelines(f"{line}\n" for line in answers.card_lines(table, cards.value))


smk.run(main, snakemake)  # noqa: F821
