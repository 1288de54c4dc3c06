"""Helpers of the report tests: the paper study's records run three times, with a known spread; a
small hand-made answers table and its verdicts (the answer page's inputs)."""
import numpy as np
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
    """``chart`` saved as ``<name>.svg`` under ``tmp_path`` (benchcast.report.charts.save); its text."""
    from benchcast.report import charts

    path = tmp_path / f"{name}.svg"
    charts.save(chart, path)
    text = path.read_text()
    assert text.lstrip().startswith("<svg")
    return text


NAN = np.nan
#: Two targets (A, B) and three series: the answer page's tests check its numbers by hand.
ROCKS = dict(benchmark="ycsb", engine="rocksdb", workload="write-only", op="update", metric="lat_mean", unit="us",
             threads=0)
MARIA = dict(benchmark="ycsb", engine="mariadb", workload="read-only", op="read", metric="lat_mean", unit="us",
             threads=1)


def answer(target, series, data_size, status="answered", prediction=NAN, lower=NAN, upper=NAN, heldout=NAN,
           floor=NAN, verdict="", figures="", noise=NAN):
    procedure = {"answered": "the card's nested choice", "devices' mean": "the measured devices' mean"}.get(status, "")
    return dict(target=target, series=f"s{data_size}", **series, data_size=data_size, status=status,
                procedure=procedure, prediction=prediction, lower=lower, upper=upper,
                model="simple" if status == "answered" else procedure, figures=figures, heldout_mape=heldout,
                noise_mape=noise, floor_mape=floor, verdict=verdict, line=f"{target} {series['engine']} {data_size}: a sentence")


def answers() -> pd.DataFrame:
    return pd.DataFrame([
        answer("A", ROCKS, 2_000_000, prediction=120.0, lower=100.0, upper=150.0, heldout=12.0, floor=6.0,
               verdict="beats the baseline (a reason)", figures="randwrite 64K lat_mean", noise=9.0),
        answer("B", ROCKS, 2_000_000, status="devices' mean", prediction=300.0, lower=150.0, upper=600.0,
               heldout=40.0, floor=6.0, verdict="beats the baseline (a reason)", noise=9.0),
        answer("A", ROCKS, 4_000_000, prediction=1234.5, lower=1000.0, upper=1500.0, heldout=14.0, floor=6.0,
               verdict="predictable"),
        answer("B", ROCKS, 4_000_000, prediction=2345.0, lower=2000.0, upper=2700.0, heldout=18.0, floor=7.0,
               verdict="predictable"),
        answer("A", MARIA, 16 * 2**20, prediction=55.5, heldout=5.0, floor=5.0, verdict="predictable"),
        answer("B", MARIA, 16 * 2**20, status="no answer", verdict="predictable"),
    ])


def figure_value() -> pd.DataFrame:
    """The figure worth asking for (``validation/figure_value.csv``) of the two targets."""
    return pd.DataFrame([
        dict(target="A", family="all series", series=3, error=10.3, figure="", figure_text="", error_with=NAN),
        dict(target="B", family="ycsb rocksdb update lat_mean (us)", series=2, error=29.0,
             figure="randread_16K_lat_mean", figure_text="randread 16K lat_mean", error_with=13.0),
        dict(target="B", family="all series", series=3, error=29.0, figure="randread_16K_lat_mean",
             figure_text="randread 16K lat_mean", error_with=12.0)])


def card_figures() -> pd.DataFrame:
    return pd.DataFrame([
        dict(target="B", feature="randwrite_64K_lat_mean", figure="randwrite 64K lat_mean", value=50.0, unit="us",
             rule="given", how="the card gives it", inputs=""),
        dict(target="B", feature="randwrite_64K_bw", figure="randwrite 64K bw", value=1.31e9, unit="B/s",
             rule="little", how="randwrite 64K bw = 1 in flight / 50 us x 64K = 1311 MB/s",
             inputs="randwrite_64K_lat_mean")])


def verdicts() -> pd.DataFrame:
    rows = [dict(ROCKS, interior_mape=10.0, interior_floor_mape=5.0, interior_noise_mape=8.0, interior_baseline_mape=30.0,
                 verdict="predictable (within 10 %)"),
            dict(ROCKS, interior_mape=20.0, interior_floor_mape=7.0, interior_noise_mape=9.0, interior_baseline_mape=50.0,
                 verdict="beats the baseline but misses the tolerance"),
            dict(MARIA, interior_mape=NAN, interior_floor_mape=NAN, interior_baseline_mape=NAN,
                 verdict="too few devices to judge (a nested choice needs 4)")]
    return pd.DataFrame(rows)
