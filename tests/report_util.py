"""Helpers of the report tests: the paper study's records run three times, with a known spread."""
import pandas as pd

from analysis_util import paper_records
from benchcast import aggregate

#: Each run's value over the first run's: a CV of 0.5 on DRAM, 0.01 on the other devices.
NOISY = {"dram": (1.0, 1.5, 0.5)}
QUIET = (1.0, 1.01, 0.99)


def repeated_agg() -> pd.DataFrame:
    """The paper's records as three runs each (DRAM's spread wide, the others' narrow), aggregated
    with no trimming."""
    recs = paper_records()
    runs = []
    for run in range(3):
        r = recs.copy()
        factor = r["device"].map(lambda d: NOISY.get(d, QUIET)[run])
        r["value"] = r["value"] * factor
        r["run"] = run
        runs.append(r)
    return aggregate.aggregate(pd.concat(runs, ignore_index=True), trim=0)


#: The paper's focus series (its Figures 3 and 4) and a device label, as the report's charts get them.
FOCUS = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write", "metric": "lat_mean"}
LABELS = {"dram": "DRAM (tmpfs)"}


def svg(chart, tmp_path, name) -> str:
    """``chart`` saved as ``<name>.svg`` under ``tmp_path`` (benchcast.charts.save); its text."""
    from benchcast import charts

    path = tmp_path / f"{name}.svg"
    charts.save(chart, path)
    text = path.read_text()
    assert text.lstrip().startswith("<svg")
    return text
