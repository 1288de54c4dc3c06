import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from benchcast import aggregate, importers, screen
from tests_common import PAPER, paper_agg


def hand_fit(x, y):
    """The paper's section 2.3 formulas, literally."""
    n = len(x)
    sx, sy, sxy, sxx = sum(x), sum(y), sum(a * b for a, b in zip(x, y)), sum(a * a for a in x)
    a = (n * sxy - sx * sy) / (n * sxx - sx**2)
    b = (sxx * sy - sxy * sx) / (n * sxx - sx**2)
    ybar = sy / n
    yhat = [a * xi + b for xi in x]
    r2 = sum((h - ybar) ** 2 for h in yhat) / sum((yi - ybar) ** 2 for yi in y)
    return a, b, r2


def test_fit_all_matches_hand_formulas():
    x = [222.34, 55.427, 19.527]  # paper Table 5, 64K write latency
    y = [4590.5499, 2164.09408, 1684.78087]  # Figure 2, write-only 16 GB
    a, b, r2, n = screen.fit_all(np.array([y]), np.array([x]))
    ha, hb, hr2 = hand_fit(x, y)
    assert a[0, 0] == pytest.approx(ha, rel=1e-12)
    assert b[0, 0] == pytest.approx(hb, rel=1e-12)
    assert r2[0, 0] == pytest.approx(hr2, rel=1e-12)
    assert n[0, 0] == 3
    # and the paper's published figures (Table 8, Table 12)
    assert r2[0, 0] == pytest.approx(0.999852, abs=1e-6)
    assert a[0, 0] == pytest.approx(14.39262, abs=1e-3)
    assert b[0, 0] == pytest.approx(1386.865, abs=0.05)


def test_fit_all_handles_missing_and_degenerate():
    Y = np.array([[1.0, 2.0, np.nan, 4.0], [5.0, 5.0, 5.0, 5.0]])
    X = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0], [1.0, np.nan, np.nan, 3.0]])
    a, b, r2, n = screen.fit_all(Y, X, min_n=3)
    assert a[0, 0] == pytest.approx(1.0) and b[0, 0] == pytest.approx(0.0) and r2[0, 0] == pytest.approx(1.0)
    assert n[0, 0] == 3
    assert np.isnan(r2[0, 1])  # no spread in X
    assert np.isnan(r2[1, 0])  # no spread in Y
    assert n[0, 2] == 2 and np.isnan(a[0, 2])  # too few devices


def test_fit_all_equals_sklearn_on_random_grid_with_large_values():
    rng = np.random.default_rng(0)
    X = rng.uniform(1e9, 3e9, size=(7, 6))  # bandwidths in B/s: large magnitudes
    Y = rng.uniform(100, 5000, size=(11, 6))
    a, b, r2, _ = screen.fit_all(Y, X)
    for t in range(11):
        for f in range(7):
            m = LinearRegression().fit(X[f][:, None], Y[t])
            assert a[t, f] == pytest.approx(m.coef_[0], rel=1e-7)
            assert b[t, f] == pytest.approx(m.intercept_, rel=1e-7)
            assert r2[t, f] == pytest.approx(m.score(X[f][:, None], Y[t]), rel=1e-7, abs=1e-12)


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
