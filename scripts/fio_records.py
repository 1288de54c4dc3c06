"""Rule script: a fio source's JSON outputs -> tidy records, with each device's provenance."""
import json
import re
from pathlib import Path

import pandas as pd

from benchcast import fiojson, quality, records, smk

RUN = re.compile(r"fio/(?P<source>[^/]+)/(?P<device>[^/]+)/(?P<cell>[^/]+)/run(?P<repeat>\d+)\.json$")


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
        m = RUN.search(path)
        frames.append(
            fiojson.parse(path, study=sm.wildcards.study, device=m["device"], run=int(m["repeat"]),
                      cell=m["cell"], source=f"fio:{m['source']}", provenance=prov.get(m["device"], {}))
        )
    records.write(pd.concat(frames, ignore_index=True), sm.output[0])
    tab.to_csv(sm.output[1], index=False)


smk.run(main, snakemake)  # noqa: F821
