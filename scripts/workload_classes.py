"""Rule script: what each application run did to the device (I/O per operation) and its class."""
from benchcast.records import blockio
from benchcast.core import smk
from benchcast.report import tables


def main(sm):
    agg = tables.read_aggregated(sm.input[0])
    classes = blockio.across_memory(blockio.classes(agg), agg, sm.params.memory)
    classes.insert(1, "device_label", classes["device"].map(sm.params.labels).fillna(classes["device"]))
    classes.to_csv(sm.output[0], index=False)


smk.run(main, snakemake)  # noqa: F821
