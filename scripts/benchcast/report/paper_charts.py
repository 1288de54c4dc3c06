"""The paper's figures: the screening's best line over the devices (Figure 3), the results over
data size with the extrapolated sizes (Figure 4), and the best R² per workload and data size."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .. import BenchcastError
from .charts import MEASURED, TARGET, compact, device_label, scheme, series_title
from .tables import focus_size, select
from ..core.units import size_label


def fig3_scatter(agg, screened, pred, feats, focus, size, labels=None) -> alt.LayerChart:
    """Devices (X = the series' best feature, Y = result) with the fitted line, hypothetical devices
    marked where the spec card gives that feature (paper Figure 3). ``feats`` is the screening's
    feature table (:func:`benchcast.features.feature_table`)."""
    size = focus_size(screened, focus, size)
    sel = select(screened, focus)
    sel = sel[(sel["data_size"] == size) & (sel["rank"] == 1)]
    if sel.empty:
        raise BenchcastError(f"report.focus: no fitted series for {focus} at {size_label(size, decimal=True)}")
    fit = sel.iloc[0]
    xs = feats[feats["feature"] == fit["feature"]][["device", "value"]].rename(columns={"value": "x"})
    ys = select(agg, focus)
    ys = ys[ys["data_size"] == size][["device", "value"]].rename(columns={"value": "y"})
    pts = xs.merge(ys, on="device")
    pts["kind"] = MEASURED
    tp = select(pred, focus)
    tp = tp[(tp["data_size"] == size) & (tp["feature"] == fit["feature"])]
    tpts = pd.DataFrame({"device": tp["target"], "x": tp["x"], "y": tp["value"], "kind": TARGET})
    allp = pd.concat([pts, tpts], ignore_index=True)
    allp["label"] = [device_label(labels, d) for d in allp["device"]]
    lo, hi = float(allp["x"].min()), float(allp["x"].max())
    xline = np.linspace(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), 50)
    line = pd.DataFrame({"x": xline, "y": fit["a"] * xline + fit["b"]})
    xt = f"{fit['feature']} ({fit['feature_unit']})"
    yt = f"{focus.get('op', '')} {focus.get('metric', '')} ({fit['unit']})"
    base_line = alt.Chart(line).mark_line(color="gray", strokeDash=[4, 3]).encode(
        x=alt.X("x:Q", title=xt), y=alt.Y("y:Q", title=yt)
    )
    # the devices in the legend, not as text beside their points: close points' names would collide
    dots = alt.Chart(allp).mark_point(size=120, filled=True).encode(
        x="x:Q",
        y="y:Q",
        color=alt.Color("label:N", title="device", legend=alt.Legend(labelLimit=0),
                        scale=alt.Scale(scheme=scheme(allp["label"]))),
        shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=[MEASURED, TARGET], range=["circle", "diamond"])),
        tooltip=["label", "x", "y", "kind"],
    )
    title = f"{series_title(focus, size)}: Y = {fit['a']:.4g} X + {fit['b']:.4g}, R² = {fit['r2']:.4f}"
    return (base_line + dots).interactive().properties(width=480, height=320, title=title)


def fig4_data_size(agg, pred, points, focus, labels=None) -> alt.LayerChart:
    """Result over data size per device, measured and hypothetical (emphasised), with the sizes
    extrapolated (hollow points) (paper Figure 4)."""
    m = select(agg, focus)
    m = m[m["data_size"] > 0][["device", "data_size", "value"]].assign(kind=MEASURED, point="run")
    t = select(pred, focus)
    t = t[["target", "data_size", "value"]].rename(columns={"target": "device"}).assign(kind=TARGET, point="run")
    e = select(points, focus)[["device", "data_size", "value", "kind"]].assign(point="extrapolated")
    e["kind"] = e["kind"].map({"measured": MEASURED, "target": TARGET})
    df = pd.concat([m, t, e], ignore_index=True)
    if df.empty:
        raise BenchcastError(f"report.focus: no results over data size for {focus}")
    df["gb"] = df["data_size"] / 1e9
    df["label"] = [device_label(labels, d) for d in df["device"]]
    unit = select(agg, focus)["unit"].iloc[0] if len(select(agg, focus)) else ""
    enc = dict(
        x=alt.X("gb:Q", title="data size (GB)"),
        y=alt.Y("value:Q", title=f"{focus.get('op', '')} {focus.get('metric', '')} ({unit})"),
        color=alt.Color("label:N", title="device"),
    )
    lines = alt.Chart(df[df["point"] == "run"]).mark_line(point=True).encode(
        **enc,
        strokeWidth=alt.StrokeWidth("kind:N", scale=alt.Scale(domain=[MEASURED, TARGET], range=[1.5, 4]), title=None),
        strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=[MEASURED, TARGET], range=[[1, 0], [6, 3]]), title=None),
        tooltip=["label", "gb", "value", "kind"],
    )
    ext = alt.Chart(df[df["point"] == "extrapolated"]).mark_point(size=70, filled=False, strokeWidth=2).encode(
        **enc, tooltip=["label", "gb", "value", "kind"]
    )
    return (lines + ext).interactive().properties(width=520, height=340, title=series_title(focus) + " over data size")


def heatmap_best_r2(best: pd.DataFrame) -> alt.Chart:
    """Best R^2 by workload x data size, one panel per engine and op."""
    df = compact(best, ["engine", "workload", "data_size", "op", "metric", "feature", "r2"])
    df["gb"] = (df["data_size"] / 1e9).map(lambda v: f"{v:g}")
    df["panel"] = df["engine"].astype(str) + " / " + df["op"].astype(str) + " " + df["metric"].astype(str)
    order = [f"{v:g}" for v in sorted(df["data_size"].unique() / 1e9)]
    base = alt.Chart(df).encode(
        x=alt.X("gb:O", title="data size (GB)", sort=order),
        y=alt.Y("workload:N", title="workload"),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("r2:Q", title="best R²", scale=alt.Scale(domain=[0, 1], scheme="viridis")),
        tooltip=["engine", "workload", "gb", "op", "feature", "r2"],
    )
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text("r2:Q", format=".2f"),
        color=alt.condition("datum.r2 > 0.6", alt.value("black"), alt.value("white")),
    )
    return (rect + text).properties(width=260, height=140).facet(facet=alt.Facet("panel:N", title=None), columns=2)
