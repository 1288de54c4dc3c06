"""Rule script: the runs of a measured source -> one record table, without the runs interference
spoiled (benchcast.sources.run.quality), and the source's quality table. A fio run is its JSON (parsed here, with
its device's provenance); a YCSB or out-of-core run is a record table already. Each run's records
get the machine's speed around it (the probes beside the interference records of the study's runs
started near it) and their value at the reference speed beside the raw one (benchcast.records.correction)."""
import json
from pathlib import Path

import pandas as pd

from benchcast.records import correction
from benchcast.sources.run import cpushare, quality
from benchcast.sources.parse import fiojson
from benchcast.sources import plan
from benchcast import records
from benchcast.core import smk


def provenance(paths) -> dict:
    """device -> the provenance columns of its records, from its provisioning records."""
    prov = {}
    for path in paths:
        d = json.loads(Path(path).read_text())
        host = d.get("host", {})
        prov[d["device"]] = {
            "device_model": d.get("model", ""),
            "mount_options": d.get("mount_options", ""),
            "read_ahead_kb": str(d.get("read_ahead_kb", "")),
            "kernel": host.get("kernel", ""),
            "cpu_model": host.get("cpu_model", ""),
            "hostname": host.get("hostname", ""),
        }
    return prov


def fio_records(path, study: str, prov: dict) -> pd.DataFrame:
    run = plan.parse(path)
    return fiojson.parse(path, study=study, device=run.device, run=run.repeat, cell=run.cell,
                         source=f"fio:{run.source}", provenance=prov.get(run.device, {}))


def main(sm):
    tab = quality.table(sm.input.runs, sm.params.quality["thresholds"], sm.params.quality["repeats"])
    used = quality.used_outputs(tab)  # runs spoiled by interference are left out
    runs = [p for p in sm.input.runs if str(p) in used]
    kind, speed = sm.wildcards.kind, sm.params.quality["speed"]
    prov = provenance(sm.input.provisioned) if kind == "fio" else {}
    # each run's speed: the median of the study's runs started within the window around it
    speeds = cpushare.run_speeds(sm.input.study_runs, speed)
    frames = [(fio_records(p, sm.wildcards.study, prov) if kind == "fio" else records.read(p))
              .assign(**cpushare.run_columns(p, speeds, kind)) for p in runs]
    recs = records.read_many([]) if not frames else records.check(pd.concat(frames, ignore_index=True), "records")
    records.write(correction.correct(recs, speed["correct_to"]), sm.output[0])
    tab.to_csv(sm.output[1], index=False)


smk.run(main, snakemake)  # noqa: F821
