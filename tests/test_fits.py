"""Tests of benchcast.fits: the one simple least-squares fit against the paper's formulas, scikit-learn and
statsmodels; OLS intervals; the device-figure rule; extrapolation flags."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.linear_model import LinearRegression

from benchcast import BenchcastError, fits


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


def test_simple_matches_hand_formulas():
    x = [222.34, 55.427, 19.527]  # paper Table 5, 64K write latency
    y = [4590.5499, 2164.09408, 1684.78087]  # Figure 2, write-only 16 GB
    a, b, r2, n, *_ = fits.simple(np.array([y]), np.array([x]))
    ha, hb, hr2 = hand_fit(x, y)
    assert a[0, 0] == pytest.approx(ha, rel=1e-12)
    assert b[0, 0] == pytest.approx(hb, rel=1e-12)
    assert r2[0, 0] == pytest.approx(hr2, rel=1e-12)
    assert n[0, 0] == 3
    # and the paper's published figures (Table 8, Table 12)
    assert r2[0, 0] == pytest.approx(0.999852, abs=1e-6)
    assert a[0, 0] == pytest.approx(14.39262, abs=1e-3)
    assert b[0, 0] == pytest.approx(1386.865, abs=0.05)


def test_simple_handles_missing_and_degenerate():
    Y = np.array([[1.0, 2.0, np.nan, 4.0], [5.0, 5.0, 5.0, 5.0]])
    X = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0], [1.0, np.nan, np.nan, 3.0]])
    a, b, r2, n, *_ = fits.simple(Y, X, min_n=3)
    assert a[0, 0] == pytest.approx(1.0) and b[0, 0] == pytest.approx(0.0) and r2[0, 0] == pytest.approx(1.0)
    assert n[0, 0] == 3
    assert np.isnan(r2[0, 1])  # no spread in X
    assert np.isnan(r2[1, 0])  # no spread in Y
    assert n[0, 2] == 2 and np.isnan(a[0, 2])  # too few devices


def test_simple_equals_sklearn_on_random_grid_with_large_values():
    rng = np.random.default_rng(0)
    X = rng.uniform(1e9, 3e9, size=(7, 6))  # bandwidths in B/s: large magnitudes
    Y = rng.uniform(100, 5000, size=(11, 6))
    a, b, r2, *_ = fits.simple(Y, X)
    for t in range(11):
        for f in range(7):
            m = LinearRegression().fit(X[f][:, None], Y[t])
            assert a[t, f] == pytest.approx(m.coef_[0], rel=1e-7)
            assert b[t, f] == pytest.approx(m.intercept_, rel=1e-7)
            assert r2[t, f] == pytest.approx(m.score(X[f][:, None], Y[t]), rel=1e-7, abs=1e-12)


def test_simple_interval_matches_textbook_formula():
    x = np.array([1.0, 2.0, 4.0, 5.0, 7.0])
    y = np.array([3.1, 4.9, 9.2, 10.8, 15.3])
    fit = fits.simple(y[None, :], x[None, :])
    pr, lo, hi, df = fits.simple_predict(fit, np.array([3.0, 10.0]), alpha=0.1)
    p = pd.DataFrame({"prediction": pr[0], "lower": lo[0], "upper": hi[0], "resid_df": df[0, 0]})
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
    assert (p["resid_df"] == 3).all()
    assert fit.r2[0, 0] == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2)


def test_zero_df_predicts_with_nan_interval():
    fit = fits.simple(np.array([[10.0, 20.0]]), np.array([[1.0, 3.0]]), min_n=2)
    pred, lo, hi, df = fits.simple_predict(fit, np.array([2.0, 5.0]))
    assert pred[0].tolist() == pytest.approx([15.0, 30.0])
    assert np.isnan(lo).all() and np.isnan(hi).all() and (df == 0).all()
    ols = fits.fit_ols(fits.design_matrix(pd.DataFrame({"x": [1.0, 3.0]}), ["x"]), [10.0, 20.0])
    p = fits.predict_ols(ols, pd.DataFrame({"x": [2.0, 5.0]}))
    assert p["prediction"].tolist() == pytest.approx([15.0, 30.0])
    assert p["lower"].isna().all() and (p["interval_flag"] == fits.FLAG_ZERO_DF).all()


def test_rank_deficient_design_raises():
    X = fits.design_matrix(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [2.0, 4.0, 6.0]}), ["a", "b"])
    with pytest.raises(BenchcastError, match="rank-deficient"):
        fits.fit_ols(X, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("multiple", [False, True])
def test_interval_coverage_on_known_linear_model(multiple):
    rng = np.random.default_rng(1)
    hits = 0
    reps = 200
    for _ in range(reps):
        d = pd.DataFrame({"x": rng.uniform(0, 10, 12), "z": rng.uniform(-1, 1, 12)})
        y = 2 + 3 * d["x"] + (4 * d["z"] if multiple else 0) + rng.normal(0, 1.5, 12)
        cols = ["x", "z"] if multiple else ["x"]
        fit = fits.fit_ols(fits.design_matrix(d, cols), y)
        new = pd.DataFrame({"x": [rng.uniform(0, 12)], "z": [rng.uniform(-1, 1)]})
        truth = 2 + 3 * new["x"][0] + (4 * new["z"][0] if multiple else 0) + rng.normal(0, 1.5)
        p = fits.predict_ols(fit, new[cols], alpha=0.05).iloc[0]
        hits += p["lower"] <= truth <= p["upper"]
    assert 0.90 <= hits / reps <= 0.99


def test_device_figure_rule():
    assert fits.max_device_figures(3) == 1
    assert fits.max_device_figures(2) == 0
    assert fits.max_device_figures(10) == 8
    assert fits.check_device_figures(1, 3) is None
    assert "need at least 4 devices" in fits.check_device_figures(2, 3)
    assert fits.check_device_figures(1, 2) is not None


def test_extrapolation_flags():
    ranges = fits.feature_ranges(pd.DataFrame({"f": [10.0, 20.0, 40.0], "g": [1.0, 2.0, 3.0]}))
    x = pd.DataFrame({"f": [5.0, 10.0, 40.0, 41.0], "g": [2.0, 2.0, np.nan, 2.0]})
    flags = fits.extrapolation_flags(x, ranges, data_size=[1e9, 256e9, 257e9, 100e9], max_data_size=128e9)
    assert flags["feature_out_of_range"].tolist() == [True, False, False, True]
    assert flags["out_of_range_features"][0] == "f=5 not in [10, 40]"
    assert flags["data_size_extrapolated"].tolist() == [False, False, True, False]  # 2x exactly is allowed
    assert flags["extrapolation"].tolist() == [True, False, True, True]
    none = fits.extrapolation_flags(x, ranges)
    assert not none["data_size_extrapolated"].any()


def test_simple_equals_statsmodels_on_random_data_with_gaps():
    """The one simple least-squares fit against statsmodels OLS, pair by pair, including missing
    values, and its prediction interval against statsmodels' obs_ci."""
    rng = np.random.default_rng(11)
    X = rng.lognormal(3, 1.5, size=(9, 8))
    Y = 50 + 3 * X[rng.integers(0, 9, 13)] + rng.normal(0, 30, size=(13, 8))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y[rng.random(Y.shape) < 0.1] = np.nan
    fit = fits.simple(Y, X)
    x0 = rng.uniform(1, 100, size=(13, 9))
    pred, lo, hi, df = fits.simple_predict(fit, x0, alpha=0.1)
    checked = 0
    for t in range(13):
        for f in range(9):
            m = ~np.isnan(Y[t]) & ~np.isnan(X[f])
            assert fit.n[t, f] == m.sum()
            if m.sum() < 3:
                assert np.isnan(fit.a[t, f])
                continue
            res = sm.OLS(Y[t, m], sm.add_constant(X[f, m])).fit()
            assert fit.b[t, f] == pytest.approx(res.params[0], rel=1e-9)
            assert fit.a[t, f] == pytest.approx(res.params[1], rel=1e-9)
            assert fit.r2[t, f] == pytest.approx(res.rsquared, rel=1e-9, abs=1e-12)
            assert fit.sse[t, f] == pytest.approx(res.ssr, rel=1e-7)
            sf = res.get_prediction(np.array([[1.0, x0[t, f]]])).summary_frame(alpha=0.1)
            assert pred[t, f] == pytest.approx(sf["mean"].iloc[0], rel=1e-9)
            if res.df_resid > 0:
                assert lo[t, f] == pytest.approx(sf["obs_ci_lower"].iloc[0], rel=1e-7, abs=1e-9)
                assert hi[t, f] == pytest.approx(sf["obs_ci_upper"].iloc[0], rel=1e-7, abs=1e-9)
            checked += 1
    assert checked > 80


def test_ols_loo_matches_statsmodels_fold_by_fold():
    """Each row predicted from the fit on the other groups: the statsmodels fit and observation
    interval of fit_ols/predict_ols, row by row; a rank-deficient fold predicts nothing."""
    rng = np.random.default_rng(3)
    groups = np.repeat(["a", "b", "c", "d", "e", "f"], 2)
    d = pd.DataFrame({"x": np.repeat(rng.uniform(1, 100, 6), 2), "s": np.tile([1.0, 2.0], 6)})
    y = 5 + 3 * d["x"] + 7 * d["s"] + rng.normal(0, 4, 12)
    X = fits.design_matrix(d, ["x", "s"])
    loo = fits.ols_loo(X.to_numpy(), y, groups, alpha=0.1)
    for g in np.unique(groups):
        test = groups == g
        fit = fits.fit_ols(X[~test], y[~test])
        p = fits.predict_ols(fit, X[test], alpha=0.1)
        assert loo.prediction[test] == pytest.approx(p["prediction"].to_numpy(), rel=1e-10)
        assert loo.lower[test] == pytest.approx(p["lower"].to_numpy(), rel=1e-10)
        assert loo.upper[test] == pytest.approx(p["upper"].to_numpy(), rel=1e-10)
        assert (loo.resid_df[test] == fit.resid_df).all() and loo.fitted[test].all()
    # two groups only: the other group's two rows cannot fit three columns
    two = fits.ols_loo(X.to_numpy()[:4], y[:4], groups[:4])
    assert not two.fitted.any() and np.isnan(two.prediction).all()


def test_pinv_and_rank_are_remembered_by_the_matrix_values():
    """The folds ask for the same designs again: the same values (in any memory order) give the same
    read-only result, equal to numpy's."""
    X = np.column_stack([np.ones(6), np.arange(6.0), np.arange(6.0) ** 2])
    pinv = fits._pinv_full_rank(X)
    assert fits._pinv_full_rank(np.asfortranarray(X)) is pinv and not pinv.flags.writeable
    np.testing.assert_allclose(pinv, np.linalg.pinv(X), rtol=1e-12)
    assert fits.matrix_rank(X) == 3
    collinear = np.column_stack([X, 2 * X[:, 1]])
    assert fits._pinv_full_rank(collinear) is None and fits.matrix_rank(collinear) == 3


def test_covered_is_truth_inside_the_interval_and_na_without_one():
    got = fits.covered([1.0, 5.0, 2.0, 2.0], [0.0, 0.0, np.nan, 2.0], [2.0, 4.0, 3.0, 2.0])
    assert got.tolist() == [True, False, pd.NA, True]


def test_covered_takes_an_infinite_bound_as_a_bound():
    """A log-log upper bound that overflowed is +inf: the truth above the lower bound is inside."""
    got = fits.covered([5.0, 0.5, 5.0], [1.0, 1.0, 1.0], [np.inf, np.inf, np.nan])
    assert got.tolist() == [True, False, pd.NA]


def test_weighted_simple_equals_statsmodels_wls_on_relative_errors():
    """Weights 1 / y^2 (least squares on relative errors): slope, intercept, weighted R^2 and SSE
    equal statsmodels WLS pair by pair, gaps included; the prediction interval with the new point's
    weight 1 / prediction^2 equals WLS's obs_ci, and fit_ols / predict_ols give the same."""
    rng = np.random.default_rng(5)
    X = rng.lognormal(3, 1.5, size=(6, 7))
    Y = (20 + 2 * X[rng.integers(0, 6, 5)]) * rng.lognormal(0, 0.2, size=(5, 7))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y[rng.random(Y.shape) < 0.1] = np.nan
    fit = fits.simple(Y, X, weights=fits.relative_weights(Y))
    x0 = rng.uniform(1, 100, size=(5, 6))
    pred, lo, hi, _ = fits.simple_predict(fit, x0, alpha=0.1, relative=True)
    checked = 0
    for t in range(5):
        for f in range(6):
            m = ~np.isnan(Y[t]) & ~np.isnan(X[f])
            if m.sum() < 4:
                continue
            w = 1 / Y[t, m] ** 2
            res = sm.WLS(Y[t, m], sm.add_constant(X[f, m]), weights=w).fit()
            assert fit.b[t, f] == pytest.approx(res.params[0], rel=1e-8)
            assert fit.a[t, f] == pytest.approx(res.params[1], rel=1e-8)
            assert fit.r2[t, f] == pytest.approx(res.rsquared, rel=1e-8, abs=1e-12)
            assert fit.sse[t, f] == pytest.approx(res.ssr, rel=1e-7)
            assert fit.sw[t, f] == pytest.approx(w.sum())
            ex = np.array([[1.0, x0[t, f]]])
            sf = res.get_prediction(ex, weights=1 / (ex @ res.params) ** 2).summary_frame(alpha=0.1)
            assert pred[t, f] == pytest.approx(sf["mean"].iloc[0], rel=1e-9)
            assert lo[t, f] == pytest.approx(sf["obs_ci_lower"].iloc[0], rel=1e-7)
            assert hi[t, f] == pytest.approx(sf["obs_ci_upper"].iloc[0], rel=1e-7)
            ols = fits.fit_ols(pd.DataFrame({"const": 1.0, "x": X[f, m]}), Y[t, m], relative=True)
            p = fits.predict_ols(ols, pd.DataFrame({"x": [x0[t, f]]}), alpha=0.1).iloc[0]
            assert [p["prediction"], p["lower"], p["upper"]] == pytest.approx([pred[t, f], lo[t, f], hi[t, f]])
            checked += 1
    assert checked > 15
    # unweighted fits are the same as before: sw is the count
    plain = fits.simple(Y, X)
    assert np.array_equal(plain.sw, plain.n.astype(float))


def test_relative_weights_are_inverse_squares_and_nan_where_not_positive():
    assert fits.relative_weights([2.0, 0.5, 0.0, -1.0]).tolist()[:2] == [0.25, 4.0]
    assert np.isnan(fits.relative_weights([0.0, -1.0])).all()


def test_least_squares_solves_a_design_and_says_when_it_cannot():
    """The coefficients of an exact line and of a noisy three-column design equal numpy's and
    statsmodels' OLS; too few rows or a rank-deficient design determine none (None)."""
    X = np.column_stack([np.ones(4), [1.0, 2.0, 4.0, 8.0]])
    assert np.allclose(fits.least_squares(X, 3 + 2 * X[:, 1]), [3.0, 2.0])
    rng = np.random.default_rng(7)
    X3 = np.column_stack([np.ones(9), rng.uniform(1, 9, 9), rng.uniform(1, 9, 9)])
    y = X3 @ [5.0, -1.0, 0.5] + rng.normal(0, 0.1, 9)
    assert np.allclose(fits.least_squares(X3, y), sm.OLS(y, X3).fit().params)
    assert fits.least_squares(X3[:2], y[:2]) is None
    assert fits.least_squares(np.column_stack([np.ones(4), np.ones(4)]), [1.0, 2.0, 3.0, 4.0]) is None


def test_anchored_lines_by_hand():
    """Through the point of smallest x, the median of the slopes to the others; the log residuals'
    spread gives an interval symmetric on the log scale."""
    Y = np.array([[28.0, 128.0, 348.0, 578.0, 1056.0]])
    X = np.array([[0.2, 56.0, 179.0, 347.0, 546.0], [5.0, 4.0, np.nan, 2.0, 1.0]])
    f = fits.anchored(Y, X)
    slopes = [(y - 28.0) / (x - 0.2) for x, y in zip([56.0, 179.0, 347.0, 546.0], [128.0, 348.0, 578.0, 1056.0])]
    assert f.a[0, 0] == pytest.approx(np.median(slopes)) and f.b[0, 0] == pytest.approx(28.0 - f.a[0, 0] * 0.2)
    r = np.log(np.array([128.0, 348.0, 578.0, 1056.0]) / (f.a[0, 0] * np.array([56.0, 179.0, 347.0, 546.0]) + f.b[0, 0]))
    assert f.s[0, 0] == pytest.approx(np.sqrt((r**2).sum() / 3)) and f.df[0, 0] == 3
    # the second figure: anchored at x = 1 (the smallest), NaN skipped
    assert f.n[0, 1] == 4 and f.b[0, 1] + f.a[0, 1] * 1.0 == pytest.approx(1056.0)
    p, lo, hi, df = fits.anchored_predict(f, np.array([[100.0, 3.0]]), 0.05)
    half = stats.t.ppf(0.975, 3) * f.s[0, 0] * np.sqrt(1 + 1 / 5)
    assert lo[0, 0] == pytest.approx(p[0, 0] * np.exp(-half)) and hi[0, 0] == pytest.approx(p[0, 0] * np.exp(half))
    # a line that is at or below 0 at a point has no log residual there: no interval, never a bound <= 0
    g = fits.anchored(np.array([[10.0, 5.0, 1.0]]), np.array([[1.0, 2.0, 3.0]]))
    p, lo, hi, _ = fits.anchored_predict(g, np.array([[10.0]]), 0.05)
    assert p[0, 0] < 0 and np.isnan(lo[0, 0]) and np.isnan(hi[0, 0])
