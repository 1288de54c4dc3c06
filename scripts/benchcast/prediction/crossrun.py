"""Cross-run validation: the error a spec card from another day carries.

Within one finished tree, held-out validation predicts each device from a model fitted on the other
devices, fed the device's own figures: every number was measured in the same hour. A user's card
was measured on another day (or this machine's device last week), and the machine's speed moved in
between. Here a model fitted in tree A predicts a device of tree B from B's figures of it, as such a
card would, and is scored against B's results of that device (``cross_run``); beside it, the same
procedure fed A's own figures of the device and scored against A's results (``same_run``). The
model is the nested choice of A (``validation/nested_selection.csv``: its best-ranked models per
series, refitted by :func:`benchcast.prediction.predict.with_intervals` on A's devices less the one predicted,
the rate-cap rule included), so the two columns differ only in the day the card and the truth are
from. Both are made from the raw trimmed means and from the values stated at the reference speed
(``corrected``, :mod:`benchcast.records.correction`), with the selections of A either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import predict
from ..features import feature_table, series_matrix
from ..core.units import size_label

TABLE_COLUMNS = ["family", "value", "pairs", "same_run_mape", "cross_run_mape", "ratio", "validation_mape"]
#: Operations of a read family (the rest are writes).
READ_OPS = ("read", "scan")
ERROR_COLUMNS = ["series", "benchmark", "engine", "op", "device", "position", "value", "same_run_pct_error",
                 "cross_run_pct_error", "validation_pct_error"]


@dataclass(frozen=True)
class Tree:
    """What cross-run validation reads of one finished tree (results/<study>): its aggregated table,
    its nested selections and its tiers (which devices are interior for each series)."""

    aggregated: pd.DataFrame
    nested: pd.DataFrame
    tiers: pd.DataFrame


def stated(agg: pd.DataFrame, value: str) -> pd.DataFrame:
    """The aggregated table with ``value`` the raw trimmed means (``raw``) or those stated at the
    reference speed (``corrected``; rows without one dropped)."""
    if value == "raw":
        return agg
    corrected = pd.to_numeric(agg.get("corrected"), errors="coerce") if "corrected" in agg else None
    if corrected is None:
        return agg.iloc[0:0]
    return agg.assign(value=corrected)[corrected.notna().to_numpy()]


def card(agg: pd.DataFrame, device: str, features: Mapping) -> dict:
    """A spec card of ``device``'s figures in ``agg`` (as a config's target reads it): every
    candidate feature it has that a card can name (a figure of a setting beyond the card's keys
    is left out)."""
    ft = feature_table(agg, features)
    ft = ft[(ft["device"] == device) & (ft["setting"] == "") & (ft["value"] > 0)]
    figures = []
    for r in ft.itertuples(index=False):
        fig = {"workload": r.workload, "block_size": size_label(int(r.block_size)), "op": r.op,
               "metric": r.metric, "value": f"{float(r.value)!r} {r.unit}", "iodepth": int(r.iodepth),
               "numjobs": int(r.numjobs)}
        if r.engine:
            fig["ioengine"] = r.engine
        figures.append(fig)
    return {"figures": figures}


def predict_device(fit: pd.DataFrame, nested: pd.DataFrame, figures: dict, study: Mapping) -> pd.Series:
    """The nested choice's prediction of each series for a device with spec card ``figures``,
    refitted on ``fit`` (aggregated rows of the other devices): series -> prediction."""
    chosen = predict.Selections(pd.DataFrame(columns=["series", "selected_feature", "paper_feature"]),
                                pd.DataFrame(), nested)
    preds, _ = predict.with_intervals(fit, study["features"], study.get("series"), chosen, {"card": figures},
                                      study["validate"], [])
    preds = preds[preds["choice"] == "nested"]
    return preds.drop_duplicates("series").set_index("series")["prediction"].astype(float)


def errors(a: Tree, b: Tree, study: Mapping, value: str) -> pd.DataFrame:
    """Per series and device measured in both trees: the percent error of the prediction from A's
    figures against A's result (``same_run_pct_error``) and from B's figures against B's result
    (``cross_run_pct_error``), the model fitted on A's other devices; ``position`` is the device's
    tier in A's validation (interior or extreme), ``validation_pct_error`` A's own held-out error
    there (the nested choice made without the device, on A's values as its analysis took them),
    ``value`` which values (raw or corrected)."""
    agg_a, agg_b = stated(a.aggregated, value), stated(b.aggregated, value)
    if agg_a.empty or agg_b.empty or a.nested.empty:
        return pd.DataFrame(columns=ERROR_COLUMNS)
    Ya, keys = series_matrix(agg_a, study["features"], study.get("series"))
    Yb, _ = series_matrix(agg_b, study["features"], study.get("series"))
    rows = []
    for dev in sorted(set(Ya.index) & set(Yb.index)):
        fit = agg_a[agg_a["device"] != dev]
        same = predict_device(fit, a.nested, card(agg_a, dev, study["features"]), study)
        cross = predict_device(fit, a.nested, card(agg_b, dev, study["features"]), study)
        for series in same.index.union(cross.index):
            truth_a, truth_b = _at(Ya, dev, series), _at(Yb, dev, series)
            rows.append({"series": series, "device": dev,
                         "same_run_pct_error": _pct(same.get(series, np.nan), truth_a),
                         "cross_run_pct_error": _pct(cross.get(series, np.nan), truth_b)})
    out = pd.DataFrame(rows, columns=["series", "device", "same_run_pct_error", "cross_run_pct_error"])
    out = out.merge(keys[["benchmark", "engine", "op"]].rename_axis("series").reset_index(), on="series")
    pos = a.tiers.rename(columns={"held_out": "device", "nested_pct_error": "validation_pct_error"})
    pos = pos[["series", "device", "position", "validation_pct_error"]]
    out = out.merge(pos, on=["series", "device"], how="left").assign(value=value)
    return out[ERROR_COLUMNS]


def _at(Y: pd.DataFrame, device: str, series: str) -> float:
    return float(Y.at[device, series]) if series in Y.columns and device in Y.index else np.nan


def _pct(pred: float, truth: float) -> float:
    return (pred - truth) / truth * 100 if np.isfinite(pred) and np.isfinite(truth) and truth > 0 else np.nan


def family(errs: pd.DataFrame) -> pd.Series:
    """The family of each row: benchmark, engine and read or write (``ycsb rocksdb write``)."""
    rw = np.where(errs["op"].isin(READ_OPS), "read", "write")
    return errs["benchmark"].astype(str) + " " + errs["engine"].astype(str) + " " + rw


def table(errs: pd.DataFrame) -> pd.DataFrame:
    """Per family and value (raw, corrected), and over every YCSB series: the interior MAPE of the
    same-run and the cross-run predictions, their ratio, and how many (series, device) pairs; beside
    them the first tree's own validation MAPE of the same pairs (its nested choice per fold: the
    selection here is the one made on all its devices, so the same-run refit is the lower)."""
    inner = errs[errs["position"] == "interior"].dropna(subset=["same_run_pct_error", "cross_run_pct_error"])
    inner = inner.assign(family=family(inner))
    parts = [inner, inner[inner["benchmark"] == "ycsb"].assign(family="all YCSB")]
    both = pd.concat(parts, ignore_index=True)
    if both.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    mape = lambda s: float(np.mean(np.abs(s.dropna()))) if s.notna().any() else np.nan  # noqa: E731
    out = both.groupby(["family", "value"]).agg(
        pairs=("series", "size"), same_run_mape=("same_run_pct_error", mape),
        cross_run_mape=("cross_run_pct_error", mape), validation_mape=("validation_pct_error", mape)).reset_index()
    out["ratio"] = out["cross_run_mape"] / out["same_run_mape"]
    return out[TABLE_COLUMNS]

