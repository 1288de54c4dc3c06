"""Screening: fit Y = aX + b across devices for every (result series, candidate feature) pair.

The fits are :func:`benchcast.fits.simple` (closed form over arrays, all pairs of a pairing rule at
once, not one model object per pair: a grid of 10,000 series x 20 features is a handful of array
operations); ``a`` is the slope and ``b`` the intercept, as in the paper's section 2.3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import BenchcastError, fits, records
from ..features import feature_table, match_rule, series_table

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


def screen(agg: pd.DataFrame, features: dict, series: dict | None, pairing, min_devices: int):
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
            fit = fits.simple(Yt.to_numpy()[r], Xg, min_n=min_devices)
            r2, n = fit.r2, fit.n
            # a pair is usable only where R^2 is defined (Y varies over the devices too)
            a = np.where(np.isnan(r2), np.nan, fit.a)
            b = np.where(np.isnan(r2), np.nan, fit.b)
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
