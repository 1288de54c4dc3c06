"""How far results spread: the cells whose repeats spread above the noise threshold, and the
ratio of each cell between two studies against their repeats' spread."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from . import tables
from .charts import MAX_FIGURE_POINTS, compact, device_label, placeholder
from ..core.units import size_label


def noise(table: pd.DataFrame, threshold: float, repeated: int, labels=None,
          max_points: int = MAX_FIGURE_POINTS) -> alt.Chart:
    """The noisy cells (:func:`benchcast.report.tables.noisy_cells`): the CV of each, per device, one row
    per benchmark, the threshold marked; ``repeated``: how many cells were run more than once. At
    most ``max_points`` cells are drawn, the noisiest (the table has them all)."""
    title = f"{len(table)} of {repeated} cells run more than once spread above CV {threshold:.0%}"
    if table.empty:
        return placeholder(title + ".")
    if len(table) > max_points:
        title += f" (the {max_points} noisiest drawn)"
    df = compact(table.sort_values("cv", ascending=False, kind="mergesort").head(max_points), tables.NOISE_COLUMNS)
    df["label"] = [device_label(labels, d) for d in df["device"]]
    df["cell"] = (df["engine"].astype(str) + " " + df["workload"].astype(str) + " bs " + df["block_size"].astype(str)
                  + " x" + df["threads"].astype(str) + " size " + df["data_size"].astype(str))
    base = alt.Chart(df)
    ticks = base.mark_tick(thickness=2, size=14).encode(
        x=alt.X("cv:Q", title="coefficient of variation of the repeats (%)", axis=alt.Axis(format="%")),
        y=alt.Y("label:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("metric:N", title="metric", legend=alt.Legend(columns=2)),
        tooltip=["label", "benchmark", "cell", "op", "metric", "unit", "value", "n", "cv", "min", "max"],
    )
    rule = base.transform_aggregate(cells="count()", groupby=["benchmark"]).mark_rule(
        color="gray", strokeDash=[4, 3]).encode(x=alt.datum(threshold))
    return (rule + ticks).properties(width=480).facet(
        row=alt.Row("benchmark:N", title=None)
    ).resolve_scale(y="independent").properties(title=title)


def _size(nbytes) -> str:
    """A cell's size as the sources write it: decimal where it is a round decimal size (a YCSB data
    set of 16MB), else binary as fio writes it (64K, 64M), else bytes."""
    n = int(nbytes)
    for label in (size_label(n, decimal=True), size_label(n)):
        if label != str(n):
            return label
    return f"{n}B"


def compare(cells: pd.DataFrame, names: tuple[str, str], max_cells: int, labels=None) -> alt.Chart:
    """Per cell (:func:`benchcast.report.tables.compare_cells`), the ratio b / a of the trimmed means on a
    log axis (1 = unchanged), b's slowest-fastest run over a's mean as a bar, a's own spread (its
    runs over its mean) around 1 as a grey band; the ``max_cells`` cells furthest from 1 (the table
    has them all)."""
    a, b = names
    if cells.empty:
        return placeholder(f"No cell measured in both {a} and {b}.")
    df = cells[cells["ratio"] > 0].head(max_cells).copy()
    if df.empty:
        return placeholder(f"No cell with a positive ratio {b} / {a}.")
    va = df["value_a"].astype(float)
    df["a_range_lo"], df["a_range_hi"] = df["min_a"] / va, df["max_a"] / va
    df["b_range_lo"], df["b_range_hi"] = df["min_b"] / va, df["max_b"] / va
    df["label"] = [device_label(labels, d) for d in df["device"]]
    size = df["data_size"].map(lambda v: f" size {_size(v)}" if v else "")
    bs = df["block_size"].map(lambda v: f" bs {_size(v)}" if v else "")
    df["cell"] = (df["label"] + ": " + df["benchmark"] + " " + df["engine"] + " " + df["workload"] + bs
                  + " x" + df["threads"].astype(str) + size + " " + df["op"] + " " + df["metric"])
    df["changed"] = np.where(df["outside_spread"].astype(bool), "outside both spreads", "within spread")
    lo = float(np.nanmin(df[["ratio", "a_range_lo", "b_range_lo"]].where(lambda x: x > 0).to_numpy()))
    hi = float(np.nanmax(df[["ratio", "a_range_hi", "b_range_hi"]].to_numpy()))
    scale = alt.Scale(type="log", domain=[min(lo, 1.0) * 0.9, max(hi, 1.0) * 1.1], clamp=True)
    order = list(df["cell"])
    y = alt.Y("cell:N", title=None, sort=order, axis=alt.Axis(labelLimit=0))
    x = alt.X("ratio:Q", title=f"{b} / {a} (ratio of trimmed means; 1 = unchanged)", scale=scale)
    color = alt.Color("changed:N", title=None, scale=alt.Scale(
        domain=["outside both spreads", "within spread"], range=["#e45756", "#4c78a8"]))
    base = alt.Chart(df)
    band = base.mark_bar(color="lightgray", height=10).encode(
        y=y, x=alt.X("a_range_lo:Q", scale=scale), x2="a_range_hi:Q")
    bars = base.mark_rule(strokeWidth=2).encode(
        y=y, x=alt.X("b_range_lo:Q", scale=scale), x2="b_range_hi:Q", color=color)
    pts = base.mark_point(filled=True, size=50).encode(
        y=y, x=x, color=color,
        tooltip=["cell", "unit", "value_a", "value_b", "ratio", "n_a", "n_b", "cv_a", "cv_b", "min_a", "max_a",
                 "min_b", "max_b"],
    )
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(color="gray", strokeDash=[4, 3]).encode(
        x=alt.X("x:Q", scale=scale))
    shown = f"the {len(df)} cells furthest from 1 of {len(cells)}" if len(cells) > len(df) else f"{len(df)} cells"
    title = f"{b} / {a}: {shown} (grey: {a}'s spread; bar: {b}'s runs over {a}'s mean)"
    return (band + one + bars + pts).properties(width=420, height=alt.Step(14), title=title)
