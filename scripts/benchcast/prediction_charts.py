"""Predictions with their intervals: each held-out device's prediction against its measured
result, and the hypothetical devices' predictions over data size per model."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .charts import (DATA_SIZE, axis_unit, compact, device_label, measured_ticks, placeholder, scheme,
                     series_title, si_axis)
from .tables import select


#: One panel's side, in pixels: four panels and the y axis fit a 1280 px window.
PANEL = 230


def _heldout_block(df: pd.DataFrame, unit: str, columns: int) -> alt.FacetChart:
    """The held-out predictions of one unit, one panel per model kind, on log axes in the drawn
    unit (seconds for times): predicted against measured, the intervals as bars, the diagonal."""
    factor, shown = axis_unit(unit)
    df = df.copy()
    for c in ("truth", "prediction", "lower", "upper"):
        df[c] = df[c] * factor
    vals = df[["truth", "prediction"]].to_numpy()
    lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
    domain = [lo * 0.8, hi * 1.25]
    df["lower"] = df["lower"].where(df["lower"] > 0).clip(lower=domain[0], upper=domain[1])
    df["upper"] = df["upper"].clip(lower=domain[0], upper=domain[1])
    scale = alt.Scale(type="log", domain=domain, clamp=True)
    x = alt.X("truth:Q", scale=scale, title=f"measured ({shown})", axis=si_axis(shown))
    y = alt.Y("prediction:Q", scale=scale, title=f"predicted ({shown})", axis=si_axis(shown))
    base = alt.Chart(df)
    diag = base.mark_line(color="gray", strokeDash=[4, 3]).encode(
        x=x, y=alt.Y("truth:Q", scale=scale, title=f"predicted ({shown})", axis=si_axis(shown)))
    color = alt.Color("device:N", title="held-out device", legend=alt.Legend(orient="top", columns=3, labelLimit=0),
                      scale=alt.Scale(scheme=scheme(df["device"])))
    pts = base.mark_point(filled=True, size=40).encode(
        x=x, y=y, color=color, shape=alt.Shape("op:N", title="op", legend=alt.Legend(orient="top")),
        tooltip=["series", "features", "device", "truth", "prediction", "lower", "upper", "pct_error"],
    )
    bars = base.transform_filter("isValid(datum.lower) && isValid(datum.upper)").mark_rule(
        opacity=0.5
    ).encode(x=x, y=alt.Y("lower:Q", scale=scale), y2="upper:Q", color="device:N")
    return (diag + bars + pts).interactive().properties(width=PANEL, height=PANEL).facet(
        facet=alt.Facet("kind:N", title=None, header=alt.Header(labelLimit=PANEL)), columns=columns
    )


def heldout(chosen: pd.DataFrame, labels=None) -> alt.Chart:
    """Predicted vs measured result of each held-out device, per model kind (a row of panels per
    unit), with the prediction intervals where the fit had residual degrees of freedom; the
    diagonal is a perfect prediction."""
    if chosen.empty:
        return placeholder("No held-out predictions: too few devices to leave one out.")
    # only what is drawn or shown (the interactive copy carries its data: thousands of folds)
    df = chosen[["kind", "series", "op", "unit", "features", "held_out", "truth", "prediction", "lower", "upper",
                 "pct_error"]].copy()
    df["device"] = [device_label(labels, d) for d in df.pop("held_out")]
    # a log scale shows positive values only: a prediction at or below zero is left out (and counted
    # in the title), interval bounds are clipped to the axes, so the points do not sit in one corner
    drawn = (df["truth"] > 0) & (df["prediction"] > 0)
    left_out = int((~drawn).sum())
    df = df[drawn]
    if df.empty:
        return placeholder("No held-out prediction above zero to draw on log axes.")
    columns = min(4, df["kind"].nunique())
    blocks = [_heldout_block(part, unit, columns) for unit, part in df.groupby("unit", sort=True)]
    chart = blocks[0] if len(blocks) == 1 else alt.vconcat(*blocks)
    title = "held-out predictions against the measured results"
    if left_out:
        title = alt.Title(title, subtitle=f"{left_out} prediction{'s' * (left_out != 1)} at or below zero not drawn")
    return chart.properties(title=title)


#: The procedure whose predictions the answer chart draws, in order of preference: the nested
#: choice (validated on held-out devices), else the held-out choice, else the paper's.
CHOICES = {"nested": "nested choice", "heldout": "held-out choice", "paper": "paper: max R²"}


def target_intervals(preds: pd.DataFrame, focus: dict | None = None) -> alt.Chart:
    """The hypothetical devices' predictions of every series, with their intervals: one panel per
    application result (engine, workload, op, metric; the unit in its header), data size across,
    a colour per target; the validated procedure's predictions (:data:`CHOICES`: the first
    present), each series by its chosen model. Hollow points are extrapolations (a feature outside
    the measured range, or a data size beyond twice the largest measured); a lower bound at or below
    zero leaves its bar's lower half out (a log axis). ``focus`` (the report's focus series) comes first."""
    if preds.empty:
        return placeholder("No prediction for the hypothetical devices: no model was possible (see the refusals "
                           "and skipped tables).")
    choice = next(c for c in CHOICES if c in set(preds["choice"])) if "choice" in preds else None
    df = preds[preds["choice"] == choice].copy() if choice else preds.copy()
    df = df[df["prediction"] > 0]
    if df.empty:
        return placeholder("No prediction above zero for the hypothetical devices.")
    factor, _ = zip(*df["unit"].map(axis_unit))
    units = [axis_unit(u)[1] for u in df["unit"]]
    seconds = set(units) == {"s"}  # every panel in seconds: the ticks say so too
    for c in ("prediction", "lower", "upper"):
        df[c] = df[c] * np.array(factor)
    df["panel"] = (df["engine"] + " " + df["workload"] + ": " + df["op"] + " " + df["metric"] + " ("
                   + pd.Series(units, index=df.index) + ")")
    df["low"] = df["lower"].where(df["lower"] > 0, df["prediction"])  # a bound <= 0: no lower half
    df["flag"] = np.where(df["extrapolation"].astype(bool), "extrapolated", "within range")
    first = select(df, {k: v for k, v in (focus or {}).items() if k in df.columns})["panel"]
    order = list(dict.fromkeys([*first, *sorted(df["panel"].unique())]))
    base = alt.Chart(compact(df, ["panel", "target", "series", "model", "features", "data_size", "prediction",
                                  "lower", "upper", "low", "flag", "interval_flag"])).encode(
        x=alt.X("data_size:Q", title=DATA_SIZE, scale=alt.Scale(type="log", nice=False, padding=16),
              axis=si_axis("B", measured_ticks(df["data_size"], 10))),
        color=alt.Color("target:N", title="hypothetical device", legend=alt.Legend(orient="top")),
    )
    y = alt.Y("prediction:Q", title=None, scale=alt.Scale(type="log"), axis=si_axis("s" if seconds else ""))
    pts = base.mark_point(size=50, filled=True).encode(
        y=y, opacity=alt.condition("datum.flag == 'extrapolated'", alt.value(0.35), alt.value(1.0)),
        tooltip=["target", "series", "model", "features", "data_size", "prediction", "lower", "upper", "flag",
                 "interval_flag"],
    )
    bars = base.mark_rule().encode(y=alt.Y("low:Q", title=None), y2="upper:Q")
    title = f"predictions for the hypothetical devices ({CHOICES.get(choice, 'chosen models')}; faint: extrapolated)"
    return (bars + pts).properties(width=220, height=150).facet(
        facet=alt.Facet("panel:N", title=None, sort=order, header=alt.Header(labelLimit=260)), columns=4
    ).resolve_scale(x="independent", y="independent").properties(title=title)
