"""Rule script: the runs of a measured source -> one record table, without the runs interference
spoiled (benchcast.quality), and the source's quality table. A fio run is its JSON (parsed here, with
its device's provenance); a YCSB or out-of-core run is a record table already."""
import json
from pathlib import Path

import pandas as pd

from benchcast import fiojson, plan, quality, records, smk


def provenance(paths) -> dict:
    """device -> the provenance columns of its records, from its provisioning records."""
    prov = {}
    for path in paths:
        d = json.loads(Path(path).read_text())
        host = d.get("host", {})
        prov[d["device"]] = {
            "device_model": d.get("model", ""),
            "mount_options": d.get("mount_options", ""),
            "kernel": host.get("kernel", ""),
            "cpu_model": host.get("cpu_model", ""),
            "hostname": host.get("hostname", ""),
        }
    return prov


def fio_records(paths, study: str, prov: dict) -> pd.DataFrame:
    frames = []
    for path in paths:
        run = plan.parse(path)
        frames.append(
            fiojson.parse(path, study=study, device=run.device, run=run.repeat, cell=run.cell,
                          source=f"fio:{run.source}", provenance=prov.get(run.device, {}))
        )
    return pd.concat(frames, ignore_index=True)


def main(sm):
    tab = quality.table(sm.input.runs, sm.params.quality["thresholds"], sm.params.quality["repeats"])
    used = quality.used_outputs(tab)  # runs spoiled by interference are left out
    runs = [p for p in sm.input.runs if str(p) in used]
    if sm.wildcards.kind == "fio":
        recs = fio_records(runs, sm.wildcards.study, provenance(sm.input.provisioned))
    else:
        recs = records.read_many(runs)
    records.write(recs, sm.output[0])
    tab.to_csv(sm.output[1], index=False)


smk.run(main, snakemake)  # noqa: F821
