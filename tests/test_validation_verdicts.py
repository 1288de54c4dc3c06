"""Tests of benchcast.validation.verdicts: tiers and verdicts, by hand."""

import numpy as np
import pandas as pd
import pytest

from benchcast.records import blockio
from benchcast import config, validation
from benchcast.validation import choice, verdicts
from validation_util import six_tiers


def test_tier_table_and_verdicts_by_hand():
    """Positions, baseline and model errors per tier and the verdicts, computed by hand on six tiers."""
    agg, x64, x4, y = six_tiers()
    agg["cv"] = np.where(agg["benchmark"] == "ycsb", 0.01 * np.arange(len(agg)), np.nan)  # the runs' spread
    # the runs' standard deviation: 4 % of the result, 3 runs, median kept: se = 4 % x 0.67
    agg["std"], agg["n"], agg["k"] = 0.04 * agg["value"], 3, 1
    screened = pd.DataFrame({"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "threads": 0,
                             "data_size": 16 * 10**9, "op": "write", "metric": "lat_mean", "unit": "us",
                             "feature": ["randwrite_64K_lat_mean", "randwrite_4K_lat_mean"]})
    settings = validation.Settings.of({**config.defaults("validate"), "max_figures": 1})
    feats = {"workloads": ["randwrite"], "block_sizes": ["4K", "64K"], "metrics": ["lat_mean"]}
    study = validation.Study(features=feats, series={"metrics": ["lat_mean"]}, pairing=[], settings=settings)
    out = validation.run_study(study, agg=agg, screened=screened)
    t = out["tiers"]
    assert t["position"].tolist() == ["interior"] * 4 + ["extreme"] * 2  # interior first
    assert set(t.loc[t["position"] == "extreme", "held_out"]) == {"a", "f"}  # lowest and highest result
    yv = pd.Series(y)
    base = {d: 100 * ((yv.sum() - yv[d]) / 5 - yv[d]) / yv[d] for d in yv.index}
    assert t.set_index("held_out")["baseline_pct_error"].to_dict() == pytest.approx(base)
    nested = out["chosen_folds"].query("kind == @choice.KIND_NESTED").set_index("held_out")["pct_error"]
    assert t.set_index("held_out")["nested_pct_error"].to_dict() == pytest.approx(nested.to_dict())
    runs = agg[agg["benchmark"] == "ycsb"].set_index("device")["cv"]
    assert t.set_index("held_out")["truth_cv_pct"].to_dict() == pytest.approx((100 * runs).to_dict())
    assert t["truth_se_pct"].tolist() == pytest.approx([4 * np.sqrt(1 - np.sqrt(3) / np.pi)] * 6, rel=0.01)
    v = out["verdicts"].iloc[0]
    interior = ["b", "c", "d", "e"]
    assert v["interior_mape"] == pytest.approx(np.mean([abs(nested[d]) for d in interior]))
    assert v["interior_baseline_mape"] == pytest.approx(np.mean([abs(base[d]) for d in interior]))
    assert v["baseline_mape"] == pytest.approx(np.mean(np.abs(list(base.values()))))
    assert (v["n_devices"], v["n_interior"]) == (6, 4)
    assert v["interior_floor_mape"] == pytest.approx(t["truth_se_pct"].iloc[0] * np.sqrt(2 / np.pi))
    assert v["spread"] == pytest.approx(yv.max() / yv.min())
    expected = verdicts.VERDICT_PREDICTABLE if v["interior_mape"] <= 10 else verdicts.VERDICT_BETTER
    assert v["interior_mape"] < v["interior_baseline_mape"] and v["verdict"] == expected
    # what the noise alone costs: the nested choice made again on validate.noise_draws noisy copies
    inner = t[t["position"] == "interior"]
    assert inner["nested_scatter_pct"].notna().all() and (inner["nested_scatter_pct"] > 0).all()
    alone = np.sqrt(2 / np.pi) * np.sqrt(inner["nested_scatter_pct"] ** 2 + inner["truth_se_pct"] ** 2)
    assert v["interior_noise_mape"] == pytest.approx(alone.mean())
    assert v["interior_noise_mape"] > v["interior_floor_mape"]
    assert out["nested_draws"].empty  # the copies that measure the noise bag nothing (validate.bag 0)
    quiet = validation.Study(features=feats, series={"metrics": ["lat_mean"]}, pairing=[],
                             settings=validation.Settings.of({**config.defaults("validate"), "max_figures": 1,
                                                              "noise_draws": 0}))
    out0 = validation.run_study(quiet, agg=agg, screened=screened)
    assert out0["tiers"]["nested_scatter_pct"].isna().all() and np.isnan(out0["verdicts"]["interior_noise_mape"].iloc[0])
    assert out0["chosen_folds"]["prediction"].tolist() == out["chosen_folds"]["prediction"].tolist()


def test_verdicts_label_device_independent_and_unpredictable_series():
    tier = lambda errs, base: pd.DataFrame({  # noqa: E731
        "series": "s", "benchmark": "ycsb", "engine": "e", "workload": "w", "threads": 0, "data_size": 1, "op": "read",
        "metric": "lat_mean", "unit": "us", "held_out": list("abcd"), "position": ["interior", "interior", "extreme",
                                                                                  "extreme"],
        "truth": [2.0, 3.0, 1.0, 4.0], "baseline_pct_error": base, "nested_pct_error": errs,
        "nested_features": "f", "multiple_pct_error": np.nan})
    flat = verdicts.verdicts(tier([1.0, -2.0, 3.0, 1.0], [2.0, 1.0, -3.0, 4.0]), 10)
    assert flat["verdict"].iloc[0] == verdicts.VERDICT_INDEPENDENT
    worse = verdicts.verdicts(tier([40.0, -50.0, 3.0, 1.0], [20.0, 30.0, -30.0, 40.0]), 10)
    assert worse["verdict"].iloc[0] == verdicts.VERDICT_NONE
    missed = verdicts.verdicts(tier([15.0, -15.0, 3.0, 1.0], [20.0, 30.0, -30.0, 40.0]), 10)
    assert missed["verdict"].iloc[0] == verdicts.VERDICT_BETTER
    few = verdicts.verdicts(tier([np.nan] * 4, [20.0, 30.0, -30.0, 40.0]), 10)
    assert few["verdict"].iloc[0] == verdicts.VERDICT_FEW


def test_a_series_whose_operations_do_not_reach_the_device_is_device_independent():
    """From the runs' device records: a workload whose operations sent fewer than 0.01 device requests
    each at the series' data size on every device with counters (at least 3 of the series') is
    labelled device-independent whatever the models do; counters on only 2 devices, or one run of that
    size above the threshold, leave the usual verdict; a run of another size does not count."""
    tier = pd.DataFrame({
        "series": "s", "benchmark": "ycsb", "engine": "e", "workload": "w", "threads": 1, "data_size": 1, "op": "read",
        "metric": "lat_mean", "unit": "us", "held_out": list("abcd"),
        "position": ["interior", "interior", "extreme", "extreme"], "truth": [2.0, 3.0, 1.0, 4.0],
        "baseline_pct_error": [20.0, 30.0, -30.0, 40.0], "nested_pct_error": [40.0, -50.0, 3.0, 1.0],
        "nested_features": "f", "multiple_pct_error": np.nan})

    def agg(per_op, devices="abcd", busy_size=2):
        rows = [dict(benchmark="ycsb", engine="e", workload="w", threads=1, device=d, data_size=ds, op="device",
                     metric=m, value=per_op[m] * (2 if (d, ds) == ("d", busy_size) else 1))
                for d in devices for ds in (1, 2) for m in per_op]
        return pd.DataFrame(rows)

    quiet = {"reads_per_op": 0.001, "writes_per_op": 0.002, "syncs_per_op": 0.001}
    req = blockio.requests_per_op(agg(quiet, busy_size=1))
    assert req["requests_per_op"].tolist() == pytest.approx([0.008, 0.004])  # sizes 1 and 2
    assert req["devices"].tolist() == [tuple("abcd")] * 2
    v = verdicts.verdicts(tier, 10, req).iloc[0]
    assert v["verdict"] == verdicts.VERDICT_OFF_PATH and v["device_requests_per_op"] == pytest.approx(0.008)
    busy = blockio.requests_per_op(agg({**quiet, "syncs_per_op": 0.002}, busy_size=1))  # 0.01 on d at size 1
    assert verdicts.verdicts(tier, 10, busy).iloc[0]["verdict"] == verdicts.VERDICT_NONE
    elsewhere = blockio.requests_per_op(agg({**quiet, "syncs_per_op": 0.002}))  # 0.01 on d at size 2 only
    assert verdicts.verdicts(tier, 10, elsewhere).iloc[0]["verdict"] == verdicts.VERDICT_OFF_PATH
    tmpfs_too = blockio.requests_per_op(agg(quiet, devices="abc"))  # d, say a tmpfs, counts nothing
    assert verdicts.verdicts(tier, 10, tmpfs_too).iloc[0]["verdict"] == verdicts.VERDICT_OFF_PATH
    uncounted = blockio.requests_per_op(agg(quiet, devices="ab"))
    assert verdicts.verdicts(tier, 10, uncounted).iloc[0]["verdict"] == verdicts.VERDICT_NONE
    assert verdicts.verdicts(tier, 10).iloc[0]["verdict"] == verdicts.VERDICT_NONE
