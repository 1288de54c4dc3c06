"""Predictions with their intervals: each held-out device's prediction against its measured
result, and the hypothetical devices' predictions over data size per model."""

from __future__ import annotations

import altair as alt
import numpy as np

from .charts import device_label, placeholder, series_title
from .tables import select


def heldout(chosen: pd.DataFrame, labels=None) -> alt.Chart:
    """Predicted vs measured result of each held-out device, per model kind, with the prediction
    intervals where the fit had residual degrees of freedom; the diagonal is a perfect prediction."""
    if chosen.empty:
        return placeholder("No held-out predictions: too few devices to leave one out.")
    # only what is drawn or shown (the interactive copy carries its data: thousands of folds)
    df = chosen[["kind", "series", "op", "features", "held_out", "truth", "prediction", "lower", "upper",
                 "pct_error"]].copy()
    df["device"] = [device_label(labels, d) for d in df.pop("held_out")]
    # a log scale shows positive values only: a prediction at or below zero is left out (and counted
    # in the title), interval bounds are clipped to the axes, so the points do not sit in one corner
    drawn = (df["truth"] > 0) & (df["prediction"] > 0)
    left_out = int((~drawn).sum())
    df = df[drawn]
    if df.empty:
        return placeholder("No held-out prediction above zero to draw on log axes.")
    vals = df[["truth", "prediction"]].to_numpy()
    lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
    domain = [lo * 0.8, hi * 1.25]
    df["lower"] = df["lower"].where(df["lower"] > 0).clip(lower=domain[0], upper=domain[1])
    df["upper"] = df["upper"].clip(lower=domain[0], upper=domain[1])
    scale = alt.Scale(type="log", domain=domain, clamp=True)
    title = "held-out predictions" + (f" ({left_out} at or below zero not drawn)" if left_out else "")
    base = alt.Chart(df)
    diag = base.mark_line(color="gray", strokeDash=[4, 3]).encode(
        x=alt.X("truth:Q", scale=scale, title="measured"), y=alt.Y("truth:Q", scale=scale, title="predicted")
    )
    pts = base.mark_point(filled=True, size=40).encode(
        x=alt.X("truth:Q", scale=scale),
        y=alt.Y("prediction:Q", scale=scale),
        color=alt.Color("device:N", title="held-out device"),
        shape=alt.Shape("op:N"),
        tooltip=["series", "features", "device", "truth", "prediction", "lower", "upper", "pct_error"],
    )
    bars = base.transform_filter("isValid(datum.lower) && isValid(datum.upper)").mark_rule(
        opacity=0.5
    ).encode(x=alt.X("truth:Q", scale=scale), y=alt.Y("lower:Q", scale=scale), y2="upper:Q", color="device:N")
    return (diag + bars + pts).interactive().properties(width=300, height=300).facet(
        column=alt.Column("kind:N", title=None)
    ).properties(title=title)


def target_intervals(preds: pd.DataFrame, focus: dict) -> alt.Chart:
    """Predictions of the focus series for the hypothetical devices over data size, per model, with
    prediction intervals; hollow points are extrapolations (feature outside the measured range or
    data size beyond twice the largest measured)."""
    df = select(preds, {k: v for k, v in focus.items() if k in preds.columns}) if len(preds) else preds
    if df.empty:
        return placeholder(
            f"No prediction for the hypothetical devices of {series_title(focus)}: no model was "
            "possible (see the refusals and skipped tables)."
        )
    df = df.copy()
    df["gb"] = df["data_size"] / 1e9
    df["model"] = df["kind"] + " (" + df["choice"].map({"paper": "paper: max R²", "heldout": "held-out choice",
                                                            "nested": "nested choice"}) + ")"
    df["flag"] = np.where(df["extrapolation"].astype(bool), "extrapolated", "within range")
    base = alt.Chart(df).encode(
        x=alt.X("gb:Q", title="data size (GB)"), color=alt.Color("target:N", title="hypothetical device")
    )
    pts = base.mark_point(size=60).encode(
        y=alt.Y("prediction:Q", title=f"predicted {focus.get('op', '')} {focus.get('metric', '')}"),
        fill=alt.condition("datum.flag == 'extrapolated'", alt.value("white"), alt.Color("target:N")),
        tooltip=["target", "model", "features", "gb", "prediction", "lower", "upper", "flag", "interval_flag"],
    )
    bars = base.mark_errorbar(ticks=True).encode(y=alt.Y("lower:Q", title=None), y2="upper:Q")
    return (bars + pts).properties(width=260, height=220, title=series_title(focus)).facet(
        column=alt.Column("model:N", title=None)
    )
