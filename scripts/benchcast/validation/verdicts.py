"""What held-out validation says per series: its tiers (each held-out device, interior or extreme)
and a verdict (device-independent, predictable from device figures, better than the baseline,
not predictable, or too few devices to judge)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..records import blockio
from ..screening import floor
from ..features import series_table
from ..records import SERIES_COLUMNS
from .choice import KIND_HELDOUT, KIND_MULTIPLE, KIND_NESTED, KIND_PAPER
from .folds import MIN_COVERED, baseline_pct_error

TIER_COLUMNS = ["series", *SERIES_COLUMNS, "held_out", "position", "truth", "truth_cv_pct", "truth_se_pct",
                "baseline_pct_error",
                "nested_model", "nested_features", "nested_pct_error", "nested_scatter_pct", "heldout_features", "heldout_pct_error",
                "paper_features", "paper_pct_error", "multiple_features", "multiple_pct_error"]
_TIER_KINDS = {KIND_NESTED: "nested", KIND_HELDOUT: "heldout", KIND_PAPER: "paper", KIND_MULTIPLE: "multiple"}


def tiers(chosen: pd.DataFrame, agg: pd.DataFrame | None = None, scatter: pd.Series | None = None) -> pd.DataFrame:
    """Per series and held-out device (tier): the held-out percent error of each kind of model and
    of the baseline (the mean of the other devices), and the tier's position: ``interior`` when
    its result lies inside the other devices' range (the model interpolates), ``extreme`` when it
    is the lowest or highest (extrapolation). ``truth_cv_pct``: the coefficient of variation of the
    held-out result's own runs, in percent, from the aggregated rows ``agg`` (NaN without them);
    ``truth_se_pct``: the standard error of its trimmed mean, in percent (:func:`floor.truth_se`): a
    miss of that size is the measurement's noise, not the model's. ``nested_scatter_pct``: how much
    the nested choice's held-out prediction moves between noisy copies of the measurement
    (``scatter``, indexed by series and held-out device: :func:`floor.scatter_pct`; NaN without
    it). Rows interior first; columns :data:`TIER_COLUMNS`."""
    if chosen.empty:
        return pd.DataFrame(columns=TIER_COLUMNS)
    t = chosen.drop_duplicates(["series", "held_out"])[["series", *SERIES_COLUMNS, "held_out", "truth"]].copy()
    t["truth_cv_pct"] = t["truth_se_pct"] = np.nan
    if agg is not None and "cv" in agg.columns:
        s = series_table(agg)
        at, rows = (pd.MultiIndex.from_arrays(a) for a in ([s["series"], s["device"]], [t["series"], t["held_out"]]))
        t["truth_cv_pct"] = pd.Series(100 * s["cv"].to_numpy(dtype=float), index=at).reindex(rows).to_numpy()
        if {"std", "n", "k"} <= set(s.columns):
            t["truth_se_pct"] = floor.truth_se(s).reindex(rows).to_numpy()
    g = t.groupby("series")["truth"]
    t["baseline_pct_error"] = g.transform(baseline_pct_error)
    t["position"] = np.where((t["truth"] == g.transform("min")) | (t["truth"] == g.transform("max")),
                             "extreme", "interior")
    for kind, short in _TIER_KINDS.items():
        k = chosen[chosen["kind"] == kind][["series", "held_out", "model", "features", "pct_error"]]
        k = k.rename(columns={"model": f"{short}_model", "features": f"{short}_features",
                              "pct_error": f"{short}_pct_error"})
        k = k.drop(columns=[] if short == "nested" else [f"{short}_model"])
        t = t.merge(k.drop_duplicates(["series", "held_out"]), on=["series", "held_out"], how="left")
    at = pd.MultiIndex.from_arrays([t["series"], t["held_out"]])
    t["nested_scatter_pct"] = np.nan if scatter is None or scatter.empty else scatter.reindex(at).to_numpy()
    t["_pos"] = (t["position"] != "interior").astype(int)
    t = t.sort_values(["_pos", "series", "truth"], kind="mergesort")
    return t[TIER_COLUMNS].reset_index(drop=True)


VERDICT_PREDICTABLE = "predictable from device figures"
VERDICT_INDEPENDENT = "device-independent"
VERDICT_OFF_PATH = "device-independent: its operations do not reach the device"
#: The verdicts that label a series device-independent (by its results, or by its device requests).
DEVICE_INDEPENDENT = (VERDICT_INDEPENDENT, VERDICT_OFF_PATH)
VERDICT_BETTER = "device-dependent; the model beats the baseline but misses the tolerance"
VERDICT_NONE = "not predictable: no better than the mean of the other devices"
VERDICT_FEW = "too few devices to judge (a nested choice needs 4, an interior tier 3)"
VERDICT_COLUMNS = ["series", *SERIES_COLUMNS, "n_devices", "n_interior", "spread", "feature",
                   "interior_mape", "interior_baseline_mape", "baseline_mape", "extreme_mape",
                   "extreme_baseline_mape", "multiple_interior_mape", "interior_floor_mape", "interior_noise_mape",
                   "device_requests_per_op",
                   "verdict"]


def verdicts(tier_table: pd.DataFrame, tolerance: float, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per series, what held-out validation says: MAPE on interior and extreme tiers of the
    nested-choice model (:func:`benchcast.validation.choice.nested_choice`) and of the baseline,
    the spread of the results over devices (max / min), and a verdict: device-independent (the
    baseline is within ``tolerance`` % on every tier taken together: the device hardly matters; or, from
    ``requests`` (:func:`benchcast.records.blockio.requests_per_op`, per workload and data size: the
    series' own runs), the workload's operations sent fewer
    than :data:`benchcast.records.blockio.OFF_PATH_BELOW` device requests each on every device that counts
    them, at least :data:`benchcast.validation.folds.MIN_COVERED` of the series' devices (a tmpfs has no counters): what
    differs between devices is not the device), predictable (beats the baseline on the
    interior tiers, interior MAPE <= ``tolerance`` %), better than the baseline but outside the
    tolerance, not predictable, or too few devices to judge. ``interior_floor_mape``: the MAPE a
    perfect model would still have on the interior tiers, from the truths' standard errors alone
    (:func:`floor.expected_abs_error`); ``interior_noise_mape``: what the nested choice would miss
    there from the measured noise alone, its own scatter between noisy copies of the measurement
    with the truths' (:func:`floor.noise_only`; NaN without draws). Columns :data:`VERDICT_COLUMNS`."""
    if tier_table.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    keys = [] if requests is None else [c for c in requests.columns if c not in ("requests_per_op", "devices")]
    req = {} if requests is None else {
        tuple(key): (per_op, set(devices))
        for *key, per_op, devices in requests[[*keys, "requests_per_op", "devices"]].itertuples(index=False)}
    rows = []
    for series, t in tier_table.groupby("series", sort=False):
        inner, outer = t[t["position"] == "interior"], t[t["position"] != "interior"]
        mape = lambda df, c: float(df[c].abs().mean()) if df[c].notna().any() else np.nan  # noqa: E731
        m, b = mape(inner, "nested_pct_error"), mape(inner, "baseline_pct_error")
        b_all = mape(t, "baseline_pct_error")
        per_op, counted = req.get(tuple(t.iloc[0][keys]), (np.nan, set()))
        if b_all <= tolerance:
            verdict = VERDICT_INDEPENDENT
        elif per_op < blockio.OFF_PATH_BELOW and len(set(t["held_out"]) & counted) >= MIN_COVERED:
            verdict = VERDICT_OFF_PATH
        elif len(inner) == 0 or np.isnan(b) or np.isnan(m):
            verdict = VERDICT_FEW
        elif m < b and m <= tolerance:
            verdict = VERDICT_PREDICTABLE
        elif m < b:
            verdict = VERDICT_BETTER
        else:
            verdict = VERDICT_NONE
        feats = t["nested_features"].dropna()
        rows.append({
            "series": series, **t.iloc[0][SERIES_COLUMNS].to_dict(), "n_devices": len(t), "n_interior": len(inner),
            "spread": float(t["truth"].max() / t["truth"].min()) if t["truth"].min() > 0 else np.nan,
            "feature": feats.mode().iloc[0] if len(feats) else "", "interior_mape": m,
            "interior_baseline_mape": b, "baseline_mape": b_all,
            "extreme_mape": mape(outer, "nested_pct_error"),
            "extreme_baseline_mape": mape(outer, "baseline_pct_error"),
            "multiple_interior_mape": mape(inner, "multiple_pct_error"),
            "interior_floor_mape": float(np.nanmean(floor.expected_abs_error(inner["truth_se_pct"])))
            if "truth_se_pct" in inner and inner["truth_se_pct"].notna().any() else np.nan,
            "interior_noise_mape": _noise_mape(inner),
            "device_requests_per_op": per_op,
            "verdict": verdict,
        })
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _noise_mape(inner: pd.DataFrame) -> float:
    """The mean over interior tiers of what the nested choice misses from the measured noise alone
    (:func:`floor.noise_only`); NaN where no tier has its scatter and standard error."""
    if not {"nested_scatter_pct", "truth_se_pct"} <= set(inner.columns):
        return np.nan
    v = floor.noise_only(inner["nested_scatter_pct"], inner["truth_se_pct"])
    return float(np.nanmean(v)) if np.isfinite(v).any() else np.nan
