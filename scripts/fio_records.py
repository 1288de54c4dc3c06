"""Rule script: a fio source's JSON outputs -> tidy records, with each device's provenance."""
import json
from pathlib import Path

import pandas as pd

from benchcast import fiojson, plan, quality, records, smk


def main(sm):
    prov = {}
    for path in sm.input.provisioned:
        d = json.loads(Path(path).read_text())
        host = d.get("host", {})
        prov[d["device"]] = {
            "device_model": d.get("model", ""),
            "mount_options": d.get("mount_options", ""),
            "kernel": host.get("kernel", ""),
            "cpu_model": host.get("cpu_model", ""),
            "hostname": host.get("hostname", ""),
        }
    tab = quality.table(sm.input.runs, sm.params.quality["thresholds"], sm.params.quality["repeats"])
    used = quality.used_outputs(tab)  # runs spoiled by interference are left out
    frames = []
    for path in sm.input.runs:
        if str(path) not in used:
            continue
        run = plan.parse(path)
        frames.append(
            fiojson.parse(path, study=sm.wildcards.study, device=run.device, run=run.repeat,
                          cell=run.cell, source=f"fio:{run.source}", provenance=prov.get(run.device, {}))
        )
    records.write(pd.concat(frames, ignore_index=True), sm.output[0])
    tab.to_csv(sm.output[1], index=False)


smk.run(main, snakemake)  # noqa: F821
