"""The applications' results: every result over data size per device, mean latency over data size
with the memory line and the held-out size's prediction, and out-of-core passes relative to the
in-memory run."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .charts import (DATA_SIZE, MAX_FIGURE_POINTS, axis_unit, compact, device_label, measured_ticks,
                     placeholder, scheme, short_label, si_axis)
from .tables import APP_COLUMNS


def ooc_relative(table: pd.DataFrame, labels=None) -> alt.Chart:
    """Pass time relative to the in-memory run against working set / memory limit, per device
    (columns) and kernel (rows), one line per mode (the paper's Figures 5 and 6)."""
    if table.empty:
        return placeholder("no out-of-core runs with an in-memory baseline")
    df = table.dropna(subset=["relative"]).copy()
    df["label"] = [device_label(labels, d) for d in df["device"]]
    df["short"] = [short_label(labels, d) for d in df["device"]]
    width = max(110, min(200, 1000 // max(1, df["short"].nunique()) - 20))
    base = alt.Chart(df).encode(
        # on three lines: a column is 110-200 px wide (seven tiers of the local study: 122 px)
        x=alt.X("ratio:Q", title=["working set /", "memory limit", "(ratio)"], scale=alt.Scale(type="log", base=2)),
        y=alt.Y("relative:Q", title="slowdown (ratio)", scale=alt.Scale(type="log")),
        color=alt.Color("engine:N", title="mode", legend=alt.Legend(orient="top")),
        tooltip=["label", "engine", "workload", "data_size", "ratio", "value", "memory_value", "relative", "cv"],
    )
    return (base.mark_line(point=True)).properties(width=width, height=120).facet(
        column=alt.Column("short:N", title=None, header=alt.Header(labelLimit=width)),
        row=alt.Row("workload:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
    )


def _thin_sizes(df: pd.DataFrame, max_points: int) -> tuple[pd.DataFrame, str]:
    """At most about ``max_points`` rows: every k-th data size (the smallest and the largest kept),
    so that every line keeps its shape; a note of what was left out."""
    sizes = np.sort(df["data_size"].unique())
    if len(df) <= max_points or len(sizes) < 3:
        return df, ""
    step = int(np.ceil(len(df) / max_points))
    keep = set(sizes[::step]) | {sizes[-1]}
    return df[df["data_size"].isin(keep)], f" ({len(keep)} of {len(sizes)} data sizes drawn)"


def app_overview(table: pd.DataFrame, labels=None, max_points: int = MAX_FIGURE_POINTS) -> alt.Chart:
    """The application results (:func:`benchcast.report.tables.app_overview`), one block per benchmark and
    engine: a panel per op and metric (rows) and workload (columns), the result over data size per
    device on log axes, the repeats' fastest-slowest run as a bar. Beyond ``max_points`` points in
    all, every k-th data size is drawn (the table has them all)."""
    if table.empty:
        return placeholder("No application results in this study (fio figures only).")
    df, note = _thin_sizes(table, max_points)
    df = compact(df, APP_COLUMNS)
    df["label"] = [device_label(labels, d) for d in df["device"]]
    factor, drawn = zip(*df["unit"].map(axis_unit))  # times drawn in seconds: 2ms, not 2k us
    df["y"], df["ymin"], df["ymax"] = (df[c] * np.array(factor) for c in ("value", "min", "max"))
    df["figure"] = df["op"] + " " + df["metric"] + " (" + list(drawn) + ")"
    df = compact(df, list(df.columns))  # the drawn values to 4 digits too
    # the legend on top: the panels are wide, a legend at the right leaves the view of a narrow window
    color = alt.Color("label:N", title="device", legend=alt.Legend(labelLimit=0, orient="top", columns=3),
                      scale=alt.Scale(scheme=scheme(df["label"])))
    x = alt.X("data_size:Q", title=DATA_SIZE, scale=alt.Scale(type="log"),
              axis=si_axis("B", measured_ticks(df["data_size"], 6)))
    blocks = []
    for (bench, engine), part in df.groupby(["benchmark", "engine"], sort=True):
        base = alt.Chart(part).encode(x=x, color=color)
        line = base.mark_line(point=True).encode(
            y=alt.Y("y:Q", title=None, scale=alt.Scale(type="log"), axis=alt.Axis(format="~s")),
            tooltip=["label", "engine", "workload", "data_size", "op", "metric", "unit", "value", "n", "cv", "min",
                     "max"],
        )
        spread = base.mark_errorbar(ticks=True).encode(y=alt.Y("ymin:Q", title=None), y2="ymax:Q")
        blocks.append((spread + line).properties(width=170, height=120).facet(
            # rows in name order (an explicit sort list puts the data of one row under another's header
            # when the y scales are independent): throughput, then per op mean, p95, p99 latency
            row=alt.Row("figure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            column=alt.Column("workload:N", title=None),
        ).resolve_scale(y="independent").properties(title=f"{bench} / {engine}{note}"))
    return alt.vconcat(*blocks)


#: The latency table's unit (us, :func:`benchcast.report.tables.latency_over_size`) in seconds.
TIME_FACTOR = axis_unit("us")[0]


def latency_over_size(table: pd.DataFrame, labels=None) -> alt.Chart:
    """Mean latency against data size per engine (rows of blocks) and device (columns), one line per
    workload and op, on log axes; the memory the runs could use as a vertical line (where the
    source set one) and the held-out size's prediction from the smaller sizes as a hollow point
    (the paper's Figures 2 and 4: a knee where the data outgrows memory)."""
    if table.empty:
        return placeholder("No application latency measured at two data sizes or more.")
    df = table.copy()
    df["label"] = [device_label(labels, d) for d in df["device"]]
    df["short"] = [short_label(labels, d) for d in df["device"]]
    df["series"] = df["workload"] + " " + df["op"]
    df["latency"] = df["value"] * TIME_FACTOR  # the table's us, drawn in seconds (150µs, 2ms)
    width = max(110, min(170, 1060 // max(1, df["short"].nunique()) - 20))
    x = alt.X("data_size:Q", title=DATA_SIZE, scale=alt.Scale(type="log"),
              axis=si_axis("B", measured_ticks(df["data_size"], 4)))
    y = alt.Y("latency:Q", title="mean latency (s)", scale=alt.Scale(type="log"), axis=si_axis("s"))
    color = alt.Color("series:N", title="workload / op", legend=alt.Legend(orient="top", columns=4, labelLimit=0),
                      scale=alt.Scale(scheme=scheme(df["series"])))
    tip = ["label", "engine", "workload", "op", "data_size", "value", "kind", "memory_limit"]
    blocks = []
    for (bench, engine), part in df.groupby(["benchmark", "engine"], sort=True):
        base = alt.Chart(part).encode(x=x, color=color)
        line = base.transform_filter(alt.datum.kind == "measured").mark_line(point=True).encode(y=y, tooltip=tip)
        held = base.transform_filter(alt.datum.kind == "predicted").mark_point(filled=False, size=70).encode(
            y=y, tooltip=tip)
        limit = alt.Chart(part).transform_filter("isValid(datum.memory_limit)").transform_aggregate(
            memory_limit="max(memory_limit)", groupby=["label"]).mark_rule(color="gray", strokeDash=[4, 3]).encode(
            x="memory_limit:Q", tooltip=["memory_limit:Q"])
        blocks.append((limit + line + held).properties(width=width, height=130).facet(
            column=alt.Column("short:N", title=None, header=alt.Header(labelLimit=width))
        ).properties(title=f"{bench} / {engine}: latency over data size (dashed: memory limit; hollow: held-out "
                           "size predicted from the smaller ones)"))
    return alt.vconcat(*blocks)
