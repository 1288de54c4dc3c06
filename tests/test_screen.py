"""Tests of benchcast.screening.screen: the paper's Tables 8-11 from its own data, pairing, series without a fit."""
import pytest

from analysis_util import PAPER, paper_agg
from benchcast.screening import screen


def test_paper_screening_reproduces_tables_8_to_11():
    agg = paper_agg()
    res = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    best = screen.best(res)
    # Table 8: write-only, 16 GB, write latency: 64K latency best, 1K latency worst
    t8 = res[(res.workload == "write-only") & (res.data_size == 16 * 10**9)].set_index("feature")
    assert len(t8) == 10
    assert t8["r2"].idxmax() == "randwrite_64K_lat_mean"
    assert t8.loc["randwrite_1K_lat_mean", "r2"] == pytest.approx(0.145438, abs=2e-5)
    assert t8.loc["randwrite_256K_bw", "r2"] == pytest.approx(0.755037, abs=2e-5)
    # pairing: write results only ever use randwrite features, read results randread
    assert set(res.loc[res.op == "write", "feature_workload"]) == {"randwrite"}
    assert set(res.loc[res.op == "read", "feature_workload"]) == {"randread"}
    # Table 10 rows and Table 11 means
    b = best.set_index(["workload", "data_size", "op"])
    assert b.loc[("write-only", 2 * 10**9, "write"), "feature"] == "randwrite_256K_lat_mean"
    assert b.loc[("read-only", 4 * 10**9, "read"), "feature"] == "randread_256K_lat_mean"
    assert b.loc[("read-only", 4 * 10**9, "read"), "r2"] == pytest.approx(0.281778, abs=2e-5)
    means = best.groupby("op")["r2"].mean()
    assert means["read"] == pytest.approx(0.837477, abs=1e-5)
    assert means["write"] == pytest.approx(0.998331, abs=2e-6)
    assert (best["feature"] != "").all()


def test_best_keeps_series_without_fit():
    agg = paper_agg()
    agg = agg[~((agg.benchmark == "ycsb") & (agg.device == "dram") & (agg.workload == "read-only"))]
    res = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    best = screen.best(res)
    ro = best[best.workload == "read-only"]
    assert len(ro) == 7 and (ro["feature"] == "").all() and ro["r2"].isna().all()


def test_screen_without_pairing_uses_all_features():
    agg = paper_agg()
    res = screen.screen(agg, PAPER["features"], PAPER["series"], [], 3)
    assert res.groupby(["workload", "data_size", "op"]).size().unique().tolist() == [20]
