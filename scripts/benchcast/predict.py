"""Prediction of each result series for hypothetical target devices from their spec cards, and
regression over data size to predict sizes that were never run (the paper's second regression)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import BenchcastError, records
from .screen import feature_name

PREDICT_COLUMNS = ["target"] + records.SERIES_COLUMNS + [
    "feature",
    "choice",
    "a",
    "b",
    "r2",
    "n",
    "x",
    "x_min",
    "x_max",
    "outside_range",
    "value",
]


def spec_features(targets: dict) -> pd.DataFrame:
    """Spec cards as a table: target, feature, value (figure keys as in config)."""
    rows = []
    for name, card in targets.items():
        for i, fig in enumerate(card["figures"]):
            bs = records.parse_size(fig["block_size"], what=f"targets.{name}.figures[{i}].block_size")
            op = fig.get("op") or {"randread": "read", "read": "read"}.get(fig["workload"], "write")
            rows.append(
                {
                    "target": name,
                    "feature": feature_name(fig["workload"], bs, op, fig["metric"]),
                    "x": float(fig["value"]),
                }
            )
    df = pd.DataFrame(rows, columns=["target", "feature", "x"])
    dup = df.duplicated(["target", "feature"])
    if dup.any():
        r = df[dup].iloc[0]
        raise BenchcastError(f"targets.{r['target']}: figure {r['feature']} is given twice")
    return df


def check_targets(targets: dict, features: dict) -> None:
    """Refuse a target none of whose figures is a candidate feature of the study (config error)."""
    bench_bs = {records.parse_size(s, what="features.block_sizes") for s in features["block_sizes"]}
    for name, card in targets.items():
        usable = [
            f
            for f in card["figures"]
            if f["workload"] in features["workloads"]
            and records.parse_size(f["block_size"], what=f"targets.{name}") in bench_bs
            and f["metric"] in features["metrics"]
        ]
        if not usable:
            figs = ", ".join(f"{f['workload']}/{f['block_size']}/{f['metric']}" for f in card["figures"])
            raise BenchcastError(
                f"targets.{name}: none of its figures ({figs}) is a candidate feature "
                f"(features: workloads {features['workloads']}, block_sizes {features['block_sizes']}, "
                f"metrics {features['metrics']})"
            )


def predict(screened: pd.DataFrame, targets: dict) -> pd.DataFrame:
    """Predict every series for every target device.

    Per series the best-R^2 feature is used when the spec card has it (``choice`` = ``best``);
    otherwise the best-R^2 feature the card provides (``best in spec``); a series with no fitted
    feature in the card gets no row. ``outside_range`` flags a spec figure outside the range the
    fit was measured on.
    """
    keys = records.SERIES_COLUMNS
    spec = spec_features(targets)
    fitted = screened[screened["r2"].notna()]
    cand = fitted.merge(spec, on="feature", how="inner")
    if cand.empty:
        return pd.DataFrame(columns=PREDICT_COLUMNS)
    cand = cand.sort_values(keys + ["target", "rank"], kind="mergesort")
    chosen = cand.groupby(keys + ["target"], sort=False).head(1).copy()
    chosen["choice"] = np.where(chosen["rank"] == 1, "best", "best in spec")
    chosen["value"] = chosen["a"] * chosen["x"] + chosen["b"]
    chosen["outside_range"] = (chosen["x"] < chosen["x_min"]) | (chosen["x"] > chosen["x_max"])
    order = {t: i for i, t in enumerate(targets)}
    chosen["_o"] = chosen["target"].map(order)
    chosen = chosen.sort_values(["_o"] + keys, kind="mergesort")
    return chosen[PREDICT_COLUMNS].reset_index(drop=True)


def _x(sizes, how: str) -> np.ndarray:
    gbs = np.asarray(sizes, dtype=float) / 1e9
    if how == "log2":
        return np.log2(gbs)
    if how == "linear":
        return gbs
    raise BenchcastError(f"extrapolate.x: unknown {how!r} (linear or log2)")


def extrapolate(measured: pd.DataFrame, predicted: pd.DataFrame, data_sizes, how: str = "linear"):
    """Regress each device's results over data size and predict the given sizes.

    ``measured``: aggregated series rows (device, series columns, value); ``predicted``: the output of
    :func:`predict` (target devices). Each (device, series family without data size) with at least
    three sizes is fitted Y = a * size + b, sizes in GB (``how='log2'``: on log2 of the size).
    Returns ``(fits, points)``: fits has a, b, r2, n, the measured size range and ``kind``
    (measured/target); points has the predicted values at ``data_sizes`` with a flag where the size
    is beyond twice the largest size fitted.
    """
    fam = [c for c in records.SERIES_COLUMNS if c != "data_size"]
    m = measured[["device"] + records.SERIES_COLUMNS + ["value"]].assign(kind="measured")
    p = predicted.rename(columns={"target": "device"})[["device"] + records.SERIES_COLUMNS + ["value"]]
    allv = pd.concat([m, p.assign(kind="target")], ignore_index=True)
    allv = allv[allv["data_size"] > 0]
    sizes = [records.parse_size(s, what="extrapolate.data_sizes") for s in data_sizes]
    fits, points = [], []
    for key, g in allv.groupby(["device", "kind"] + fam, sort=False):
        g = g.sort_values("data_size")
        if g["data_size"].nunique() < 3:
            continue
        x = _x(g["data_size"], how)
        y = g["value"].to_numpy(float)
        xm, ym = x.mean(), y.mean()
        sxx = ((x - xm) ** 2).sum()
        syy = ((y - ym) ** 2).sum()
        a = ((x - xm) * (y - ym)).sum() / sxx
        b = ym - a * xm
        r2 = ((a * x + b - ym) ** 2).sum() / syy if syy > 0 else np.nan
        base = dict(zip(["device", "kind"] + fam, key))
        fits.append(
            {**base, "a": a, "b": b, "r2": r2, "n": len(g),
             "size_min": int(g["data_size"].min()), "size_max": int(g["data_size"].max())}
        )
        for s in sizes:
            points.append(
                {**base, "data_size": s, "value": a * _x([s], how)[0] + b,
                 "beyond_2x": s > 2 * int(g["data_size"].max())}
            )
    fit_cols = ["device", "kind"] + fam + ["a", "b", "r2", "n", "size_min", "size_max"]
    pt_cols = ["device", "kind"] + fam + ["data_size", "value", "beyond_2x"]
    return pd.DataFrame(fits, columns=fit_cols), pd.DataFrame(points, columns=pt_cols)
