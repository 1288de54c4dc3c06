"""Rule script: the answer for every spec card and series (the validated prediction, or the figure the
card lacks), as a table and as lines."""
from benchcast.prediction import answers
from benchcast.core import smk
from benchcast.report import tables
from benchcast.features.iopath import io_path_min_per_op


def main(sm):
    table = answers.answers(
        tables.read_aggregated(sm.input.aggregated), sm.params.features, sm.params.targets,
        tables.read_table(sm.input.predictions), tables.read_table(sm.input.nested),
        tables.read_table(sm.input.verdicts), io_path_min_per_op(sm.params.settings),
    )
    table.to_csv(sm.output.table, index=False)
    with open(sm.output.lines, "w") as f:
        f.writelines(f"{line}\n" for line in answers.lines(table))


smk.run(main, snakemake)  # noqa: F821
