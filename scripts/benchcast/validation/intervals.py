"""Prediction intervals that say how far a prediction beyond the measured devices misses.

A model's own interval assumes the held-out device is like the devices it was fitted on; where the
prediction lies beyond their results (extrapolation) the nested choice misses by more. Per series
(or family of series, :func:`families`), :func:`interval_spread` is the split-conformal quantile of
the held-out errors |log(prediction / truth)| of the chosen models on devices beyond the others;
:func:`spread_of` gives it to the rows that extrapolate (:func:`within_range`), and :func:`widen`
widens their intervals to hold that band.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..fits.positive import positive_rows
from ..records import SERIES_COLUMNS

FLAG_BAND = "no interval of the model's own: the band of held-out errors beyond the measured devices"


def inner_errors(folds: pd.DataFrame, mfolds: pd.DataFrame | None = None) -> pd.DataFrame:
    """The held-out errors of simple (``folds``) and multiple (``mfolds``) models as one table:
    series, model, features, held_out, prediction, pct_error."""
    cols = ["series", "features", "held_out", "prediction", "pct_error"]
    parts = [folds[cols].assign(model="simple")]
    if mfolds is not None and len(mfolds):
        parts.append(mfolds[cols].assign(model="multiple"))
    return pd.concat(parts, ignore_index=True)


def families(keys: pd.DataFrame, share) -> pd.Series:
    """Per series (``keys``: index series, :data:`SERIES_COLUMNS`), a label shared by the series
    whose keys differ only in the columns ``share``."""
    return keys[[c for c in SERIES_COLUMNS if c not in set(share)]].astype(str).agg("|".join, axis=1)


def within_range(Y: pd.DataFrame, series, held_out, prediction) -> np.ndarray:
    """Whether each prediction lies within the results of the series' other devices (``Y``: device
    x series; the devices other than ``held_out``, all of them where ``held_out`` is not one of
    ``Y``'s devices): what a model knows when it predicts, interpolation or not."""
    j = Y.columns.get_indexer(pd.Index(series))
    A = Y.to_numpy(dtype=float)[:, np.maximum(j, 0)]  # devices x rows
    n = np.isfinite(A).sum(axis=0)
    A[np.asarray(Y.index, dtype=object)[:, None] == np.asarray(held_out, dtype=object)[None, :]] = np.nan
    lo, hi = np.fmin.reduce(A, axis=0), np.fmax.reduce(A, axis=0)  # NaN ignored
    p = np.asarray(prediction, dtype=float)
    return (j >= 0) & (n >= 2) & (lo <= p) & (p <= hi)


def interval_spread(errors: pd.DataFrame, ranked: pd.DataFrame, Y: pd.DataFrame, keys: pd.DataFrame, share,
                    level: float) -> pd.Series:
    """How far the nested choice misses where it extrapolates, for an interval that says so: per
    series of ``ranked`` (:func:`benchcast.validation.choice.rank_models`), the split-conformal
    quantile at ``level`` of |log(prediction / truth)| over the leave-one-device-out errors
    ``errors`` (:func:`inner_errors`) of the ranked models of every series of its family (the
    series whose keys, ``keys`` index series, differ only in the columns ``share``; each series
    alone without ``share``) on devices whose result lies beyond the other devices' results (``Y``,
    :func:`within_range`; all of the family's errors where none does): of n errors the
    ceil((n + 1) level)-th smallest (the largest where that is beyond n). Index series; NaN for a
    series without errors."""
    fam = families(keys, share)
    e = errors.merge(ranked[["series", "model", "features"]], on=["series", "model", "features"])
    with np.errstate(invalid="ignore", divide="ignore"):
        truth = e["prediction"] / (1 + e["pct_error"].astype(float) / 100)
        e = e.assign(_r=np.abs(np.log1p(e["pct_error"].astype(float) / 100)), _f=e["series"].map(fam),
                     _in=within_range(Y, e["series"], e["held_out"], truth))
    e = e[np.isfinite(e["_r"])]

    def quantile(r):
        v = np.sort(r.to_numpy())
        return v[min(len(v), int(np.ceil((len(v) + 1) * level))) - 1]

    q = e[~e["_in"]].groupby("_f")["_r"].agg(quantile)
    q = q.combine_first(e.groupby("_f")["_r"].agg(quantile))
    f = pd.Series(pd.unique(ranked["series"]))
    return pd.Series(f.map(fam).map(q).to_numpy(dtype=float), index=f.to_numpy())


def spread_of(rows: pd.DataFrame, spread: pd.Series, Y: pd.DataFrame, at: str = "held_out") -> np.ndarray:
    """Per row of ``rows`` (series, prediction, the predicted device or target in column ``at``), the
    series' ``spread`` (:func:`interval_spread`) where the prediction lies beyond the results of the
    devices it was fitted on (``Y``, :func:`within_range`), NaN where it lies within them."""
    inside = within_range(Y, rows["series"], rows[at], rows["prediction"])
    return np.where(inside, np.nan, spread.reindex(rows["series"]).to_numpy(dtype=float))


def widen(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (predictions with lower, upper and the column ``log_spread``, :func:`interval_spread`)
    with each interval widened to hold prediction * exp(-log_spread) .. prediction * exp(log_spread)
    (a model's own interval kept where it is wider; where it has none, the band alone, and
    ``interval_flag`` says so: :data:`FLAG_BAND`), without ``log_spread``; ``covered`` recomputed
    where the rows have a truth. Rows without a spread or a positive prediction keep their
    interval. Every result is a positive quantity (a latency, a rate), whatever a straight line's
    symmetric interval says: :func:`benchcast.fits.positive.positive_rows` (no number at or below 0)."""
    if "log_spread" not in rows.columns:
        return rows
    out = rows.drop(columns="log_spread")
    q = rows["log_spread"].astype(float).to_numpy()
    p = rows["prediction"].astype(float).to_numpy()
    ok = np.isfinite(q) & (p > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        lo, hi = p * np.exp(-q), p * np.exp(q)
    out["lower"] = np.where(ok, np.fmin(rows["lower"].astype(float), lo), rows["lower"].astype(float))
    out["upper"] = np.where(ok, np.fmax(rows["upper"].astype(float), hi), rows["upper"].astype(float))
    if "interval_flag" in out.columns:
        band_only = ok & rows["lower"].isna().to_numpy() & rows["upper"].isna().to_numpy()
        out["interval_flag"] = np.where(band_only, FLAG_BAND, out["interval_flag"])
    return positive_rows(out)
