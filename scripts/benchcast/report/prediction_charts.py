"""Predictions with their intervals: each held-out device's prediction against its measured
result, and the hypothetical devices' predictions over data size per model."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .charts import DATA_SIZE, axis_unit, compact, device_label, placeholder, scheme, si_axis
from .tables import select
from ..core.units import size_text


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


#: The procedures whose predictions the answer chart draws, each target and series by the first
#: that predicts it: the nested choice (validated on held-out devices), the held-out choice, the
#: paper's (a card without the figures the validated models use still gets the paper's line).
CHOICES = {"nested": "nested choice", "heldout": "held-out choice", "paper": "paper: max R²"}


#: What names a target's prediction of one series at one data size (a pool's multiple model has no
#: series name: the series' keys say which it predicts).
ANSWER_KEYS = ["target", "benchmark", "engine", "workload", "op", "metric", "threads", "data_size"]


def _answered(preds: pd.DataFrame) -> pd.DataFrame:
    """One prediction per target and series (engine, workload, op, metric, threads, data size): the
    first procedure of :data:`CHOICES` that made one (``procedure``: its name), above zero."""
    df = preds[preds["prediction"] > 0].copy()
    rank = {c: i for i, c in enumerate(CHOICES)}
    df = df[df["choice"].isin(list(CHOICES))] if "choice" in df else df.assign(choice="paper")
    df["procedure"] = df["choice"].map(CHOICES)
    order = df["choice"].map(rank) * 2 + (df["kind"] != "multiple")  # a multiple model first, as chosen
    keys = [c for c in ANSWER_KEYS if c in df]
    return df.assign(order=order).sort_values("order", kind="mergesort").drop_duplicates(keys).drop(columns="order")


def target_intervals(preds: pd.DataFrame, focus: dict | None = None) -> alt.Chart:
    """The hypothetical devices' predictions of every series, with their intervals: one panel per
    application result (engine, workload, op, metric; the unit in its header), its data sizes
    across, every target beside the others at each size (a colour each); each by the first
    procedure that predicts it (:func:`_answered`; its shape says which). Faint points are
    extrapolations (a feature outside the measured range, or a data size beyond twice the largest
    measured); a lower bound at or below zero leaves its bar's lower half out (a log axis).
    ``focus`` (the report's focus series) comes first."""
    df = _answered(preds) if len(preds) else preds
    if df.empty:
        return placeholder("No prediction above zero for the hypothetical devices: no model was possible (see the "
                           "refusals and skipped tables).")
    factor, units = zip(*df["unit"].map(axis_unit))
    seconds = set(units) == {"s"}  # every panel in seconds: the ticks say so too
    for c in ("prediction", "lower", "upper"):
        df[c] = df[c] * np.array(factor)
    df["panel"] = df["engine"] + " " + df["workload"] + ": " + df["op"] + " " + df["metric"] + " (" + list(units) + ")"
    df["size"] = df["data_size"].map(size_text)
    df["low"] = df["lower"].where(df["lower"] > 0, df["prediction"])  # a bound <= 0: no lower half
    df["flag"] = np.where(df["extrapolation"].astype(bool), "extrapolated", "within range")
    first = select(df, {k: v for k, v in (focus or {}).items() if k in df.columns})["panel"]
    order = list(dict.fromkeys([*first, *sorted(df["panel"].unique())]))
    sizes = list(dict.fromkeys(df.sort_values("data_size")["size"]))
    base = alt.Chart(compact(df, ["panel", "target", "procedure", "series", "model", "features", "size", "prediction",
                                  "lower", "upper", "low", "flag", "interval_flag"])).encode(
        # a band per size, the targets side by side in it
        x=alt.X("size:O", title=DATA_SIZE, sort=sizes, scale=alt.Scale(type="band", paddingInner=0.2),
                axis=alt.Axis(labelAngle=-30, labelOverlap=True)),
        xOffset=alt.XOffset("target:N"),
        color=alt.Color("target:N", title="hypothetical device", legend=alt.Legend(orient="top")),
    )
    y = alt.Y("prediction:Q", title=None, scale=alt.Scale(type="log"), axis=si_axis("s" if seconds else ""))
    pts = base.mark_point(size=45, filled=True).encode(
        y=y, shape=alt.Shape("procedure:N", title="predicted by", sort=list(CHOICES.values()),
                             legend=alt.Legend(orient="top")),
        opacity=alt.condition("datum.flag == 'extrapolated'", alt.value(0.4), alt.value(1.0)),
        tooltip=["target", "procedure", "series", "model", "features", "size", "prediction", "lower", "upper", "flag",
                 "interval_flag"],
    )
    bars = base.mark_rule().encode(y=alt.Y("low:Q", title=None), y2="upper:Q")
    title = "predictions for the hypothetical devices, with their intervals (faint: extrapolated)"
    made = preds[preds["choice"].isin(list(CHOICES))] if "choice" in preds else preds
    dropped = len(made.drop_duplicates([c for c in ANSWER_KEYS if c in made])) - len(df)
    if dropped:  # a target and series whose every prediction is at or below zero: not drawn, counted
        title = alt.Title(title, subtitle=f"{dropped} prediction{'s' * (dropped != 1)} at or below zero not drawn")
    return (bars + pts).properties(width=220, height=150).facet(
        facet=alt.Facet("panel:N", title=None, sort=order, header=alt.Header(labelLimit=260)), columns=4
    ).resolve_scale(x="independent", xOffset="independent", y="independent").properties(title=title)  # offsets: x
