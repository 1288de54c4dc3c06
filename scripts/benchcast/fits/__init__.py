"""The fitting core: one simple least-squares fit (vectorised) and one OLS for multiple models.

Convention, everywhere in benchcast: a simple model is the paper's ``Y = a X + b`` (section 2.3),
``a`` the slope and ``b`` the intercept. Tables that spell it out call them ``slope`` and
``intercept``.

* :func:`simple` fits every row of Y on every row of X at once, in closed form over arrays: the
  screening (all series x all features), the held-out validation (one fold = the same fit with the
  held-out device masked) and the regression over data size all use it. :func:`simple_predict`
  predicts from it with the textbook prediction interval (identical to statsmodels' obs_ci).
* :func:`fit_ols` / :func:`predict_ols` fit a multiple model (statsmodels OLS on a design matrix
  from :func:`design_matrix`) and predict with statsmodels' observation intervals. A fit with zero
  residual degrees of freedom predicts, but its interval is undefined: NaN with ``interval_flag``
  saying why, never raised. :func:`ols_loo` is the same fit and interval in plain arrays for
  leave-one-group-out validation, where thousands of small fits would spend their time in
  statsmodels' bookkeeping (tested equal to statsmodels). :func:`least_squares` solves one
  design matrix without intervals: the second stage over data size (:mod:`benchcast.screening.sizes`).
* :func:`check_device_figures` is the rule how many device figures a model may use;
  :func:`extrapolation_flags` flags predictions outside the measured range.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from .. import BenchcastError

# Interval flags (strings so that a report can print them as they are).
FLAG_ZERO_DF = "zero residual df: interval undefined"
FLAG_NO_DEVICE_DF = "no residual df across devices: interval ignores device-to-device error"


# --------------------------------------------------------------------------------------------
# Simple least squares, vectorised
# --------------------------------------------------------------------------------------------


class SimpleFits(NamedTuple):
    """Fits of Y (T x D) on X (F x D), every array T x F.

    ``a`` slope, ``b`` intercept (NaN where fewer than ``min_n`` points or X has no spread),
    ``r2`` (also NaN where Y has no spread), ``n`` points used, ``xbar`` mean of X over them,
    ``sxx`` centred sum of squares of X, ``sse`` residual sum of squares, ``sw`` the sum of the
    points' weights (``n`` when unweighted); with weights, means and sums are weighted.
    """

    a: np.ndarray
    b: np.ndarray
    r2: np.ndarray
    n: np.ndarray
    xbar: np.ndarray
    sxx: np.ndarray
    sse: np.ndarray
    sw: np.ndarray


def simple(Y, X, min_n: int = 3, weights=None) -> SimpleFits:
    """Least-squares fits ``Y = a X + b`` of every row of Y (T x D) on every row of X (F x D).

    NaN marks a missing value: each pair uses the D positions where both are present. R^2 = SSR/SST,
    which for least squares with an intercept equals Sxy^2 / (Sxx Syy).

    ``weights`` (T x D, positive where Y is present): weighted least squares, each point's squared
    residual times its weight (e.g. 1 / y^2: squared relative errors, :func:`relative_weights`);
    sums, means and R^2 are then weighted ones.
    """
    Y = np.asarray(Y, dtype=float)
    X = np.asarray(X, dtype=float)
    # shift each row by its mean first: slopes and R^2 do not change, and the raw sums below stay
    # small, so the one-pass centring loses no precision on figures like bandwidth in bytes/s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cy = np.nan_to_num(np.nanmean(Y, axis=1)) if Y.size else np.zeros(len(Y))
        cx = np.nan_to_num(np.nanmean(X, axis=1)) if X.size else np.zeros(len(X))
    Y = Y - cy[:, None]
    X = X - cx[:, None]
    my = ~np.isnan(Y)
    mx = ~np.isnan(X)
    y0 = np.where(my, Y, 0.0)
    x0 = np.where(mx, X, 0.0)
    myf = my.astype(float)
    mxf = mx.astype(float)
    wy = myf if weights is None else np.where(my, np.asarray(weights, dtype=float), 0.0)  # T x D
    # counts and (weighted) sums over devices present in both: matrix products over the device axis
    n = myf @ mxf.T  # T x F
    sw = wy @ mxf.T
    sx = wy @ x0.T
    sy = (wy * y0) @ mxf.T
    with np.errstate(divide="ignore", invalid="ignore"):
        xbar = sx / sw
        ybar = sy / sw
        sxy_raw = (wy * y0) @ x0.T
        sxx_raw = wy @ (x0**2).T
        syy_raw = (wy * y0**2) @ mxf.T
        # centred sums; for large raw magnitudes recompute exactly below where precision is at risk
        sxx = sxx_raw - sw * xbar**2
        syy = syy_raw - sw * ybar**2
        sxy = sxy_raw - sw * xbar * ybar
    risky = (sxx <= 1e-9 * sxx_raw) | (syy <= 1e-9 * syy_raw)
    if risky.any():
        # exact two-pass centring for the few pairs where cancellation could bite
        for t, f in zip(*np.nonzero(risky & (n >= 2))):
            m = my[t] & mx[f]
            w = wy[t, m]
            dx = X[f, m] - np.average(X[f, m], weights=w)
            dy = Y[t, m] - np.average(Y[t, m], weights=w)
            sxx[t, f], syy[t, f], sxy[t, f] = (w * dx) @ dx, (w * dy) @ dy, (w * dx) @ dy
    with np.errstate(divide="ignore", invalid="ignore"):
        a = sxy / sxx
        b = (ybar + cy[:, None]) - a * (xbar + cx[None, :])
        r2 = sxy**2 / (sxx * syy)
        sse = np.maximum(syy - sxy * a, 0.0)
    no_x = (n < min_n) | (sxx <= 1e-12 * np.maximum(sxx_raw, 1e-300))
    no_y = syy <= 1e-12 * np.maximum(syy_raw, 1e-300)
    a[no_x] = np.nan
    b[no_x] = np.nan
    sse[no_x] = np.nan
    sse[no_y & ~no_x] = 0.0
    r2[no_x | no_y] = np.nan
    r2 = np.clip(r2, 0.0, 1.0)
    return SimpleFits(a, b, r2, n.astype(int), xbar + cx[None, :], sxx, sse, sw)


def relative_weights(y) -> np.ndarray:
    """Weights 1 / y^2: least squares on relative errors ((y - fit) / y), the scale a percent
    error judges; NaN where y is not positive."""
    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y > 0, 1.0 / y**2, np.nan)


def simple_predict(fit: SimpleFits, x0, alpha: float = 0.05, relative: bool = False):
    """Predict ``a x0 + b`` with the (1 - alpha) prediction interval of simple regression.

    ``x0`` broadcasts against the fit's arrays. Returns (prediction, lower, upper, resid_df); the
    bounds are NaN where the fit has no residual df (two points). ``relative``: the fit was
    weighted by :func:`relative_weights`, and the new point's error variance scales with its
    prediction squared (its weight 1 / prediction^2).
    """
    x0 = np.asarray(x0, dtype=float)
    df = fit.n - 2
    with np.errstate(invalid="ignore", divide="ignore"):
        pred = fit.a * x0 + fit.b
        s2 = np.where(df > 0, fit.sse / np.where(df > 0, df, 1), np.nan)
        own = pred**2 if relative else 1.0  # 1 / the new point's weight
        se = np.sqrt(s2 * (own + 1 / fit.sw + (x0 - fit.xbar) ** 2 / fit.sxx))
        t = _t_quantiles(1 - alpha / 2, np.where(df > 0, df, 1))
        lo = np.where(df > 0, pred - t * se, np.nan)
        hi = np.where(df > 0, pred + t * se, np.nan)
    return pred, lo, hi, np.maximum(df, 0)


# --------------------------------------------------------------------------------------------
# Lines through the fastest device (the program's own time measured there), vectorised
# --------------------------------------------------------------------------------------------


class AnchoredFits(NamedTuple):
    """Lines ``Y = a X + b`` through each pair's point of smallest X (the anchor), every array T x F:
    ``a`` the median of the slopes from the anchor to the other points, ``b`` so that the line
    passes through the anchor, ``n`` points used, ``s`` the standard deviation of the other points'
    log residuals (log(y / line); NaN below three points or where the line is not positive at a
    point), ``df`` its degrees of freedom (n - 2)."""

    a: np.ndarray
    b: np.ndarray
    n: np.ndarray
    s: np.ndarray
    df: np.ndarray


def anchored(Y, X) -> AnchoredFits:
    """Lines of every row of Y (T x D) on every row of X (F x D) through the point of smallest X,
    with the median slope to the other points (:class:`AnchoredFits`; NaN where a pair has no two
    points with different X). The anchor is the device where the figure is smallest: what the
    application costs there is its own time, and each other device adds its figure's difference
    times one slope; the median keeps one device's quirk (a rate cap, a compressing RAM disk) out
    of the slope that predicts the others."""
    Y = np.asarray(Y, dtype=float)[:, None, :]
    X = np.asarray(X, dtype=float)[None, :, :]
    shape = np.broadcast_shapes(Y.shape, X.shape)
    Yb, Xb = np.broadcast_to(Y, shape), np.broadcast_to(X, shape)
    ok = np.isfinite(Yb) & np.isfinite(Xb)
    ia = np.argmin(np.where(ok, Xb, np.inf), axis=2)[..., None]
    xa = np.take_along_axis(Xb, ia, axis=2)
    ya = np.take_along_axis(Yb, ia, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = Xb - xa
        slopes = np.where(ok & (dx > 0), (Yb - ya) / dx, np.nan)
        n_slopes = np.isfinite(slopes).sum(axis=2)
        a = np.where(n_slopes > 0, np.nanmedian(np.where(n_slopes[..., None] > 0, slopes, 0.0), axis=2), np.nan)
        b = ya[..., 0] - a * xa[..., 0]
        line = a[..., None] * Xb + b[..., None]
        r = np.where(ok & (dx > 0), np.log(Yb / line), np.nan)
        n = ok.sum(axis=2)
        df = n - 2
        # NaN where the line is at or below 0 at a point: no log residual there
        whole = np.isfinite(r).sum(axis=2) == n_slopes
        s = np.where((df > 0) & whole, np.sqrt(np.nansum(r**2, axis=2) / np.where(df > 0, df, 1)), np.nan)
    return AnchoredFits(a, b, n, s, df)


def anchored_predict(fit: AnchoredFits, x0, alpha: float = 0.05):
    """Predict ``a x0 + b`` with a (1 - alpha) interval symmetric on the log scale: the prediction
    times exp(+-t s sqrt(1 + 1/n)), ``s`` the log residuals' spread (:class:`AnchoredFits`); always
    above 0 where the prediction is. Returns (prediction, lower, upper, resid_df) as
    :func:`simple_predict`; the bounds NaN without residual df."""
    x0 = np.asarray(x0, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        pred = fit.a * x0 + fit.b
        df = fit.df
        t = _t_quantiles(1 - alpha / 2, np.where(df > 0, df, 1))
        half = t * fit.s * np.sqrt(1 + 1 / np.maximum(fit.n, 1))
        good = (df > 0) & (pred > 0) & np.isfinite(half)
        lo = np.where(good, pred * np.exp(-half), np.nan)
        hi = np.where(good, pred * np.exp(half), np.nan)
    return pred, lo, hi, np.maximum(df, 0)


# --------------------------------------------------------------------------------------------
# Multiple regression (statsmodels OLS)
# --------------------------------------------------------------------------------------------


def log_positive(v) -> np.ndarray:
    """Natural log where positive, NaN elsewhere (a power law has no point at or below zero)."""
    v = np.asarray(v, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(np.where(v > 0, v, np.nan))


def design_matrix(df: pd.DataFrame, columns, intercept: bool = True) -> pd.DataFrame:
    """Design matrix: ``const`` (if intercept) then ``columns`` of ``df`` as float, same index."""
    cols = list(columns)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BenchcastError(f"design matrix: missing column(s) {', '.join(missing)}")
    X = df[cols].astype(float).copy()
    if intercept:
        X.insert(0, "const", 1.0)
    return X


@dataclass
class OLSFit:
    """A fitted OLS model: the statsmodels results plus what prediction needs."""

    result: object  # statsmodels RegressionResults
    columns: list[str]  # design columns, 'const' first when there is an intercept
    n: int
    resid_df: float
    rsquared: float
    rsquared_adj: float
    params: pd.Series = field(repr=False)
    relative: bool = False  # fitted on relative errors (weights 1 / y^2, :func:`relative_weights`)


def fit_ols(X: pd.DataFrame, y, relative: bool = False) -> OLSFit:
    """Fit OLS of ``y`` on design matrix ``X`` (build it with :func:`design_matrix`); ``relative``:
    weighted least squares on relative errors (statsmodels WLS, weights :func:`relative_weights`).

    Raises :class:`BenchcastError` if ``X`` is rank-deficient or has fewer rows than columns.
    """
    from statsmodels.regression.linear_model import OLS, WLS  # here: 0.6 s most jobs never need

    X = pd.DataFrame(X).astype(float)
    y = np.asarray(y, dtype=float)
    if len(y) != len(X):
        raise BenchcastError(f"fit_ols: {len(X)} design rows but {len(y)} results")
    if len(X) < X.shape[1] or np.linalg.matrix_rank(X.to_numpy()) < X.shape[1]:
        raise BenchcastError(f"fit_ols: design of {len(X)} rows x {X.shape[1]} columns is rank-deficient")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-df fits warn about division by zero
        res = (WLS(y, X.to_numpy(), weights=relative_weights(y)) if relative else OLS(y, X.to_numpy())).fit()
        r2 = float(res.rsquared) if res.df_resid >= 0 else np.nan
        r2a = float(res.rsquared_adj) if res.df_resid > 0 else np.nan
    return OLSFit(res, list(X.columns), len(y), float(res.df_resid), r2, r2a,
                  pd.Series(res.params, index=list(X.columns)), relative)


def predict_ols(fit: OLSFit, X_new: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Predict new rows with a (1 - alpha) prediction interval.

    ``X_new`` needs the fit's design columns (``const`` is added if missing). Returns a DataFrame
    with the index of ``X_new`` and columns prediction, lower, upper, resid_df, interval_flag
    (empty, or :data:`FLAG_ZERO_DF` with NaN bounds when the fit has no residual df). A fit on
    relative errors gives each new row the weight 1 / its prediction^2 (its error scales with it).
    """
    X_new = pd.DataFrame(X_new).copy()
    if "const" in fit.columns and "const" not in X_new:
        X_new["const"] = 1.0
    X = X_new[fit.columns].astype(float).to_numpy()
    if fit.resid_df > 0:
        with np.errstate(divide="ignore"):  # the new point's weight, as in simple_predict
            w = 1 / (X @ fit.params.to_numpy()) ** 2 if fit.relative else None
        sf = fit.result.get_prediction(X, weights=w).summary_frame(alpha=alpha)
        pred, lo, hi, flag = sf["mean"].to_numpy(), sf["obs_ci_lower"].to_numpy(), sf["obs_ci_upper"].to_numpy(), ""
    else:
        pred = X @ fit.params.to_numpy()
        lo = hi = np.full(len(X), np.nan)
        flag = FLAG_ZERO_DF
    return pd.DataFrame(
        {"prediction": pred, "lower": lo, "upper": hi, "resid_df": fit.resid_df, "interval_flag": flag},
        index=X_new.index,
    )


def covered(truth, lower, upper) -> pd.arrays.BooleanArray:
    """Whether each truth lies inside its interval [lower, upper]; <NA> where a bound is missing
    (NaN: no interval). An infinite bound is a bound (a log-log upper bound that overflowed)."""
    t, lo, hi = (np.asarray(v, dtype=float) for v in (truth, lower, upper))
    ok = ~np.isnan(lo) & ~np.isnan(hi)
    return pd.array(np.where(ok, (lo <= t) & (t <= hi), None), dtype="boolean")


class LooPredictions(NamedTuple):
    """Leave-one-group-out predictions of every row, arrays of the rows' length: ``prediction``,
    ``lower``, ``upper`` (NaN where the fit has no residual df), ``resid_df`` of the fit that
    predicted the row, and ``fitted`` (False where the other groups' design was rank-deficient:
    no prediction)."""

    prediction: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    resid_df: np.ndarray
    fitted: np.ndarray


@functools.lru_cache(maxsize=None)
def _t_quantile(p: float, df: int) -> float:
    """Student's t quantile (``scipy.stats.t.ppf``'s function), remembered: folds repeat a few."""
    return float(special.stdtrit(df, p))


def _t_quantiles(p: float, df) -> np.ndarray:
    """:func:`_t_quantile` of an array of integer ``df``, shaped as ``df``."""
    u, inverse = np.unique(df, return_inverse=True)
    return np.array([_t_quantile(p, int(v)) for v in u])[inverse].reshape(np.shape(df))


def _by_values(f):
    """``f`` of one float matrix, remembered by the matrix's values (its results read-only): the
    pools of one workload's ops and metrics share their designs, and the nested choice fits each
    pair of held-out devices twice, so the validation asks for the same few thousand matrices
    tens of thousands of times."""
    @functools.lru_cache(maxsize=2**14)
    def of_values(shape: tuple[int, ...], values: bytes):
        out = f(np.frombuffer(values, dtype=float).reshape(shape))
        if isinstance(out, np.ndarray):
            out.flags.writeable = False
        return out

    @functools.wraps(f)
    def remembered(X):
        X = np.asarray(X, dtype=float)
        return of_values(X.shape, X.tobytes())

    return remembered


def least_squares(X, y) -> np.ndarray | None:
    """The least-squares coefficients of ``y`` on the design matrix ``X`` (rows x columns, an
    intercept column included by the caller; ``np.linalg.lstsq``); None where they are not
    determined: fewer rows than columns, or a rank-deficient design."""
    X = np.asarray(X, dtype=float)
    if len(X) < X.shape[1] or np.linalg.matrix_rank(X) < X.shape[1]:
        return None
    return np.linalg.lstsq(X, np.asarray(y, dtype=float), rcond=None)[0]


@_by_values
def matrix_rank(X) -> int:
    """``np.linalg.matrix_rank(X)``, remembered (:func:`_by_values`)."""
    return int(np.linalg.matrix_rank(X))


@_by_values
def _pinv_full_rank(X: np.ndarray) -> np.ndarray | None:
    """``np.linalg.pinv(X)`` when ``np.linalg.matrix_rank(X)`` is its column count, else None: the
    two from one SVD (each computes its own; the validation fits tens of thousands of folds), with
    numpy's tolerances (rank: max(M, N) * eps of the largest singular value; pinv: 1e-15)."""
    u, s, vt = np.linalg.svd(X, full_matrices=False)
    top = s.max(initial=0)
    if np.count_nonzero(s > top * max(X.shape) * np.finfo(s.dtype).eps) < X.shape[1]:
        return None
    large = s > 1e-15 * top
    inv = np.zeros_like(s)
    inv[large] = 1 / s[large]
    return vt.T @ (inv[:, np.newaxis] * u.T)


def ols_loo(X, y, groups, alpha: float | None = 0.05) -> LooPredictions:
    """Predict each row of design ``X`` (rows x columns, ``const`` included) from the OLS fit on
    the rows of the *other* groups, with the (1 - alpha) prediction interval of that fit: the
    arithmetic of :func:`fit_ols` + :func:`predict_ols` (Moore-Penrose solution, observation
    interval ``t * sqrt(s^2 (1 + x' (X'X)^-1 x))``) without a statsmodels object per fold.
    ``alpha`` None: predictions only (bounds NaN)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    groups = np.asarray(groups)
    n, p = X.shape
    out = LooPredictions(*(np.full(n, np.nan) for _ in range(4)), np.zeros(n, dtype=bool))
    for g in pd.unique(groups):
        test = groups == g
        Xt, yt = X[~test], y[~test]
        if len(yt) < p:
            continue
        pinv = _pinv_full_rank(Xt)
        if pinv is None:
            continue
        beta = pinv @ yt
        X0 = X[test]
        out.prediction[test] = X0 @ beta
        df = len(yt) - p
        out.resid_df[test] = df
        out.fitted[test] = True
        if df > 0 and alpha is not None:
            resid = yt - Xt @ beta
            s2 = resid @ resid / df
            se = np.sqrt(s2 * (1 + np.einsum("ij,jk,ik->i", X0, pinv @ pinv.T, X0)))
            q = _t_quantile(1 - alpha / 2, df)
            out.lower[test] = out.prediction[test] - q * se
            out.upper[test] = out.prediction[test] + q * se
    return out


# --------------------------------------------------------------------------------------------
# How many device figures, and extrapolation guards
# --------------------------------------------------------------------------------------------


def max_device_figures(n_devices: int) -> int:
    """The most device figures a model fitted over ``n_devices`` devices may use.

    Rule: device-figure count k <= n_devices - 2. Device figures vary only between devices, so
    however many data sizes or workloads are pooled, their coefficients (and the intercept) are
    identified by the n_devices device points alone; k figures plus the intercept on n_devices
    points leaves n_devices - k - 1 residual df across devices, and the rule keeps that >= 1 (the
    devices outnumber the figures by at least two). Workload variables (data size, read fraction,
    threads) vary within a device and do not count against it.
    """
    return max(int(n_devices) - 2, 0)


def check_device_figures(k: int, n_devices: int) -> str | None:
    """None if ``k`` device figures are allowed over ``n_devices`` devices, else the refusal reason."""
    if k <= max_device_figures(n_devices):
        return None
    return (f"{k} device figure(s) need at least {k + 2} devices (rule: figures <= devices - 2); "
            f"the pool has {n_devices}")


def feature_ranges(F: pd.DataFrame) -> pd.DataFrame:
    """Measured range of each feature over the training devices: index feature, columns min, max."""
    return pd.DataFrame({"min": F.min(axis=0), "max": F.max(axis=0)}).rename_axis("feature")


def extrapolation_flags(x_new: pd.DataFrame, ranges: pd.DataFrame, data_size=None, max_data_size=None,
                        factor: float = 2.0) -> pd.DataFrame:
    """Flag predictions that extrapolate.

    ``x_new``: one row per prediction, a column per feature id the model uses (NaN/absent columns
    are ignored). ``ranges``: :func:`feature_ranges` of the training devices. A feature value
    outside [min, max] is flagged. ``data_size`` (bytes, scalar or per row) beyond ``factor`` x
    ``max_data_size`` (the largest measured data size, scalar or per row) is flagged too.

    Returns a DataFrame with the index of ``x_new`` and columns feature_out_of_range (bool),
    out_of_range_features (';'-joined 'feature=value not in [min, max]'), data_size_extrapolated
    (bool) and extrapolation (bool: either).
    """
    x_new = pd.DataFrame(x_new)
    out_any = np.zeros(len(x_new), dtype=bool)
    notes = [[] for _ in range(len(x_new))]
    for col in x_new.columns:
        if col not in ranges.index:
            continue
        v = x_new[col].to_numpy(dtype=float)
        lo, hi = float(ranges.at[col, "min"]), float(ranges.at[col, "max"])
        bad = np.isfinite(v) & ((v < lo) | (v > hi))
        out_any |= bad
        for i in np.flatnonzero(bad):
            notes[i].append(f"{col}={v[i]:g} not in [{lo:g}, {hi:g}]")
    if data_size is not None and max_data_size is not None:
        ds = np.broadcast_to(np.asarray(data_size, dtype=float), (len(x_new),))
        mx = np.broadcast_to(np.asarray(max_data_size, dtype=float), (len(x_new),))
        ds_bad = np.isfinite(ds) & np.isfinite(mx) & (ds > factor * mx)
    else:
        ds_bad = np.zeros(len(x_new), dtype=bool)
    return pd.DataFrame(
        {"feature_out_of_range": out_any, "out_of_range_features": ["; ".join(n) for n in notes],
         "data_size_extrapolated": ds_bad, "extrapolation": out_any | ds_bad},
        index=x_new.index,
    )
