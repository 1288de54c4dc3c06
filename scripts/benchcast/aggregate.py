"""Reduce repeated runs to one value per measurement: the trimmed mean of the paper.

With n runs, drop the k largest and the k smallest and average the rest (paper: n=5, k=1, mean of 3).
Where n <= 2k, k is reduced to (n-1)//2 so that at least one run remains; data with one run (already
aggregated, like the paper's published tables) passes through unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import BenchcastError, records

AGG_COLUMNS = records.KEY_COLUMNS + ["value", "n", "k", "mean", "std", "cv", "min", "max"]


def trimmed_mean(values, trim: int = 1) -> float:
    """Trimmed mean of one sample (reference implementation, used by tests)."""
    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    if n == 0:
        raise BenchcastError("trimmed mean of no values")
    k = min(trim, (n - 1) // 2)
    return float(v[k : n - k].mean())


def aggregate(recs: pd.DataFrame, trim: int = 1) -> pd.DataFrame:
    """Aggregate a record table over ``run``: one row per measurement key.

    Columns: the record key columns, ``value`` (trimmed mean), ``n`` (runs), ``k`` (runs dropped at
    each end), ``mean`` and ``std`` (all runs; std with ddof=1, 0 for one run), ``cv`` (std/mean),
    ``min``, ``max``. Vectorised: one sort and group-wise positions, no per-group Python.
    """
    if trim < 0:
        raise BenchcastError(f"aggregate.trim: must be >= 0, got {trim}")
    recs = records.check(recs, where="records")
    if recs.empty:
        return pd.DataFrame(columns=AGG_COLUMNS)
    keys = records.KEY_COLUMNS
    df = recs[keys + ["value"]].sort_values(keys + ["value"], kind="mergesort")
    grouped = df.groupby(keys, sort=False, dropna=False)
    pos = grouped.cumcount().to_numpy()
    n = grouped["value"].transform("size").to_numpy()
    k = np.minimum(trim, (n - 1) // 2)
    keep = (pos >= k) & (pos < n - k)
    kept = df[keep].groupby(keys, sort=False, dropna=False)["value"].mean().rename("value")
    stats = grouped["value"].agg(n="size", mean="mean", std="std", min="min", max="max")
    out = stats.join(kept).reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["k"] = np.minimum(trim, (out["n"] - 1) // 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["cv"] = np.where(out["mean"] != 0, out["std"] / out["mean"].abs(), np.nan)
    return out[AGG_COLUMNS].sort_values(keys, kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------- repeat until stable


def max_cv(recs: pd.DataFrame, metric: str = "lat_mean") -> float:
    """The largest coefficient of variation (percent) over the runs of any measurement of ``metric``
    in ``recs`` (the ``cv`` column of :func:`aggregate`); NaN when no measurement has two runs."""
    agg = aggregate(recs[recs["metric"] == metric], trim=0)
    agg = agg[agg["n"] >= 2]
    return float(agg["cv"].max() * 100) if len(agg) else float("nan")


def needs_another_run(previous: pd.DataFrame, stable_cv: float, metric: str = "lat_mean") -> tuple[bool, float]:
    """The stopping rule of repeat-until-stable: another run is needed while the CV of the runs so
    far (:func:`max_cv`) is above ``stable_cv`` percent. Returns (needed, CV); with fewer than two
    runs of every measurement, another run is needed."""
    cv = max_cv(previous, metric)
    return (bool(np.isnan(cv) or cv > stable_cv), cv)


def runs_until_stable(values, repeats: int, max_repeats: int, stable_cv: float) -> int:
    """How many runs of one measurement whose successive results are ``values`` the rule takes:
    at least ``repeats``, then one more while :func:`needs_another_run`, at most ``max_repeats``."""
    n = min(repeats, max_repeats)
    while n < max_repeats:
        recs = records.make([{"op": "x", "metric": "lat_mean", "unit": "us", "value": v, "run": i}
                             for i, v in enumerate(values[:n])],
                            study="s", source="s", device="d", benchmark="b", workload="w")
        if not needs_another_run(recs, stable_cv)[0]:
            break
        n += 1
    return n
