"""benchmarks/busy_machine.py: its comparison of two result trees, made by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis_util import benchmark
from benchcast import records

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

KEYS = [c for c in records.KEY_COLUMNS if c not in ("study", "source")]


def _tree(path, fio_values, ycsb_values, verdicts, quality_rows):
    path.mkdir(parents=True)
    rows = []
    for bench, values in (("fio", fio_values), ("ycsb", ycsb_values)):
        for i, v in enumerate(values):
            rows.append({"study": "local", "source": bench, "device": f"d{i}", "benchmark": bench, "engine": "",
                         "workload": "w", "block_size": 0, "threads": 1, "data_size": 0, "op": "read",
                         "metric": "lat_mean", "unit": "us", "value": v})
    pd.DataFrame(rows).to_csv(path / "aggregated.csv", index=False)
    (path / "validation").mkdir()
    pd.DataFrame(verdicts, columns=["series", "benchmark", "engine", "op", "interior_mape", "interior_floor_mape",
                                    "verdict"]).to_csv(path / "validation/verdicts.csv", index=False)
    (path / "tables").mkdir()
    pd.DataFrame(quality_rows, columns=["device", "benchmark", "runs", "spoiled", "measured_again",
                                        "flagged_cells"]).to_csv(path / "tables/quality.csv", index=False)
    return path


def test_compare_by_hand(tmp_path):
    """fio: idle 100, 200, 400 / busy 102, 180, 404: |shifts| 2, 10, 1 % -> median 2 %. YCSB: 100 /
    130 -> 30 %. Families: rocksdb write (update + insert) MAPE idle (10 + 20) / 2 = 15, busy 30;
    rocksdb read idle 5, busy 5; all YCSB idle 35/3, busy 65/3 (x1.86). One of three verdicts differs."""
    v_idle = [("u", "ycsb", "rocksdb", "update", 10, 4, "predictable"),
              ("i", "ycsb", "rocksdb", "insert", 20, 6, "predictable"),
              ("r", "ycsb", "rocksdb", "read", 5, 2, "predictable")]
    v_busy = [("u", "ycsb", "rocksdb", "update", 40, 12, "not predictable"),
              ("i", "ycsb", "rocksdb", "insert", 20, 8, "predictable"),
              ("r", "ycsb", "rocksdb", "read", 5, 3, "predictable")]
    idle = _tree(tmp_path / "idle", [100, 200, 400], [100], v_idle, [("d0", "fio", 9, 0, 0, 0)])
    busy = _tree(tmp_path / "busy", [102, 180, 404], [130], v_busy,
                 [("d0", "fio", 11, 2, 2, 0), ("d1", "ycsb", 3, 1, 0, 1)])
    bm = benchmark("busy_machine")
    c = bm.compare(idle, busy, {"idle": 600, "busy": 900})
    assert c["fio"] == (pytest.approx(2.0), 3) and c["ycsb"] == (pytest.approx(30.0), 1)
    fam = c["families"]
    assert fam.loc["rocksdb write", ("idle", "mape")] == 15 and fam.loc["rocksdb write", ("busy", "mape")] == 30
    assert fam.loc["rocksdb write", ("busy", "floor")] == 10 and fam.loc["rocksdb read", ("idle", "floor")] == 2
    assert fam.loc["all YCSB", ("busy", "mape")] == pytest.approx(65 / 3)
    assert list(c["changed"].index) == ["u"] and c["same_verdict"] == pytest.approx(2 / 3)
    assert c["remeasured"].loc["fio", ("busy", "measured_again")] == 2
    assert math.isnan(c["remeasured"].loc["ycsb", ("idle", "spoiled")])
    text = bm.report(c)
    assert "wall time: idle 10.0 min, busy 15.0 min (x1.50; limit x1.8)" in text
    assert "fio trimmed means: median |busy/idle - 1| = 2.0 % over 3 cells" in text
    assert "busy/idle MAPE x1.86" in text and "same verdict: 67 % of series" in text


def test_raw_and_corrected_per_tier_and_runs_other_io_spoiled_by_hand(tmp_path):
    """Per tier: d0 fio 100 -> 110 raw (+10 %), stated at the reference speed 100 -> 101 (+1 %); d1
    200 -> 180 (-10 %), corrected 200 -> 198 (-1 %): median |b/a - 1| over both 10 % raw, 1 %
    corrected. Quality: 5 fio runs spoiled, 3 of them by other I/O (other_mbps x2, other_iops x1),
    2 by other CPU."""
    def tree(name, fio, corrected, why):
        t = _tree(tmp_path / name, fio, [100], [("u", "ycsb", "rocksdb", "update", 10, 4, "predictable")],
                  [("d0", "fio", 9, 5, 4, 0)])
        agg = pd.read_csv(t / "aggregated.csv")
        agg["corrected"] = corrected + [float("nan")]
        agg.to_csv(t / "aggregated.csv", index=False)
        q = pd.read_csv(t / "tables/quality.csv").assign(why=why)
        q.to_csv(t / "tables/quality.csv", index=False)
        return t

    a = tree("a", [100, 200], [100, 200], "")
    b = tree("b", [110, 180], [101, 198], "other_cpu x2, other_mbps x2, other_iops x1")
    bm = benchmark("busy_machine")
    c = bm.compare(a, b)
    assert c["fio"] == (pytest.approx(10.0), 2) and c["fio_corrected"] == (pytest.approx(1.0), 2)
    tiers = c["tiers"]
    assert tiers.loc["d0", ("fio", "raw", "signed median %")] == pytest.approx(10)
    assert tiers.loc["d1", ("fio", "corrected", "signed median %")] == pytest.approx(-1)
    assert tiers.loc["all", ("fio", "corrected", "median |b/a-1| %")] == pytest.approx(1)
    assert c["remeasured"].loc["fio", ("busy", "other_io")] == 3 and c["remeasured"].loc["fio", ("idle", "other_io")] == 0
    text = bm.report(c)
    assert "fio at the reference speed (corrected): median |busy/idle - 1| = 1.0 % over 2 cells" in text
    assert bm.other_io_spoiled("other_cpu x2, other_mbps x2, other_iops x1") == 3
