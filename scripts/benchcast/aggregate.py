"""Reduce repeated runs to one value per measurement: the trimmed mean of the paper.

With n runs, drop the k largest and the k smallest and average the rest (paper: n=5, k=1, mean of 3).
Where n <= 2k, k is reduced to (n-1)//2 so that at least one run remains; data with one run (already
aggregated, like the paper's published tables) passes through unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import BenchcastError, records, repeats

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
    out["cv"] = repeats.cv(out["std"].to_numpy(), out["mean"].to_numpy())
    return out[AGG_COLUMNS].sort_values(keys, kind="mergesort").reset_index(drop=True)
