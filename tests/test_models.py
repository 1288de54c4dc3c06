"""Tests of benchcast.models: OLS fits and intervals, tables, the device-figure rule, guards, targets."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchcast import BenchcastError, models


def make_agg(features: dict, results: dict, data_size=16 * 10**9, workload="write-only", op="write"):
    """features: {device: {(rw, bs, metric): value}}; results: {device: value or {data_size: value}}."""
    rows = []
    for dev, figs in features.items():
        for (rw, bs, metric), v in figs.items():
            rows.append(dict(device=dev, benchmark="fio", engine="", workload=rw, block_size=bs, threads=0,
                             data_size=0, op="write" if "write" in rw else "read", metric=metric,
                             unit="us" if metric.startswith("lat") else "MB/s", value=v))
    for dev, res in results.items():
        res = res if isinstance(res, dict) else {data_size: res}
        for ds, v in res.items():
            rows.append(dict(device=dev, benchmark="ycsb", engine="mysql", workload=workload, block_size=0,
                             threads=0, data_size=ds, op=op, metric="lat_mean", unit="us", value=v))
    return pd.DataFrame(rows).assign(study="s", source="test", n=3)


def test_simple_interval_matches_textbook_formula():
    x = np.array([1.0, 2.0, 4.0, 5.0, 7.0])
    y = np.array([3.1, 4.9, 9.2, 10.8, 15.3])
    fit = models.fit_simple(x, y)
    p = models.predict_simple(fit, [3.0, 10.0], alpha=0.1).reset_index(drop=True)
    n, xbar = len(x), x.mean()
    sxx = ((x - xbar) ** 2).sum()
    b = ((x - xbar) * (y - y.mean())).sum() / sxx
    a = y.mean() - b * xbar
    s = np.sqrt(((y - a - b * x) ** 2).sum() / (n - 2))
    for i, x0 in enumerate([3.0, 10.0]):
        half = stats.t.ppf(0.95, n - 2) * s * np.sqrt(1 + 1 / n + (x0 - xbar) ** 2 / sxx)
        assert p.at[i, "prediction"] == pytest.approx(a + b * x0)
        assert p.at[i, "lower"] == pytest.approx(a + b * x0 - half)
        assert p.at[i, "upper"] == pytest.approx(a + b * x0 + half)
    assert (p["resid_df"] == 3).all() and (p["interval_flag"] == "").all()
    assert fit.rsquared == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2)


def test_zero_df_predicts_with_nan_interval():
    fit = models.fit_simple([1.0, 3.0], [10.0, 20.0])
    p = models.predict_simple(fit, [2.0, 5.0])
    assert p["prediction"].tolist() == pytest.approx([15.0, 30.0])
    assert p["lower"].isna().all() and p["upper"].isna().all()
    assert (p["interval_flag"] == models.FLAG_ZERO_DF).all()


def test_rank_deficient_design_raises():
    X = models.design_matrix(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [2.0, 4.0, 6.0]}), ["a", "b"])
    with pytest.raises(BenchcastError, match="rank-deficient"):
        models.fit_ols(X, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("multiple", [False, True])
def test_interval_coverage_on_known_linear_model(multiple):
    rng = np.random.default_rng(1)
    hits = 0
    reps = 200
    for _ in range(reps):
        d = pd.DataFrame({"x": rng.uniform(0, 10, 12), "z": rng.uniform(-1, 1, 12)})
        y = 2 + 3 * d["x"] + (4 * d["z"] if multiple else 0) + rng.normal(0, 1.5, 12)
        cols = ["x", "z"] if multiple else ["x"]
        fit = models.fit_ols(models.design_matrix(d, cols), y)
        new = pd.DataFrame({"x": [rng.uniform(0, 12)], "z": [rng.uniform(-1, 1)]})
        truth = 2 + 3 * new["x"][0] + (4 * new["z"][0] if multiple else 0) + rng.normal(0, 1.5)
        p = models.predict_ols(fit, new[cols], alpha=0.05).iloc[0]
        hits += p["lower"] <= truth <= p["upper"]
    assert 0.90 <= hits / reps <= 0.99


def test_tables_feature_ids_series_labels_and_targets():
    agg = make_agg({"a": {("randwrite", 65536, "lat_mean"): 10.0, ("randwrite", 1024, "bw"): 5.0},
                    "b": {("randwrite", 65536, "lat_mean"): 20.0}}, {"a": 100.0, "b": 200.0})
    F = models.feature_matrix(agg)
    assert list(F.columns) == ["randwrite_1K_bw", "randwrite_64K_lat_mean"]
    assert np.isnan(F.at["b", "randwrite_1K_bw"])
    Y, keys = models.series_matrix(agg)
    assert list(Y.columns) == ["ycsb/mysql/write-only/write/lat_mean/16GB"]
    assert keys.iloc[0]["data_size"] == 16 * 10**9
    T = models.target_figures({"S": {"figures": [{"workload": "randwrite", "block_size": "64K",
                                                  "metric": "lat_mean", "value": 50}]}})
    assert T.at["S", "randwrite_64K_lat_mean"] == 50.0
    dup = pd.concat([agg, agg.iloc[[0]].assign(threads=4)])
    with pytest.raises(BenchcastError, match="several fio rows"):
        models.feature_matrix(dup)


def test_candidate_feature_forms():
    avail = ["f1", "f2", "f3"]
    assert models.candidate_features("s", {}, None, avail) == avail
    assert models.candidate_features("s", {}, {"s": ["f3", "nope", "f1"]}, avail) == ["f3", "f1"]
    assert models.candidate_features("s", {"op": "w"}, lambda k: ["f2"] if k["op"] == "w" else [], avail) == ["f2"]
    df = pd.DataFrame({"series": ["s", "t"], "feature": ["f1", "f2"]})
    assert models.candidate_features("s", {}, df, avail) == ["f1"]


def test_device_figure_rule():
    assert models.max_device_figures(3) == 1
    assert models.max_device_figures(2) == 0
    assert models.max_device_figures(10) == 8
    assert models.check_device_figures(1, 3) is None
    assert "need at least 4 devices" in models.check_device_figures(2, 3)
    assert models.check_device_figures(1, 2) is not None


def test_varying_workload_variables():
    d = pd.DataFrame({"data_size": [2e9, 4e9, 2e9, 4e9], "workload": ["w", "w", "r", "r"], "threads": [1, 1, 1, 1]})
    wv = models.workload_variables(d, {"w": 0.0, "r": 1.0})
    assert wv["log2_data_gb"].tolist() == pytest.approx([1, 2, 1, 2])
    # two sizes: log2 would be collinear with data_gb; threads constant
    assert models.varying_workload_variables(wv) == ["data_gb", "read_fraction"]
    d3 = pd.concat([d, d.assign(data_size=8e9)])
    assert models.varying_workload_variables(models.workload_variables(d3, {"w": 0, "r": 1})) == [
        "data_gb", "log2_data_gb", "read_fraction"]


def test_extrapolation_flags():
    ranges = models.feature_ranges(pd.DataFrame({"f": [10.0, 20.0, 40.0], "g": [1.0, 2.0, 3.0]}))
    x = pd.DataFrame({"f": [5.0, 10.0, 40.0, 41.0], "g": [2.0, 2.0, np.nan, 2.0]})
    flags = models.extrapolation_flags(x, ranges, data_size=[1e9, 256e9, 257e9, 100e9], max_data_size=128e9)
    assert flags["feature_out_of_range"].tolist() == [True, False, False, True]
    assert flags["out_of_range_features"][0] == "f=5 not in [10, 40]"
    assert flags["data_size_extrapolated"].tolist() == [False, False, True, False]  # 2x exactly is allowed
    assert flags["extrapolation"].tolist() == [True, False, True, True]
    none = models.extrapolation_flags(x, ranges)
    assert not none["data_size_extrapolated"].any()


def test_predict_targets_simple_skips_and_flags():
    feats = {d: {("randwrite", 65536, "lat_mean"): v} for d, v in {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}.items()}
    agg = make_agg(feats, {"a": 101.0, "b": 199.0, "c": 402.0, "d": 298.0})
    sel = pd.DataFrame({"series": ["ycsb/mysql/write-only/write/lat_mean/16GB"],
                        "selected_feature": ["randwrite_64K_lat_mean"], "paper_feature": ["randwrite_64K_lat_mean"]})
    targets = {"in": {"figures": [{"workload": "randwrite", "block_size": 65536, "metric": "lat_mean", "value": 25}]},
               "out": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 5}]},
               "none": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": 5}]}}
    pred, skipped = models.predict_targets_simple(agg, sel, targets)
    assert pred["target"].tolist() == ["in", "out"]
    fit = models.fit_simple([10, 20, 40, 30], [101, 199, 402, 298])
    assert pred["prediction"].tolist() == pytest.approx(models.predict_simple(fit, [25, 5])["prediction"].tolist())
    assert pred["extrapolation"].tolist() == [False, True]
    assert (pred["lower"] < pred["prediction"]).all()
    assert skipped["target"].tolist() == ["none"] and "randwrite_64K_lat_mean" in skipped["reason"][0]


def test_predict_targets_multiple_refits_pool_and_flags_data_size():
    rng = np.random.default_rng(3)
    x = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}
    feats = {d: {("randwrite", 65536, "lat_mean"): v} for d, v in x.items()}
    sizes = [2 * 10**9, 8 * 10**9, 32 * 10**9]
    res = {d: {s: 50 + 10 * v + 3 * s / 1e9 + rng.normal(0, 1) for s in sizes} for d, v in x.items()}
    agg = make_agg(feats, res)
    sel = pd.DataFrame({"pool": ["ycsb/mysql/write-only/write/lat_mean/us"],
                        "pool_by": [",".join(models.POOL_PER_WORKLOAD)],
                        "selected_features": ["randwrite_64K_lat_mean"], "variables": ["data_gb"]})
    targets = {"t": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 25}]},
               "u": {"figures": [{"workload": "randwrite", "block_size": "4K", "metric": "lat_mean", "value": 25}]}}
    pred, skipped = models.predict_targets_multiple(agg, sel, targets, data_sizes=["64GB", "100GB"])
    assert pred["data_size"].tolist() == sizes + [64 * 10**9, 100 * 10**9]
    assert pred["measured_size"].tolist() == [True, True, True, False, False]
    assert pred["data_size_extrapolated"].tolist() == [False, False, False, False, True]
    expect = 50 + 10 * 25 + 3 * pred["data_size"] / 1e9
    assert np.allclose(pred["prediction"], expect, rtol=0.02)
    assert ((pred["lower"] <= expect) & (expect <= pred["upper"])).all()
    assert skipped["target"].tolist() == ["u"]
