"""A result that cannot be zero: a latency, a time per pass, a rate.

Every application result and device figure benchcast predicts is a positive quantity. A straight
line carried past the measured devices can cross zero, and a symmetric interval can reach below it;
neither number can be true. :func:`positive` refuses a prediction at or below zero (no number, and a
flag that says so) and replaces a lower bound at or below zero by its mirror on the log scale, so
that the interval stays above zero and keeps its upper bound; :func:`positive_rows` does it to a table
of predictions. Each output a user is shown passes through it: the chosen folds, the spec cards'
predictions, the paper's choice among them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import covered

#: A prediction of a positive quantity at or below zero: refused (no prediction, no interval).
FLAG_REFUSED = "refused: predicted at or below 0, which a latency or a rate cannot be"
#: A lower bound at or below zero replaced by its mirror on the log scale (prediction^2 / upper).
FLAG_MIRRORED = "lower bound at or below 0 mirrored on the log scale (prediction^2 / upper bound)"


def _with_flag(flags, add, where) -> np.ndarray:
    flags = np.asarray(flags, dtype=object)
    return np.where(where, np.where(flags == "", add, flags.astype(str) + "; " + add), flags)


def positive(prediction, lower, upper, flag=""):
    """A positive quantity's prediction and interval that never reach 0: a prediction at or below 0
    is refused (NaN, its bounds too, :data:`FLAG_REFUSED`); a lower bound at or below 0 under a
    positive prediction becomes ``prediction^2 / upper``, the interval symmetric on the log scale
    about the prediction (:data:`FLAG_MIRRORED`), or NaN where the upper bound is missing. Returns
    (prediction, lower, upper, flag) arrays shaped as the inputs."""
    p, lo, hi = (np.array(v, dtype=float) for v in np.broadcast_arrays(prediction, lower, upper))
    flag = np.broadcast_to(np.asarray(flag, dtype=object), p.shape)
    refused = ~(p > 0) & ~np.isnan(p)
    low = (p > 0) & (lo <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mirror = np.where(hi > 0, p * p / hi, np.nan)
    lo = np.where(low, mirror, lo)
    p, lo, hi = (np.where(refused, np.nan, v) for v in (p, lo, hi))
    flag = _with_flag(_with_flag(flag, FLAG_MIRRORED, low), FLAG_REFUSED, refused)
    return p, lo, hi, flag


def positive_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`positive` on a table of predictions (columns prediction, lower, upper and, where it has
    them, interval_flag; abs_error, pct_error and covered recomputed where it has a truth)."""
    if rows.empty:
        return rows
    out = rows.copy()
    flag = out["interval_flag"].fillna("").astype(str).to_numpy() if "interval_flag" in out else ""
    p, lo, hi, f = positive(out["prediction"], out["lower"], out["upper"], flag)
    out["prediction"], out["lower"], out["upper"] = p, lo, hi
    if "interval_flag" in out:
        out["interval_flag"] = f
    if "truth" in out:
        if "abs_error" in out:
            out["abs_error"] = np.abs(p - out["truth"].to_numpy(dtype=float))
        if "pct_error" in out:
            out["pct_error"] = 100 * (p - out["truth"].to_numpy(dtype=float)) / out["truth"].to_numpy(dtype=float)
        if "covered" in out:
            out["covered"] = covered(out["truth"], lo, hi)
    return out
