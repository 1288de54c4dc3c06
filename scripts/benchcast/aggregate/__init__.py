"""Reduce repeated runs to one value per measurement: the trimmed mean of the paper.

With n runs, drop the k largest and the k smallest and average the rest (paper: n=5, k=1, mean of 3).
Where n <= 2k, k is reduced to (n-1)//2 so that at least one run remains; data with one run (already
aggregated, like the paper's published tables) passes through unchanged.

Latency percentiles are the exception where every run of a measurement kept its latency histogram
(YCSB's ``lat_hdr`` records, :mod:`benchcast.records.hdr`): the histograms of all runs are added and the
percentile is read from the sum, a true percentile of every operation of every run (a trimmed mean of
per-run p99s is not a p99 of anything). The ``aggregation`` column says which a row had:
``trimmed mean`` or ``merged histogram``; n, mean, std, cv, min and max stay those of the per-run
values, so the noise of a percentile is still seen.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import BenchcastError, records
from ..records import correction
from ..core.units import HISTOGRAM_METRIC

AGG_COLUMNS = records.KEY_COLUMNS + ["value", "n", "k", "mean", "std", "cv", "min", "max", "aggregation"]

#: The percentile metrics read from merged histograms (records of :data:`HISTOGRAM_METRIC`).
PERCENTILES = {"lat_p50": 50.0, "lat_p95": 95.0, "lat_p99": 99.0, "lat_p99.9": 99.9}


def trimmed_mean(values, trim: int) -> float:
    """Trimmed mean of one sample (reference implementation, used by tests)."""
    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    if n == 0:
        raise BenchcastError("trimmed mean of no values")
    k = min(trim, (n - 1) // 2)
    return float(v[k : n - k].mean())


def aggregate(recs: pd.DataFrame, trim: int, value: str | None = None) -> pd.DataFrame:
    """Aggregate a record table over ``run``: one row per measurement key.

    Columns: the record key columns, ``value`` (trimmed mean), ``n`` (runs), ``k`` (runs dropped at
    each end), ``mean`` and ``std`` (all runs; std with ddof=1, 0 for one run), ``cv`` (std/mean),
    ``min``, ``max``, ``aggregation`` (``trimmed mean``, or ``merged histogram`` for percentiles read
    from the sum of every run's histogram, see the module), ``corrected`` (the trimmed mean of the
    values stated at the reference speed, :mod:`benchcast.records.correction`; NaN where the records have
    none). Vectorised: one sort and group-wise positions, no per-group Python (but for the
    histogram merges).

    ``value`` ``corrected``: the analysis takes the corrected values (``raw`` or None: as measured)
    (:func:`benchcast.records.correction.stated`); a histogram holds raw latencies, so the percentiles are
    then the trimmed means of the runs' own corrected percentiles.
    """
    if trim < 0:
        raise BenchcastError(f"aggregate.trim: must be >= 0, got {trim}")
    recs = records.check(recs, where="records")
    out = _aggregate(correction.stated(recs, value), trim, histograms=value != "corrected")
    corrected = pd.to_numeric(recs["corrected"], errors="coerce") if "corrected" in recs else None
    if corrected is None or corrected.isna().all():
        return out.assign(corrected=np.nan)
    stated = recs.assign(value=corrected)[corrected.notna().to_numpy()]
    again = _aggregate(stated, trim, histograms=False)[records.KEY_COLUMNS + ["value"]]
    out = out.merge(again.rename(columns={"value": "corrected"}), on=records.KEY_COLUMNS, how="left")
    return out


def _aggregate(recs: pd.DataFrame, trim: int, histograms: bool = True) -> pd.DataFrame:
    """:func:`aggregate` of ``value`` (checked records), percentiles from merged histograms where
    ``histograms``."""
    is_hist = (recs["metric"] == HISTOGRAM_METRIC).to_numpy()
    hists, recs = recs[is_hist], recs[~is_hist]
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
    out["cv"] = records.cv(out["std"].to_numpy(), out["mean"].to_numpy())
    out["aggregation"] = "trimmed mean"
    if len(hists) and histograms:
        out = _merged_percentiles(out, recs, hists)
    return out[AGG_COLUMNS].sort_values(keys, kind="mergesort").reset_index(drop=True)


def _merged_percentiles(out: pd.DataFrame, recs: pd.DataFrame, hists: pd.DataFrame) -> pd.DataFrame:
    """Replace the percentile rows of ``out`` whose every run has a histogram by the percentiles of
    the merged histograms (rows that had no per-run percentile are added, with n the runs merged)."""
    from ..records import hdr

    where = [c for c in records.KEY_COLUMNS if c not in ("metric", "unit")]
    if "hdr" not in hists:
        return out
    hists = hists.assign(hdr=hists["hdr"].fillna("").astype(str))
    runs_of = recs[recs["metric"] == "lat_mean"].groupby(where, sort=False)["run"].agg(frozenset)
    pct = out[out["metric"].isin(list(PERCENTILES))].set_index(where + ["metric"]).index
    updates, added = {}, []
    for key, group in hists.groupby(where, sort=False):
        if (group["hdr"] == "").any() or runs_of.get(key, frozenset()) != frozenset(group["run"]):
            continue  # a run without a histogram: the merge would not be of all runs
        merged = hdr.merge(group["hdr"], where=f"records of {dict(zip(where, key))}")
        values = hdr.percentiles(merged, list(PERCENTILES.values()))
        for metric, value in zip(PERCENTILES, values):
            if (*key, metric) in pct:
                updates[(*key, metric)] = value
            else:
                added.append({**dict(zip(where, key)), "metric": metric, "unit": "us", "value": value,
                              "n": len(group), "k": 0, "mean": np.nan, "std": np.nan, "cv": np.nan,
                              "min": np.nan, "max": np.nan})
    if updates:
        idx = out.set_index(where + ["metric"]).index
        hit = idx.isin(list(updates))
        out.loc[hit, "value"] = [updates[k] for k in idx[hit]]
        out.loc[hit, "k"] = 0
        out.loc[hit, "aggregation"] = "merged histogram"
    if added:
        extra = pd.DataFrame(added).assign(aggregation="merged histogram")
        out = pd.concat([out, extra], ignore_index=True)
        out = out.sort_values(records.KEY_COLUMNS, kind="mergesort").reset_index(drop=True)
    return out
