"""Screening: fit Y = aX + b across devices for every (result series, candidate feature) pair.

The fits are computed in closed form over arrays (least squares per the paper's section 2.3, with
centred sums for numerical stability), all pairs at once, not one model object per pair: a grid of
10,000 series x 20 features is a handful of array operations.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from . import BenchcastError, records

SCREEN_COLUMNS = records.SERIES_COLUMNS + [
    "feature",
    "feature_workload",
    "feature_block_size",
    "feature_op",
    "feature_metric",
    "feature_unit",
    "a",
    "b",
    "r2",
    "n",
    "x_min",
    "x_max",
    "rank",
]

#: fio rw values whose op follows from the name; features of other (mixed) workloads name their op.
PURE_RW = {"randread": "read", "read": "read", "randwrite": "write", "write": "write"}


def feature_name(workload: str, block_size: int, op: str, metric: str) -> str:
    """'randwrite_64K_lat_mean'; a mixed workload names its op: 'randrw_4K_read_lat_mean'."""
    if workload in PURE_RW:
        return records.feature_id(workload, block_size, metric)
    return records.feature_id(workload, block_size, f"{op}_{metric}")


def fit_all(Y: np.ndarray, X: np.ndarray, min_n: int = 3):
    """Least-squares fits of every row of Y (T x D) on every row of X (F x D), NaN = missing.

    Returns ``a, b, r2, n`` as T x F arrays: slope, intercept, coefficient of determination and the
    number of devices where both are present. Pairs with fewer than ``min_n`` devices, no spread in X,
    or no spread in Y get NaN. R^2 = SSR/SST, which for least squares with an intercept equals
    Sxy^2 / (Sxx Syy).
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
    # counts and sums over devices present in both: matrix products over the device axis
    n = myf @ mxf.T  # T x F
    sx = myf @ x0.T
    sy = y0 @ mxf.T
    with np.errstate(divide="ignore", invalid="ignore"):
        xbar = sx / n
        ybar = sy / n
        sxy_raw = y0 @ x0.T
        sxx_raw = myf @ (x0**2).T
        syy_raw = (y0**2) @ mxf.T
        # centred sums; for large raw magnitudes recompute exactly below where precision is at risk
        sxx = sxx_raw - n * xbar**2
        syy = syy_raw - n * ybar**2
        sxy = sxy_raw - n * xbar * ybar
    risky = (sxx <= 1e-9 * sxx_raw) | (syy <= 1e-9 * syy_raw)
    if risky.any():
        # exact two-pass centring for the few pairs where cancellation could bite
        for t, f in zip(*np.nonzero(risky & (n >= 2))):
            m = my[t] & mx[f]
            dx = X[f, m] - X[f, m].mean()
            dy = Y[t, m] - Y[t, m].mean()
            sxx[t, f], syy[t, f], sxy[t, f] = dx @ dx, dy @ dy, dx @ dy
    with np.errstate(divide="ignore", invalid="ignore"):
        a = sxy / sxx
        b = (ybar + cy[:, None]) - a * (xbar + cx[None, :])
        r2 = sxy**2 / (sxx * syy)
    scale_x = np.maximum(sxx_raw, 1e-300)
    scale_y = np.maximum(syy_raw, 1e-300)
    bad = (n < min_n) | (sxx <= 1e-12 * scale_x) | (syy <= 1e-12 * scale_y)
    a[bad] = np.nan
    b[bad] = np.nan
    r2[bad] = np.nan
    r2 = np.clip(r2, 0.0, 1.0)
    return a, b, r2, n.astype(int)


def _select(df: pd.DataFrame, col: str, values) -> pd.DataFrame:
    return df if values is None else df[df[col].isin(list(values))]


def feature_table(agg: pd.DataFrame, features: dict) -> pd.DataFrame:
    """The candidate device figures: one row per (feature, device) with columns feature, device,
    value and the feature's workload/block_size/op/metric/unit."""
    bench = features.get("benchmark", "fio")
    block_sizes = [records.parse_size(s, what="features.block_sizes") for s in features["block_sizes"]]
    df = agg[agg["benchmark"] == bench]
    df = _select(df, "workload", features["workloads"])
    df = _select(df, "block_size", block_sizes)
    df = _select(df, "metric", features["metrics"]).copy()
    df["feature"] = [
        feature_name(w, bs, op, m) for w, bs, op, m in zip(df["workload"], df["block_size"], df["op"], df["metric"])
    ]
    dup = df.duplicated(["feature", "device"], keep=False)
    if dup.any():
        row = df[dup].iloc[0]
        raise BenchcastError(
            f"features: device {row['device']!r} has several values for feature {row['feature']!r} "
            f"(different engines, threads or sources); restrict the study's features or sources"
        )
    return df[["feature", "device", "value", "workload", "block_size", "op", "metric", "unit"]].reset_index(drop=True)


def series_table(agg: pd.DataFrame, features: dict, series: dict | None) -> pd.DataFrame:
    """The application results to screen (rows of aggregated records)."""
    series = series or {}
    fbench = features.get("benchmark", "fio")
    df = agg[agg["benchmark"] != fbench]
    df = _select(df, "benchmark", series.get("benchmarks"))
    df = _select(df, "metric", series.get("metrics", ["lat_mean"]))
    dup = df.duplicated(records.SERIES_COLUMNS + ["device"], keep=False)
    if dup.any():
        row = df[dup].iloc[0]
        raise BenchcastError(
            f"series: device {row['device']!r} has results from several sources for "
            f"{row['benchmark']}/{row['engine']}/{row['workload']}/{row['op']}/{row['metric']}"
        )
    return df.reset_index(drop=True)


def match_rule(row: dict, pairing) -> int:
    """Index of the first pairing rule whose ``when`` matches the series, -1 if none."""
    for i, rule in enumerate(pairing or []):
        if all(str(row.get(k)) == str(v) for k, v in rule["when"].items()):
            return i
    return -1


def screen(agg: pd.DataFrame, features: dict, series: dict | None = None, pairing=None, min_devices: int = 3):
    """Fit every series on every candidate feature its pairing rule allows.

    Returns the long screen table (``SCREEN_COLUMNS``), ranked by R^2 within each series (rank 1 best;
    pairs that could not be fitted have NaN R^2 and no rank).
    """
    feats = feature_table(agg, features)
    ser = series_table(agg, features, series)
    if feats.empty:
        raise BenchcastError("features: no record matches the study's candidate features")
    if ser.empty:
        raise BenchcastError("series: no application result matches the study's series selection")
    devices = sorted(set(feats["device"]) | set(ser["device"]))
    X = feats.pivot(index="feature", columns="device", values="value").reindex(columns=devices)
    finfo = feats.drop_duplicates("feature").set_index("feature").loc[X.index]
    skeys = records.SERIES_COLUMNS
    Yt = ser.pivot_table(index=skeys, columns="device", values="value", aggfunc="first", sort=True)
    Yt = Yt.reindex(columns=devices)
    sidx = Yt.index.to_frame(index=False)
    rule_of = np.array([match_rule(r, pairing) for r in sidx.to_dict("records")])

    out = []
    Xv = X.to_numpy()
    for rule in np.unique(rule_of):
        rows = np.flatnonzero(rule_of == rule)
        if rule >= 0:
            allowed = np.flatnonzero(finfo["workload"].isin(pairing[rule]["workloads"]).to_numpy())
        else:
            allowed = np.arange(len(X))
        if len(allowed) == 0:
            continue
        Xg = Xv[allowed]
        # chunk the series so that T x F x D temporaries stay small
        step = max(1, int(2_000_000 // max(1, len(allowed) * len(devices))))
        for start in range(0, len(rows), step):
            r = rows[start : start + step]
            a, b, r2, n = fit_all(Yt.to_numpy()[r], Xg, min_n=min_devices)
            T, F = a.shape
            block = sidx.iloc[np.repeat(r, F)].reset_index(drop=True)
            fi = finfo.iloc[np.tile(allowed, T)]
            block["feature"] = fi.index.to_numpy()
            block["feature_workload"] = fi["workload"].to_numpy()
            block["feature_block_size"] = fi["block_size"].to_numpy()
            block["feature_op"] = fi["op"].to_numpy()
            block["feature_metric"] = fi["metric"].to_numpy()
            block["feature_unit"] = fi["unit"].to_numpy()
            block["a"] = a.ravel()
            block["b"] = b.ravel()
            block["r2"] = r2.ravel()
            block["n"] = n.ravel()
            masked = np.where(np.isnan(Yt.to_numpy()[r])[:, None, :], np.nan, Xg[None, :, :])
            with np.errstate(all="ignore"):
                block["x_min"] = np.nanmin(np.where(np.isnan(masked), np.inf, masked), axis=2).ravel()
                block["x_max"] = np.nanmax(np.where(np.isnan(masked), -np.inf, masked), axis=2).ravel()
            out.append(block)
    res = pd.concat(out, ignore_index=True)
    res.loc[~np.isfinite(res["x_min"]), ["x_min", "x_max"]] = np.nan
    res["rank"] = res.groupby(skeys, sort=False)["r2"].rank(ascending=False, method="first")
    res = res.sort_values(skeys + ["rank"], kind="mergesort", na_position="last").reset_index(drop=True)
    return res[SCREEN_COLUMNS]


def best(screened: pd.DataFrame) -> pd.DataFrame:
    """The feature with the largest R^2 per series (the paper's choice); series with no usable fit
    are kept with an empty feature and NaN R^2, so the report can say so."""
    keys = records.SERIES_COLUMNS
    ok = screened[screened["rank"] == 1]
    allser = screened[keys].drop_duplicates()
    out = allser.merge(ok, on=keys, how="left")
    out["feature"] = out["feature"].fillna("")
    return out.reset_index(drop=True)
