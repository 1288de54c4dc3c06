"""Tests of benchcast.validation.folds: held-out-device folds of simple and multiple models against
hand computation, refusals, log-log lines and lines on relative errors."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from analysis_util import io_records, make_agg
from benchcast import features, fits
from benchcast.features import iopath
from benchcast.core import workloads
from benchcast.validation import choice
from benchcast.validation import nested as vnested
from benchcast.validation import folds as vfolds
from validation_util import F4, F64, four_devices, hand_loo, pooled, six_tiers


def test_loo_simple_matches_hand_computation():
    agg, x64, x4, y = four_devices()
    folds, summary = vfolds.loo_simple(agg, alpha=0.1)
    devs = ["a", "b", "c", "d"]
    yv = np.array([y[d] for d in devs])
    for fid, xd in (("randwrite_64K_lat_mean", x64), ("randwrite_4K_lat_mean", x4)):
        xv = np.array([xd[d] for d in devs])
        hand = hand_loo(xv, yv, alpha=0.1)
        f = folds[folds["features"] == fid].set_index("held_out").loc[devs]
        assert f["prediction"].to_numpy() == pytest.approx(hand[:, 0])
        assert f["lower"].to_numpy() == pytest.approx(hand[:, 1])
        assert f["upper"].to_numpy() == pytest.approx(hand[:, 2])
        pct = 100 * (hand[:, 0] - yv) / yv
        assert f["pct_error"].to_numpy() == pytest.approx(pct)
        assert f["abs_error"].to_numpy() == pytest.approx(np.abs(hand[:, 0] - yv))
        inside = (hand[:, 1] <= yv) & (yv <= hand[:, 2])
        assert f["covered"].astype(bool).tolist() == inside.tolist()
        s = summary[summary["features"] == fid].iloc[0]
        assert s["mape"] == pytest.approx(np.abs(pct).mean())
        assert s["coverage"] == pytest.approx(inside.mean())
        assert s["r2"] == pytest.approx(np.corrcoef(xv, yv)[0, 1] ** 2)
        assert (s["n_folds"], s["n_predicted"], s["n_intervals"]) == (4, 4, 4)
    assert (folds["resid_df"] == 1).all() and (folds["interval_flag"] == "").all()


def test_loo_simple_agrees_with_statsmodels():
    rng = np.random.default_rng(7)
    devs = [f"d{i}" for i in range(7)]
    x = rng.uniform(5, 50, 7)
    y = 100 + 8 * x + rng.normal(0, 20, 7)
    agg = make_agg({d: {F64: v} for d, v in zip(devs, x)}, dict(zip(devs, y)))
    folds, _ = vfolds.loo_simple(agg)
    for i, d in enumerate(devs):
        train = pd.DataFrame({"x": np.delete(x, i)})
        fit = fits.fit_ols(fits.design_matrix(train, ["x"]), np.delete(y, i))
        p = fits.predict_ols(fit, pd.DataFrame({"x": [x[i]]})).iloc[0]
        row = folds[folds["held_out"] == d].iloc[0]
        assert row[["prediction", "lower", "upper"]].to_numpy(float) == pytest.approx(
            p[["prediction", "lower", "upper"]].to_numpy(float))


def test_loo_simple_three_devices_zero_df_flagged_not_crashing():
    agg = make_agg({"a": {F64: 10.0}, "b": {F64: 20.0}, "c": {F64: 40.0}}, {"a": 110.0, "b": 190.0, "c": 420.0})
    folds, summary = vfolds.loo_simple(agg)
    hand = hand_loo(np.array([10.0, 20.0, 40.0]), np.array([110.0, 190.0, 420.0]))
    assert folds.set_index("held_out").loc[["a", "b", "c"], "prediction"].to_numpy() == pytest.approx(hand[:, 0])
    assert folds["lower"].isna().all() and folds["upper"].isna().all() and folds["covered"].isna().all()
    assert (folds["interval_flag"] == fits.FLAG_ZERO_DF).all()
    s = summary.iloc[0]
    assert np.isfinite(s["mape"]) and np.isnan(s["coverage"]) and s["n_intervals"] == 0


def test_loo_simple_missing_figure_and_candidates():
    agg, *_ = four_devices()
    agg = agg[~((agg["device"] == "d") & (agg["block_size"] == 4096))]
    folds, summary = vfolds.loo_simple(agg, candidates=lambda k: ["randwrite_4K_lat_mean", "randwrite_64K_lat_mean"])
    assert set(summary["features"]) == {"randwrite_4K_lat_mean", "randwrite_64K_lat_mean"}
    s4 = summary.set_index("features").loc["randwrite_4K_lat_mean"]
    assert (s4["n_devices"], s4["n_folds"], s4["n_predicted"]) == (3, 3, 3)
    assert "d" not in set(folds.loc[folds["features"] == "randwrite_4K_lat_mean", "held_out"])


def test_loo_simple_coverage_on_known_linear_model():
    # 200 series on 8 devices, each y = 50 + 4 x + N(0, 5): nominal 95% intervals should hold ~95%.
    rng = np.random.default_rng(11)
    devs = [f"d{i}" for i in range(8)]
    x = dict(zip(devs, rng.uniform(10, 100, 8)))
    res = {d: {(k + 1) * 10**9: 50 + 4 * x[d] + rng.normal(0, 5) for k in range(200)} for d in devs}
    agg = make_agg({d: {F64: x[d]} for d in devs}, res)
    folds, summary = vfolds.loo_simple(agg)
    assert len(summary) == 200 and len(folds) == 1600
    cov = folds["covered"].astype(float).mean()
    assert 0.90 <= cov <= 0.99


def test_loo_multiple_matches_hand_least_squares_and_holds_out_device_rows_together():
    agg, devs = pooled(4)
    folds, summary, refusals = vfolds.loo_multiple(agg, candidates=lambda k: ["randwrite_64K_lat_mean"], max_figures=2)
    assert refusals.empty and len(summary) == 1
    s = summary.iloc[0]
    assert s["variables"] == "data_gb+log2_data_gb" and (s["n_rows"], s["n_devices"]) == (12, 4)
    P = features.pool_table(agg)
    X = np.column_stack([np.ones(len(P)), P["randwrite_64K_lat_mean"], P["data_size"] / 1e9,
                         np.log2(P["data_size"] / 1e9)])
    yv = P["value"].to_numpy()
    for d in devs:
        tr, te = (P["device"] != d).to_numpy(), (P["device"] == d).to_numpy()
        beta = np.linalg.solve(X[tr].T @ X[tr], X[tr].T @ yv[tr])  # normal equations by hand
        f = folds[folds["held_out"] == d]
        assert len(f) == 3 and (f["n_train"] == 9).all() and (f["n_train_devices"] == 3).all()
        assert f["prediction"].to_numpy() == pytest.approx(X[te] @ beta)
        assert f["truth"].to_numpy() == pytest.approx(yv[te])
    assert (folds["device_df"] == 1).all() and (folds["interval_flag"] == "").all()
    assert s["mape"] == pytest.approx((100 * (folds["prediction"] - folds["truth"]) / folds["truth"]).abs().mean())


def test_loo_multiple_refuses_over_parameterised_models():
    agg, _ = pooled(3)
    folds, summary, refusals = vfolds.loo_multiple(agg, max_figures=2)
    assert set(summary["features"]) == {"randwrite_4K_lat_mean", "randwrite_64K_lat_mean"}
    assert refusals["features"].tolist() == ["randwrite_4K_lat_mean+randwrite_64K_lat_mean"]
    r = refusals.iloc[0]
    assert (r["model"], r["n_figures"], r["n_devices"]) == ("multiple", 2, 3)
    assert "need at least 4 devices" in r["reason"]
    # 3 devices, 1 figure: each fold fits on 2 devices -> flagged
    assert (folds["device_df"] == 0).all() and (folds["interval_flag"] == fits.FLAG_NO_DEVICE_DF).all()
    # with 4 devices the pair is allowed
    agg4, _ = pooled(4)
    _, summary4, refusals4 = vfolds.loo_multiple(agg4, max_figures=2)
    assert refusals4.empty and len(summary4) == 3
    sel = choice.select_multiple(summary, refusals)
    assert sel.iloc[0]["n_refused"] == 1 and sel.iloc[0]["selected_features"] in set(summary["features"])


def test_loo_multiple_across_workloads_needs_read_fraction():
    agg_w, _ = pooled(4, seed=1)
    agg_r, _ = pooled(4, seed=2)
    app = agg_r[agg_r["benchmark"] != "fio"].assign(workload="write-heavy")
    agg = pd.concat([agg_w, app], ignore_index=True)
    _, summary, refusals = vfolds.loo_multiple(agg, pool_by=features.POOL_ACROSS_WORKLOADS, max_figures=1)
    assert summary.empty and len(refusals) == 2
    assert refusals["reason"].str.contains("read fraction unknown for workload").all()
    _, summary, refusals = vfolds.loo_multiple(agg, pool_by=features.POOL_ACROSS_WORKLOADS, max_figures=1,
                                                 read_fraction=workloads.read_fractions())
    assert refusals.empty and (summary["variables"] == "data_gb+log2_data_gb+read_fraction").all()
    assert (summary["n_rows"] == 24).all()


def test_baseline_mape_is_leave_one_out_mean():
    agg, _, _, y = four_devices()
    _, summary = vfolds.loo_simple(agg)
    yv = np.array(list(y.values()))
    pred = (yv.sum() - yv) / 3
    expect = np.abs(100 * (pred - yv) / yv).mean()
    assert summary["baseline_mape"].tolist() == pytest.approx([expect] * len(summary))
    assert choice.select_simple(summary)["baseline_mape"].iloc[0] == summary["baseline_mape"].iloc[0]


def test_io_path_figures_are_weighted_without_the_held_out_devices_counters():
    """The I/O-path figure of a fold is weighted by the other devices' requests per operation
    (the median of theirs), so a held-out device's own application runs never enter its
    prediction; the nested choice scores it on the other devices alone too."""
    rr = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 25.0, "e": 60.0}
    sync = {"a": 30.0, "b": 35.0, "c": 90.0, "d": 50.0, "e": 100.0}
    reads = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 5.0}
    y = {d: 5.0 + reads[d] * rr[d] + sync[d] for d in rr}
    agg = make_agg({d: {("randread", 16384, "lat_mean"): rr[d], ("write", 16384, "lat_mean"): sync[d]} for d in rr}, y,
                   op="update")
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    io = io_records({d: {"reads_per_op": reads[d], "read_request_size": 16384.0, "syncs_per_op": 1.0,
                         "write_request_size": 16384.0} for d in rr})
    agg = pd.concat([agg, io], ignore_index=True)
    name = "io_path[mysql/write-only]"
    shaped = iopath.profile_candidates(agg, {})
    folds, summary = vfolds.loo_simple(agg, shaped, io_paths=0.05)
    assert set(summary["features"]) == {"randread_16K_lat_mean", "write_16K_sync_lat_mean", name}
    f = folds[folds["features"] == name].set_index("held_out")
    for d in rr:  # weight: the median of the other four devices' reads per operation
        w = float(np.median([reads[o] for o in rr if o != d]))
        assert f.at[d, "x"] == pytest.approx(w * rr[d] + sync[d])
        xs = np.array([w * rr[o] + sync[o] for o in rr if o != d])
        ys = np.array([y[o] for o in rr if o != d])
        b, a = np.polyfit(xs, ys, 1)
        assert f.at[d, "prediction"] == pytest.approx(a + b * f.at[d, "x"])
    assert vfolds.loo_simple(agg, shaped)[1]["features"].tolist() == ["randread_16K_lat_mean",
                                                                       "write_16K_sync_lat_mean"]
    nested = vnested.nested_choice(agg, folds, shaped, how=choice.Nested(io_paths=0.05))
    assert set(nested["held_out"]) == set(rr)


def test_io_shaped_model_by_hand_own_time_plus_requests_times_figures():
    """The I/O-shaped model: an operation costs the application's own time (measured on the device
    whose I/O-path figure is smallest) plus the requests it sends times the figure of their shape,
    one slope for how the figures add up (the median of the slopes from that device to each other
    one, so one quirky device does not tilt it). Computed by hand on five devices, one of them (e)
    30 % off the line: every other device is predicted exactly, as is e's own prediction from them."""
    rr = {"a": 2.0, "b": 20.0, "c": 40.0, "d": 25.0, "e": 60.0}
    sync = {"a": 1.0, "b": 35.0, "c": 90.0, "d": 50.0, "e": 100.0}
    reads = 0.5
    y = {d: 40.0 + 1.8 * (reads * rr[d] + sync[d]) for d in rr}
    y["e"] *= 1.3
    agg = make_agg({d: {("randread", 16384, "lat_mean"): rr[d], ("write", 16384, "lat_mean"): sync[d]} for d in rr}, y,
                   op="update")
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    io = io_records({d: {"reads_per_op": reads, "read_request_size": 16384.0, "syncs_per_op": 1.0,
                         "write_request_size": 16384.0} for d in rr})
    agg = pd.concat([agg, io], ignore_index=True)
    shaped = iopath.profile_candidates(agg, {})
    folds, summary = vfolds.loo_simple(agg, shaped, io_paths=0.05, anchored=True)
    name = vfolds.model_label(["io_path[mysql/write-only]"], vfolds.ANCHORED)
    f = folds[folds["features"] == name].set_index("held_out")
    x = {d: reads * rr[d] + sync[d] for d in rr}
    for d in rr:
        train = [o for o in rr if o != d]
        anchor = min(train, key=lambda o: x[o])
        slope = np.median([(y[o] - y[anchor]) / (x[o] - x[anchor]) for o in train if o != anchor])
        assert f.at[d, "prediction"] == pytest.approx(y[anchor] + slope * (x[d] - x[anchor]))
        if d != "e":  # the quirky device is outvoted: the others lie on the line
            assert f.at[d, "prediction"] == pytest.approx(y[d]) or d == "a"
    assert f.at["e", "prediction"] == pytest.approx(40.0 + 1.8 * x["e"])  # e predicted as if it had no quirk
    # the interval: symmetric on the log scale about the prediction, above zero
    assert (f["lower"] > 0).all()
    assert np.log(f["upper"] / f["prediction"]).to_numpy() == pytest.approx(np.log(f["prediction"] / f["lower"]).to_numpy())
    s = summary[summary["features"] == name].iloc[0]
    assert s["form"] == "anchored" and np.isnan(s["r2"])


def test_loglog_lines_by_hand_and_only_in_the_nested_choice():
    """y = 3 x64^0.5 exactly (a power law): each log-log fold is the line through the other
    devices' logs, its prediction and interval the log-space ones taken back; it predicts every
    device exactly where the straight line misses. The held-out and paper choices ignore log-log
    lines; the nested choice takes them."""
    _, x64, x4, _ = six_tiers()
    y = {d: 3 * x64[d] ** 0.5 for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, summary = vfolds.loo_simple(agg, alpha=0.1, loglog=True)
    devs = list(x64)
    lx, ly = np.log([x64[d] for d in devs]), np.log([y[d] for d in devs])
    ll = folds[folds["features"] == vfolds.model_label(["randwrite_64K_lat_mean"], vfolds.LOGLOG)]
    ll = ll.set_index("held_out").loc[devs]
    lx4 = np.log([x4[d] for d in devs])
    hand = np.exp(hand_loo(lx4, ly, alpha=0.1))  # a log-log line that does not fit: a real interval
    l4 = folds[folds["features"] == vfolds.model_label(["randwrite_4K_lat_mean"], vfolds.LOGLOG)]
    l4 = l4.set_index("held_out").loc[devs]
    assert l4["prediction"].to_numpy() == pytest.approx(hand[:, 0])
    assert l4["lower"].to_numpy() == pytest.approx(hand[:, 1])
    assert l4["upper"].to_numpy() == pytest.approx(hand[:, 2])
    assert l4["pct_error"].to_numpy() == pytest.approx(100 * (hand[:, 0] - np.exp(ly)) / np.exp(ly))
    assert ll["pct_error"].abs().max() < 1e-9 and ll["x"].to_numpy() == pytest.approx(np.exp(lx))
    lin = folds[folds["features"] == "randwrite_64K_lat_mean"]
    assert lin["pct_error"].abs().max() > 5
    row = summary.set_index("features").loc[vfolds.model_label(["randwrite_64K_lat_mean"], vfolds.LOGLOG)]
    assert row["slope"] == pytest.approx(0.5) and row["intercept"] == pytest.approx(np.log(3))
    sel = choice.select_simple(summary).iloc[0]
    assert not sel["selected_feature"].startswith(vfolds.LOGLOG.prefix)
    assert not sel["paper_feature"].startswith(vfolds.LOGLOG.prefix)
    nested = vnested.nested_choice(agg, folds, None, how=choice.Nested(loglog=True))
    assert set(nested["features"]) == {vfolds.model_label(["randwrite_64K_lat_mean"], vfolds.LOGLOG)}
    # without loglog the same data gives straight lines only
    plain, _ = vfolds.loo_simple(agg)
    assert not plain["features"].str.startswith(vfolds.LOGLOG.prefix).any()


def test_relative_lines_by_hand_and_only_in_the_nested_choice():
    """A line on relative errors (weights 1 / y^2) holds each device out and fits the others by
    weighted least squares: predictions and intervals equal statsmodels WLS fold by fold. With
    y = 5 + 2 x64 times a spread that grows with y, the fast devices' percent errors are smaller
    than the straight line's; the held-out and paper choices ignore these lines."""
    _, x64, x4, _ = six_tiers()
    devs = list(x64)
    noise = dict(zip(devs, [1.10, 0.92, 1.06, 0.95, 1.08, 0.93]))
    y = {d: (5 + 2 * x64[d]) * noise[d] for d in devs}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in devs}, y)
    folds, summary = vfolds.loo_simple(agg, alpha=0.1, relative=True)
    rel = folds[folds["features"] == vfolds.model_label(["randwrite_64K_lat_mean"], vfolds.RELATIVE)]
    rel = rel.set_index("held_out").loc[devs]
    xs, ys = np.array([x64[d] for d in devs]), np.array([y[d] for d in devs])
    for i, d in enumerate(devs):
        m = np.arange(len(devs)) != i
        res = sm.WLS(ys[m], sm.add_constant(xs[m]), weights=1 / ys[m] ** 2).fit()
        ex = np.array([[1.0, xs[i]]])
        sf = res.get_prediction(ex, weights=1 / (ex @ res.params) ** 2).summary_frame(alpha=0.1)
        assert rel.loc[d, "prediction"] == pytest.approx(sf["mean"].iloc[0])
        assert rel.loc[d, "lower"] == pytest.approx(sf["obs_ci_lower"].iloc[0])
        assert rel.loc[d, "upper"] == pytest.approx(sf["obs_ci_upper"].iloc[0])
    line = folds[folds["features"] == "randwrite_64K_lat_mean"].set_index("held_out")
    for d in ("a", "b"):  # the two fastest devices: the slow ones no longer pull the line away
        assert abs(rel.loc[d, "pct_error"]) < abs(line.loc[d, "pct_error"])
    sel = choice.select_simple(summary).iloc[0]
    assert not sel["selected_feature"].startswith(vfolds.RELATIVE.prefix)
    assert not sel["paper_feature"].startswith(vfolds.RELATIVE.prefix)
    nested = vnested.nested_choice(agg, folds, None, how=choice.Nested(relative=True))
    assert nested["features"].str.startswith(vfolds.RELATIVE.prefix).any()
    plain, _ = vfolds.loo_simple(agg)
    assert not plain["features"].str.startswith(vfolds.RELATIVE.prefix).any()
