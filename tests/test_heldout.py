"""Tests of benchcast.heldout: held-out-device validation against hand computation, refusals, selection."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from analysis_util import io_records, make_agg
from benchcast import blockio, config, features, fits, heldout, workloads

F64 = ("randwrite", 65536, "lat_mean")
F4 = ("randwrite", 4096, "lat_mean")
FBW = ("randwrite", 65536, "bw")


def hand_loo(x, y, alpha=0.05):
    """Leave-one-out predictions and intervals of y = a + b x, by the closed-form formulas."""
    out = []
    for i in range(len(x)):
        xs, ys = np.delete(x, i), np.delete(y, i)
        n = len(xs)
        xbar, ybar = xs.mean(), ys.mean()
        sxx = ((xs - xbar) ** 2).sum()
        b = ((xs - xbar) * (ys - ybar)).sum() / sxx
        a = ybar - b * xbar
        pred = a + b * x[i]
        if n > 2:
            s = np.sqrt(((ys - a - b * xs) ** 2).sum() / (n - 2))
            half = stats.t.ppf(1 - alpha / 2, n - 2) * s * np.sqrt(1 + 1 / n + (x[i] - xbar) ** 2 / sxx)
        else:
            half = np.nan
        out.append((pred, pred - half, pred + half))
    return np.array(out)


def four_devices():
    x64 = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 25.0}
    x4 = {"a": 3.0, "b": 1.0, "c": 7.0, "d": 2.0}
    bw = {"a": 900.0, "b": 500.0, "c": 300.0, "d": 350.0}
    y = {"a": 130.0, "b": 190.0, "c": 430.0, "d": 270.0}
    feats = {d: {F64: x64[d], F4: x4[d], FBW: bw[d]} for d in x64}
    return make_agg(feats, y), x64, x4, y


def test_loo_simple_matches_hand_computation():
    agg, x64, x4, y = four_devices()
    folds, summary = heldout.loo_simple(agg, alpha=0.1)
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
    folds, _ = heldout.loo_simple(agg)
    for i, d in enumerate(devs):
        train = pd.DataFrame({"x": np.delete(x, i)})
        fit = fits.fit_ols(fits.design_matrix(train, ["x"]), np.delete(y, i))
        p = fits.predict_ols(fit, pd.DataFrame({"x": [x[i]]})).iloc[0]
        row = folds[folds["held_out"] == d].iloc[0]
        assert row[["prediction", "lower", "upper"]].to_numpy(float) == pytest.approx(
            p[["prediction", "lower", "upper"]].to_numpy(float))


def test_loo_simple_three_devices_zero_df_flagged_not_crashing():
    agg = make_agg({"a": {F64: 10.0}, "b": {F64: 20.0}, "c": {F64: 40.0}}, {"a": 110.0, "b": 190.0, "c": 420.0})
    folds, summary = heldout.loo_simple(agg)
    hand = hand_loo(np.array([10.0, 20.0, 40.0]), np.array([110.0, 190.0, 420.0]))
    assert folds.set_index("held_out").loc[["a", "b", "c"], "prediction"].to_numpy() == pytest.approx(hand[:, 0])
    assert folds["lower"].isna().all() and folds["upper"].isna().all() and folds["covered"].isna().all()
    assert (folds["interval_flag"] == fits.FLAG_ZERO_DF).all()
    s = summary.iloc[0]
    assert np.isfinite(s["mape"]) and np.isnan(s["coverage"]) and s["n_intervals"] == 0


def test_loo_simple_missing_figure_and_candidates():
    agg, *_ = four_devices()
    agg = agg[~((agg["device"] == "d") & (agg["block_size"] == 4096))]
    folds, summary = heldout.loo_simple(agg, candidates=lambda k: ["randwrite_4K_lat_mean", "randwrite_64K_lat_mean"])
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
    folds, summary = heldout.loo_simple(agg)
    assert len(summary) == 200 and len(folds) == 1600
    cov = folds["covered"].astype(float).mean()
    assert 0.90 <= cov <= 0.99


def test_select_simple_both_choices_and_differ_flag():
    agg, *_ = four_devices()
    _, summary = heldout.loo_simple(agg)
    sel = heldout.select_simple(summary)
    row = sel.iloc[0]
    best_r2 = summary.loc[summary["r2"].idxmax()]
    best_mape = summary.loc[summary["mape"].idxmin()]
    assert row["paper_feature"] == best_r2["features"] and row["paper_r2"] == best_r2["r2"]
    assert row["selected_feature"] == best_mape["features"] and row["selected_mape"] == best_mape["mape"]
    assert row["differ"] == (best_r2["features"] != best_mape["features"])
    # hand-made summary where they differ
    s = pd.DataFrame({"series": "s", **{c: "" for c in ["benchmark", "engine", "workload", "op", "metric", "unit"]},
                      "threads": 0, "data_size": 0, "features": ["f1", "f2", "f3"], "r2": [0.99, 0.95, 0.5],
                      "mape": [12.0, 3.0, 1.0], "coverage": np.nan, "n_folds": 3, "n_predicted": [3, 3, 2]})
    out = heldout.select_simple(s).iloc[0]
    assert (out["paper_feature"], out["selected_feature"], out["differ"]) == ("f1", "f2", True)  # f3 incomplete


def pooled(n_dev, sizes=(2, 8, 32), noise=1.0, seed=5):
    rng = np.random.default_rng(seed)
    devs = [f"d{i}" for i in range(n_dev)]
    x1 = dict(zip(devs, rng.uniform(10, 100, n_dev)))
    x2 = dict(zip(devs, rng.uniform(1, 10, n_dev)))
    feats = {d: {F64: x1[d], F4: x2[d]} for d in devs}
    res = {d: {s * 10**9: 100 + 5 * x1[d] + 2 * s + rng.normal(0, noise) for s in sizes} for d in devs}
    return make_agg(feats, res), devs


def test_loo_multiple_matches_hand_least_squares_and_holds_out_device_rows_together():
    agg, devs = pooled(4)
    folds, summary, refusals = heldout.loo_multiple(agg, candidates=lambda k: ["randwrite_64K_lat_mean"])
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
    folds, summary, refusals = heldout.loo_multiple(agg)
    assert set(summary["features"]) == {"randwrite_4K_lat_mean", "randwrite_64K_lat_mean"}
    assert refusals["features"].tolist() == ["randwrite_4K_lat_mean+randwrite_64K_lat_mean"]
    r = refusals.iloc[0]
    assert (r["model"], r["n_figures"], r["n_devices"]) == ("multiple", 2, 3)
    assert "need at least 4 devices" in r["reason"]
    # 3 devices, 1 figure: each fold fits on 2 devices -> flagged
    assert (folds["device_df"] == 0).all() and (folds["interval_flag"] == fits.FLAG_NO_DEVICE_DF).all()
    # with 4 devices the pair is allowed
    agg4, _ = pooled(4)
    _, summary4, refusals4 = heldout.loo_multiple(agg4)
    assert refusals4.empty and len(summary4) == 3
    sel = heldout.select_multiple(summary, refusals)
    assert sel.iloc[0]["n_refused"] == 1 and sel.iloc[0]["selected_features"] in set(summary["features"])


def test_loo_multiple_across_workloads_needs_read_fraction():
    agg_w, _ = pooled(4, seed=1)
    agg_r, _ = pooled(4, seed=2)
    app = agg_r[agg_r["benchmark"] != "fio"].assign(workload="write-heavy")
    agg = pd.concat([agg_w, app], ignore_index=True)
    _, summary, refusals = heldout.loo_multiple(agg, pool_by=features.POOL_ACROSS_WORKLOADS, max_figures=1)
    assert summary.empty and len(refusals) == 2
    assert refusals["reason"].str.contains("read fraction unknown for workload").all()
    _, summary, refusals = heldout.loo_multiple(agg, pool_by=features.POOL_ACROSS_WORKLOADS, max_figures=1,
                                                 read_fraction=workloads.read_fractions())
    assert refusals.empty and (summary["variables"] == "data_gb+log2_data_gb+read_fraction").all()
    assert (summary["n_rows"] == 24).all()


def test_baseline_mape_is_leave_one_out_mean():
    agg, _, _, y = four_devices()
    _, summary = heldout.loo_simple(agg)
    yv = np.array(list(y.values()))
    pred = (yv.sum() - yv) / 3
    expect = np.abs(100 * (pred - yv) / yv).mean()
    assert summary["baseline_mape"].tolist() == pytest.approx([expect] * len(summary))
    assert heldout.select_simple(summary)["baseline_mape"].iloc[0] == summary["baseline_mape"].iloc[0]


def six_tiers():
    """Six devices; y = 50 + 2 x64 exactly except on device e (+20 %), so x64 predicts well; x4 is noise."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0}
    x4 = {"a": 5.0, "b": 1.0, "c": 4.0, "d": 2.0, "e": 6.0, "f": 3.0}
    y = {d: 50 + 2 * x64[d] for d in x64}
    y["e"] *= 1.2
    feats = {d: {F64: x64[d], F4: x4[d]} for d in x64}
    return make_agg(feats, y), x64, x4, y


def test_nested_choice_never_sees_the_held_out_device():
    """For each held-out device the feature is chosen by leave-one-out error over the others only,
    and the prediction is the fold fitted without that device: checked by hand for every device."""
    agg, x64, x4, y = six_tiers()
    folds, _ = heldout.loo_simple(agg)
    nested = heldout.nested_choice(agg, folds, None)
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        # inner choice: leave-one-out MAPE over the other five devices, per feature
        mapes = {}
        for fid, xd in (("randwrite_64K_lat_mean", x64), ("randwrite_4K_lat_mean", x4)):
            xv, yv = np.array([xd[e] for e in rest]), np.array([y[e] for e in rest])
            pred = hand_loo(xv, yv)[:, 0]
            mapes[fid] = np.mean(np.abs(100 * (pred - yv) / yv))
        chosen = min(mapes, key=mapes.get)
        row = nested[nested["held_out"] == d]
        assert row["features"].tolist() == [chosen]
        xd = x64 if chosen == "randwrite_64K_lat_mean" else x4
        xv, yv = np.array([xd[e] for e in rest]), np.array([y[e] for e in rest])
        b, a = np.polyfit(xv, yv, 1)
        assert row["prediction"].iloc[0] == pytest.approx(a + b * xd[d])


def test_nested_choice_takes_the_median_of_the_three_best_by_hand():
    """top=3: for each held-out device the three figures are ranked by leave-one-out MAPE over the
    other devices, and the one whose prediction for the held-out device is the median wins; top=1
    is the best-ranked alone. Checked by hand for every device."""
    agg, x64, x4, y = six_tiers()
    x16 = {"a": 2.0, "b": 12.0, "c": 25.0, "d": 70.0, "e": 90.0, "f": 230.0}  # a rougher copy of x64
    agg = make_agg({d: {F64: x64[d], F4: x4[d], ("randwrite", 16384, "lat_mean"): x16[d]} for d in x64}, y)
    folds, _ = heldout.loo_simple(agg)
    devs = list(x64)
    figures = {"randwrite_64K_lat_mean": x64, "randwrite_4K_lat_mean": x4, "randwrite_16K_lat_mean": x16}
    for top in (1, 3):
        nested = heldout.nested_choice(agg, folds, None, top=top).set_index("held_out")
        assert len(nested) == len(devs)
        for d in devs:
            rest = [e for e in devs if e != d]
            yv = np.array([y[e] for e in rest])
            scored = []
            for fid, xd in figures.items():
                xv = np.array([xd[e] for e in rest])
                mape = np.mean(np.abs(100 * (hand_loo(xv, yv)[:, 0] - yv) / yv))
                b, a = np.polyfit(xv, yv, 1)
                scored.append((mape, fid, a + b * xd[d]))
            best = sorted(scored)[:top]
            fid, pred = sorted(best, key=lambda t: t[2])[len(best) // 2][1:]
            assert nested.loc[d, "features"] == fid
            assert nested.loc[d, "prediction"] == pytest.approx(pred)
    # the median is not always the best-ranked model: the choice differs somewhere
    one = heldout.nested_choice(agg, folds, None, top=1).set_index("held_out")
    three = heldout.nested_choice(agg, folds, None, top=3).set_index("held_out")
    assert (one["features"] != three["features"]).any()


def test_shared_scores_average_a_model_over_series_that_differ_in_the_shared_fields():
    """Each model's score is the mean of its scores over the series of its family (the series
    fields but the shared ones); an application's I/O-path figure is one model across workloads,
    also inside a log-log line; simple and multiple models are apart."""
    keys = pd.DataFrame({"benchmark": "ycsb", "engine": ["m", "m", "m", "r"], "workload": ["w", "w", "x", "w"],
                         "threads": 1, "data_size": [4, 8, 4, 4], "op": "update", "metric": "lat_mean", "unit": "us"},
                        index=["m/w/4", "m/w/8", "m/x/4", "r/w/4"])
    scores = pd.DataFrame([
        ("m/w/4", "f", "simple", 10.0), ("m/w/8", "f", "simple", 30.0), ("m/x/4", "f", "simple", 50.0),
        ("r/w/4", "f", "simple", 7.0), ("m/w/4", "f", "multiple", 1.0),
        ("m/w/4", "log-log io_path[m/w]", "simple", 4.0), ("m/x/4", "log-log io_path[m/x]", "simple", 8.0),
        ("m/w/8", "io_path[m/w]", "simple", 2.0)], columns=["series", "features", "model", "mape"])
    by_size = heldout.shared_scores(scores, keys, ["data_size"])["mape"].tolist()
    assert by_size == [20.0, 20.0, 50.0, 7.0, 1.0, 4.0, 8.0, 2.0]
    both = heldout.shared_scores(scores, keys, ["data_size", "workload"])["mape"].tolist()
    assert both == [30.0, 30.0, 30.0, 7.0, 1.0, 6.0, 6.0, 2.0]
    assert heldout.shared_scores(scores, keys, [])["mape"].tolist() == scores["mape"].tolist()


def test_nested_choice_shares_the_score_over_data_sizes_by_hand():
    """With share=[data_size] a held-out device's feature is the one of lowest mean inner MAPE over
    both sizes' series (leave-one-out over the other devices), the same for both sizes, and each
    size's prediction is its own fold."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0}
    x4 = {"a": 2.0, "b": 9.0, "c": 35.0, "d": 50.0, "e": 110.0, "f": 190.0}
    # size 1 follows x64 but for e, size 2 follows x4 closely: alone they choose apart somewhere
    y = {d: {1: 50 + 2 * x64[d] * (1.3 if d == "e" else 1.0), 2: 40 + 3 * x4[d] * (0.9 if d == "c" else 1.0)}
         for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, _ = heldout.loo_simple(agg)
    alone = heldout.nested_choice(agg, folds, None)
    shared = heldout.nested_choice(agg, folds, None, share=["data_size"])
    figures = {"randwrite_64K_lat_mean": x64, "randwrite_4K_lat_mean": x4}
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        mape = {}
        for fid, xd in figures.items():
            xv = np.array([xd[e] for e in rest])
            per_size = []
            for size in (1, 2):
                yv = np.array([y[e][size] for e in rest])
                per_size.append(np.mean(np.abs(100 * (hand_loo(xv, yv)[:, 0] - yv) / yv)))
            mape[fid] = np.mean(per_size)
        best = min(mape, key=mape.get)
        rows = shared[shared["held_out"] == d]
        assert rows["features"].tolist() == [best, best]
        for size in (1, 2):
            xv = np.array([figures[best][e] for e in rest])
            b, a = np.polyfit(xv, np.array([y[e][size] for e in rest]), 1)
            row = rows[rows["data_size"] == size]
            assert row["prediction"].iloc[0] == pytest.approx(a + b * figures[best][d])
    # alone, the two sizes choose different figures for some device
    per = alone.pivot(index="held_out", columns="data_size", values="features")
    assert (per[1] != per[2]).any()


def test_loglog_lines_by_hand_and_only_in_the_nested_choice():
    """y = 3 x64^0.5 exactly (a power law): each log-log fold is the line through the other
    devices' logs, its prediction and interval the log-space ones taken back; it predicts every
    device exactly where the straight line misses. The held-out and paper choices ignore log-log
    lines; the nested choice takes them."""
    _, x64, x4, _ = six_tiers()
    y = {d: 3 * x64[d] ** 0.5 for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, summary = heldout.loo_simple(agg, alpha=0.1, loglog=True)
    devs = list(x64)
    lx, ly = np.log([x64[d] for d in devs]), np.log([y[d] for d in devs])
    ll = folds[folds["features"] == heldout.LOGLOG + "randwrite_64K_lat_mean"].set_index("held_out").loc[devs]
    lx4 = np.log([x4[d] for d in devs])
    hand = np.exp(hand_loo(lx4, ly, alpha=0.1))  # a log-log line that does not fit: a real interval
    l4 = folds[folds["features"] == heldout.LOGLOG + "randwrite_4K_lat_mean"].set_index("held_out").loc[devs]
    assert l4["prediction"].to_numpy() == pytest.approx(hand[:, 0])
    assert l4["lower"].to_numpy() == pytest.approx(hand[:, 1])
    assert l4["upper"].to_numpy() == pytest.approx(hand[:, 2])
    assert l4["pct_error"].to_numpy() == pytest.approx(100 * (hand[:, 0] - np.exp(ly)) / np.exp(ly))
    assert ll["pct_error"].abs().max() < 1e-9 and ll["x"].to_numpy() == pytest.approx(np.exp(lx))
    lin = folds[folds["features"] == "randwrite_64K_lat_mean"]
    assert lin["pct_error"].abs().max() > 5
    row = summary.set_index("features").loc[heldout.LOGLOG + "randwrite_64K_lat_mean"]
    assert row["slope"] == pytest.approx(0.5) and row["intercept"] == pytest.approx(np.log(3))
    sel = heldout.select_simple(summary).iloc[0]
    assert not sel["selected_feature"].startswith(heldout.LOGLOG)
    assert not sel["paper_feature"].startswith(heldout.LOGLOG)
    nested = heldout.nested_choice(agg, folds, None, loglog=True)
    assert set(nested["features"]) == {heldout.LOGLOG + "randwrite_64K_lat_mean"}
    # without loglog the same data gives straight lines only
    plain, _ = heldout.loo_simple(agg)
    assert not plain["features"].str.startswith(heldout.LOGLOG).any()


def test_median_model_uses_an_odd_number_of_the_best():
    """Three rows: the median prediction's row; two rows: the best-ranked alone (no average of two
    models); rows keep their own columns and lose the rank."""
    ranked = pd.DataFrame({"series": ["s"] * 3 + ["t"] * 2, "features": ["x", "y", "z", "x", "y"],
                           "_rank": [0, 1, 2, 1, 0], "prediction": [30.0, 10.0, 20.0, 5.0, 7.0],
                           "lower": [1.0, 2.0, 3.0, 4.0, 5.0]})
    out = heldout.median_model(ranked).set_index("series")
    assert out.loc["s", "features"] == "z" and out.loc["s", "lower"] == 3.0
    assert out.loc["t", "features"] == "y" and out.loc["t", "prediction"] == 7.0
    assert "_rank" not in out.columns


def test_nested_choice_weighs_multiple_models_on_the_other_devices_only():
    """y = 50 + 2 x64 + 30 x4 exactly: no single figure fits, the pair does. For every device the
    pair wins on the other devices, and its prediction is the multiple fold fitted without it."""
    agg, x64, x4, _ = six_tiers()
    y = {d: 50 + 2 * x64[d] + 30 * x4[d] for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, _ = heldout.loo_simple(agg)
    mfolds, _, _ = heldout.loo_multiple(agg)
    nested = heldout.nested_choice(agg, folds, None, mfolds).set_index("held_out")
    assert set(nested["model"]) == {"multiple"}
    assert set(nested["features"]) == {"randwrite_4K_lat_mean+randwrite_64K_lat_mean"}
    assert nested["pct_error"].abs().max() < 1e-9
    # without the multiple candidates, the best single figure is used and misses
    simple_only = heldout.nested_choice(agg, folds, None)
    assert set(simple_only["model"]) == {"simple"} and simple_only["pct_error"].abs().max() > 1


def test_tier_table_and_verdicts_by_hand():
    """Positions, baseline and model errors per tier and the verdicts, computed by hand on six tiers."""
    agg, x64, x4, y = six_tiers()
    agg["cv"] = np.where(agg["benchmark"] == "ycsb", 0.01 * np.arange(len(agg)), np.nan)  # the runs' spread
    # the runs' standard deviation: 4 % of the result, 3 runs, median kept: se = 4 % x 0.67
    agg["std"], agg["n"], agg["k"] = 0.04 * agg["value"], 3, 1
    screened = pd.DataFrame({"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "threads": 0,
                             "data_size": 16 * 10**9, "op": "write", "metric": "lat_mean", "unit": "us",
                             "feature": ["randwrite_64K_lat_mean", "randwrite_4K_lat_mean"]})
    settings = {**config.defaults("validate"), "max_figures": 1}
    out = heldout.run(agg, screened, {"workloads": ["randwrite"], "block_sizes": ["4K", "64K"],
                                      "metrics": ["lat_mean"]}, {"metrics": ["lat_mean"]}, [], settings)
    t = out["tiers"]
    assert t["position"].tolist() == ["interior"] * 4 + ["extreme"] * 2  # interior first
    assert set(t.loc[t["position"] == "extreme", "held_out"]) == {"a", "f"}  # lowest and highest result
    yv = pd.Series(y)
    base = {d: 100 * ((yv.sum() - yv[d]) / 5 - yv[d]) / yv[d] for d in yv.index}
    assert t.set_index("held_out")["baseline_pct_error"].to_dict() == pytest.approx(base)
    nested = out["chosen_folds"].query("kind == @heldout.KIND_NESTED").set_index("held_out")["pct_error"]
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
    expected = heldout.VERDICT_PREDICTABLE if v["interior_mape"] <= 10 else heldout.VERDICT_BETTER
    assert v["interior_mape"] < v["interior_baseline_mape"] and v["verdict"] == expected


def test_verdicts_label_device_independent_and_unpredictable_series():
    tier = lambda errs, base: pd.DataFrame({  # noqa: E731
        "series": "s", "benchmark": "ycsb", "engine": "e", "workload": "w", "threads": 0, "data_size": 1, "op": "read",
        "metric": "lat_mean", "unit": "us", "held_out": list("abcd"), "position": ["interior", "interior", "extreme",
                                                                                  "extreme"],
        "truth": [2.0, 3.0, 1.0, 4.0], "baseline_pct_error": base, "nested_pct_error": errs,
        "nested_features": "f", "multiple_pct_error": np.nan})
    flat = heldout.verdicts(tier([1.0, -2.0, 3.0, 1.0], [2.0, 1.0, -3.0, 4.0]), 10)
    assert flat["verdict"].iloc[0] == heldout.VERDICT_INDEPENDENT
    worse = heldout.verdicts(tier([40.0, -50.0, 3.0, 1.0], [20.0, 30.0, -30.0, 40.0]), 10)
    assert worse["verdict"].iloc[0] == heldout.VERDICT_NONE
    missed = heldout.verdicts(tier([15.0, -15.0, 3.0, 1.0], [20.0, 30.0, -30.0, 40.0]), 10)
    assert missed["verdict"].iloc[0] == heldout.VERDICT_BETTER
    few = heldout.verdicts(tier([np.nan] * 4, [20.0, 30.0, -30.0, 40.0]), 10)
    assert few["verdict"].iloc[0] == heldout.VERDICT_FEW


def test_a_series_whose_operations_do_not_reach_the_device_is_device_independent():
    """From the runs' device records: a workload whose operations sent fewer than 0.01 device requests
    each on every device with counters (at least 3 of the series') is labelled device-independent
    whatever the models do; counters on only 2 devices, or one run above the threshold, leave the
    usual verdict."""
    tier = pd.DataFrame({
        "series": "s", "benchmark": "ycsb", "engine": "e", "workload": "w", "threads": 1, "data_size": 1, "op": "read",
        "metric": "lat_mean", "unit": "us", "held_out": list("abcd"),
        "position": ["interior", "interior", "extreme", "extreme"], "truth": [2.0, 3.0, 1.0, 4.0],
        "baseline_pct_error": [20.0, 30.0, -30.0, 40.0], "nested_pct_error": [40.0, -50.0, 3.0, 1.0],
        "nested_features": "f", "multiple_pct_error": np.nan})

    def agg(per_op, devices="abcd"):
        rows = [dict(benchmark="ycsb", engine="e", workload="w", threads=1, device=d, data_size=ds, op="device",
                     metric=m, value=per_op[m] * (2 if (d, ds) == ("d", 2) else 1))
                for d in devices for ds in (1, 2) for m in per_op]
        return pd.DataFrame(rows)

    quiet = {"reads_per_op": 0.001, "writes_per_op": 0.002, "syncs_per_op": 0.001}
    req = blockio.requests_per_op(agg(quiet))
    assert req["requests_per_op"].tolist() == pytest.approx([0.008]) and req["devices"].tolist() == [tuple("abcd")]
    v = heldout.verdicts(tier, 10, req).iloc[0]
    assert v["verdict"] == heldout.VERDICT_OFF_PATH and v["device_requests_per_op"] == pytest.approx(0.008)
    busy = blockio.requests_per_op(agg({**quiet, "syncs_per_op": 0.002}))  # 0.01 on d at size 2
    assert heldout.verdicts(tier, 10, busy).iloc[0]["verdict"] == heldout.VERDICT_NONE
    tmpfs_too = blockio.requests_per_op(agg(quiet, devices="abc"))  # d, say a tmpfs, counts nothing
    assert heldout.verdicts(tier, 10, tmpfs_too).iloc[0]["verdict"] == heldout.VERDICT_OFF_PATH
    uncounted = blockio.requests_per_op(agg(quiet, devices="ab"))
    assert heldout.verdicts(tier, 10, uncounted).iloc[0]["verdict"] == heldout.VERDICT_NONE
    assert heldout.verdicts(tier, 10).iloc[0]["verdict"] == heldout.VERDICT_NONE


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
    shaped = features.profile_candidates(agg, {})
    folds, summary = heldout.loo_simple(agg, shaped, io_paths=0.05)
    assert set(summary["features"]) == {"randread_16K_lat_mean", "write_16K_sync_lat_mean", name}
    f = folds[folds["features"] == name].set_index("held_out")
    for d in rr:  # weight: the median of the other four devices' reads per operation
        w = float(np.median([reads[o] for o in rr if o != d]))
        assert f.at[d, "x"] == pytest.approx(w * rr[d] + sync[d])
        xs = np.array([w * rr[o] + sync[o] for o in rr if o != d])
        ys = np.array([y[o] for o in rr if o != d])
        b, a = np.polyfit(xs, ys, 1)
        assert f.at[d, "prediction"] == pytest.approx(a + b * f.at[d, "x"])
    assert heldout.loo_simple(agg, shaped)[1]["features"].tolist() == ["randread_16K_lat_mean",
                                                                       "write_16K_sync_lat_mean"]
    nested = heldout.nested_choice(agg, folds, shaped, io_paths=0.05)
    assert set(nested["held_out"]) == set(rr)


def test_fold_scores_of_the_multiple_folds_are_the_nested_choices_inner_scores():
    """The scores that rank multiple models on all devices (from loo_multiple's folds) are those
    the nested choice computes for a table itself: one computation, two ways to reach it."""
    agg, _ = pooled(5)
    folds, _, _ = heldout.loo_multiple(agg)
    a = heldout.fold_scores(folds).set_index(["series", "features"])["mape"].sort_index()
    b = heldout.fold_scores(heldout._multiple_inner(agg, None, features.POOL_PER_WORKLOAD, None, 2))
    b = b.set_index(["series", "features"])["mape"].sort_index()
    assert len(a) > 1 and a.index.equals(b.index)
    assert a.to_numpy() == pytest.approx(b.to_numpy())


def test_median_model_of_nothing_is_nothing():
    """No ranked row (no model could predict anything): an empty table, not an error."""
    empty = pd.DataFrame({"series": [], "target": [], "prediction": [], "_rank": []})
    out = heldout.median_model(empty, by=("series", "target"))
    assert out.empty and "_rank" not in out.columns


def test_within_range_is_the_other_devices_results():
    """A prediction is within range when it lies within the results of the series' other devices
    (all of them for a target that is not a device of the table)."""
    Y = pd.DataFrame({"s": [1.0, 2.0, 3.0, 4.0]}, index=["a", "b", "c", "d"])
    got = heldout.within_range(Y, ["s"] * 5, ["a", "d", "card", "b", "a"], [1.5, 3.5, 5.0, 2.5, 2.0])
    assert got.tolist() == [False, False, False, True, True]


def test_interval_spread_is_the_conformal_quantile_of_the_extrapolations_errors_by_hand():
    """Of the n held-out errors |log(prediction / truth)| of the ranked models of a series' family
    on devices whose result lies beyond the other devices' results, the ceil((n + 1) level)-th
    smallest; all errors where no device lies beyond; an unranked model's errors do not count; a
    prediction within the other devices' results gets no spread."""
    Y = pd.DataFrame({"s": [100.0, 200.0, 300.0, 400.0]}, index=["a", "b", "c", "d"])
    keys = pd.DataFrame({c: ["x"] for c in heldout.SERIES_COLUMNS}, index=["s"])
    truth = {"a": 100.0, "b": 200.0, "c": 300.0, "d": 400.0}
    pct = {"b": 10.0, "c": -20.0, "a": 50.0, "d": 5.0}  # b and c interior, a and d extremes
    errors = pd.DataFrame({"series": "s", "model": "simple", "features": "f", "held_out": list(pct),
                           "prediction": [truth[d] * (1 + p / 100) for d, p in pct.items()],
                           "pct_error": list(pct.values())})
    other = errors.assign(features="g", pct_error=900.0, prediction=10 * errors["prediction"])
    ranked = pd.DataFrame({"series": ["s"], "model": ["simple"], "features": ["f"]})
    out = heldout.interval_spread(pd.concat([errors, other]), ranked, Y, keys, (), 0.5)
    assert out["s"] == pytest.approx(np.log(1.5))  # of log 1.05, log 1.5: the ceil(3 / 2) = 2nd smallest
    assert heldout.interval_spread(errors, ranked, Y, keys, (), 0.2)["s"] == pytest.approx(np.log(1.05))
    inner = errors[errors["held_out"].isin(["b", "c"])]
    assert heldout.interval_spread(inner, ranked, Y, keys, (), 0.5)["s"] == pytest.approx(-np.log(0.8))
    rows = pd.DataFrame({"series": ["s", "s"], "held_out": ["card", "card"], "prediction": [250.0, 450.0]})
    got = heldout.spread_of(rows, out, Y)
    assert np.isnan(got[0]) and got[1] == pytest.approx(np.log(1.5))


def test_widen_holds_the_band_keeps_a_wider_interval_and_no_negative_bound():
    rows = pd.DataFrame({"series": ["s"] * 5, "prediction": [100.0, 100.0, 100.0, 100.0, 100.0],
                         "lower": [90.0, 10.0, np.nan, 90.0, -20.0], "upper": [110.0, 1000.0, np.nan, 110.0, 220.0],
                         "truth": [140.0] * 5, "covered": pd.array([False] * 5, dtype="boolean"),
                         "interval_flag": ["", "", fits.FLAG_ZERO_DF, "", ""],
                         "log_spread": [np.log(1.5), np.log(1.5), np.log(1.5), np.nan, np.nan]})
    out = heldout.widen(rows)
    assert "log_spread" not in out.columns
    assert out["lower"].tolist() == pytest.approx([100 / 1.5, 10.0, 100 / 1.5, 90.0, 0.0])
    assert out["upper"].tolist() == pytest.approx([150.0, 1000.0, 150.0, 110.0, 220.0])
    assert out["covered"].tolist() == [True, True, True, False, True]
    # the third row had no interval of its own: its flag says where the band comes from
    assert out["interval_flag"].tolist() == ["", "", heldout.FLAG_BAND, "", ""]


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
    folds, summary = heldout.loo_simple(agg, alpha=0.1, relative=True)
    rel = folds[folds["features"] == heldout.RELATIVE + "randwrite_64K_lat_mean"].set_index("held_out").loc[devs]
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
    sel = heldout.select_simple(summary).iloc[0]
    assert not sel["selected_feature"].startswith(heldout.RELATIVE)
    assert not sel["paper_feature"].startswith(heldout.RELATIVE)
    nested = heldout.nested_choice(agg, folds, None, relative=True)
    assert nested["features"].str.startswith(heldout.RELATIVE).any()
    plain, _ = heldout.loo_simple(agg)
    assert not plain["features"].str.startswith(heldout.RELATIVE).any()
