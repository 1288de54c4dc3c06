"""Rule script: screening fits + spec cards -> predictions for the hypothetical devices."""
from benchcast.prediction import predict
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    screened = tables.read_screen(sm.input[0])
    predict.predict(screened, sm.params.targets).to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
