"""The device figures the report shows: latency (mean and tail), IOPS and bandwidth by block size
and by queue depth, with the spread of the repeats."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .. import BenchcastError
from .charts import MAX_FIGURE_POINTS, compact, device_label, measured_ticks, scheme
from ..features import FEATURE_BENCHMARK
from ..core.units import canonical_factors


#: The device figures the report draws: mean and tail latency (fio's total latency mean; completion
#: latency percentiles, or total latency percentiles of a sync op), IOPS and bandwidth.
DEVICE_METRICS = ("lat_mean", "clat_p99", "clat_p99.9", "lat_p99", "lat_p99.9", "iops", "bw")


#: Panel (column) of each metric: latencies share one, drawn in seconds so the axis reads 150µ, 2m
#: (names in the columns' order: Vega-Lite misplaces panels sorted otherwise under independent scales).
FIGURE_GROUPS = {"iops": "rate (IOPS)", "bw": "throughput (B/s)"}


LATENCY = "latency (s)"


#: The statistic a line shows (its dash): fio's completion-latency percentiles (clat_*) or, of a
#: sync op, total-latency percentiles (lat_*); IOPS and bandwidth are means.
STATISTICS = {"clat_p50": "p50", "lat_p50": "p50", "clat_p99": "p99", "lat_p99": "p99", "clat_p99.9": "p99.9",
              "lat_p99.9": "p99.9"}


DASHES = {"mean": [1, 0], "p50": [8, 2, 2, 2], "p99": [6, 3], "p99.9": [2, 2]}


def device_figures_table(agg: pd.DataFrame, benchmark: str = FEATURE_BENCHMARK, metrics=DEVICE_METRICS) -> pd.DataFrame:
    """The device figures (trimmed means with their repeat spread), one row per device x rw x bs x
    iodepth x numjobs (threads: their product) x op x metric: what the report shows of the devices."""
    df = agg[(agg["benchmark"] == benchmark) & agg["metric"].isin(list(metrics))]
    cols = ["device", "engine", "workload", "block_size", "threads", "iodepth", "numjobs", "op", "metric", "unit",
            "value", "n", "k", "std", "cv", "min", "max"]
    order = [c for c in ("metric", "workload", "device", "block_size", "threads", "iodepth", "numjobs") if c in df]
    return df[[c for c in cols if c in df.columns]].sort_values(order, kind="mergesort").reset_index(drop=True)


def _cap_lines(df: pd.DataFrame, line: list, cap: int) -> tuple[pd.DataFrame, int]:
    """At most ``cap`` rows, whole lines kept (every ``k``-th line, in a stable order); the number of
    lines left out."""
    if len(df) <= cap:
        return df.copy(), 0
    ids = df.groupby(line, sort=True).ngroup()
    n = int(ids.max()) + 1
    keep = max(1, int(n * cap / len(df)))
    step = n / keep
    chosen = set(int(i * step) for i in range(keep))
    return df[ids.isin(chosen)].copy(), n - len(chosen)


#: What a device-figures chart embeds of each point (drawn or in its tooltip).
FIGURE_COLUMNS = ["label", "engine", "workload", "op", "bs_kib", "threads", "iodepth", "numjobs", "metric", "value",
                  "unit", "n", "cv", "y", "ymin", "ymax", "group", "statistic", "line"]


def _figure_panels(df: pd.DataFrame, x: alt.X, row: str, title: str, shape: str | None = None) -> alt.FacetChart:
    """One row of panels per rw/op (``row``), one column per figure group (latency, IOPS,
    bandwidth); latency lines: solid mean, dashed p99, dotted p99.9; points shaped by ``shape``
    (a column: numjobs, one line each) where given."""
    # SI prefixes on the axis (10G, 150µ: not 10,000,000,000; the unit is in the column's title)
    y = alt.Y("y:Q", title=None, scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    stats = [s for s in DASHES if s in set(df["statistic"])]
    base = alt.Chart(df).encode(
        x=x,
        color=alt.Color("label:N", title="device", legend=alt.Legend(labelLimit=0, orient="top", columns=3),
                        scale=alt.Scale(scheme=scheme(df["label"]))),
        detail="line:N",
    )
    # the dashes on a line layer of their own: its legend draws each dash (points on the same layer
    # would make the legend's symbols filled points, the dash invisible)
    line = base.mark_line().encode(
        y=y, strokeDash=alt.StrokeDash("statistic:N", title="statistic", sort=stats,
                                       scale=alt.Scale(domain=stats, range=[DASHES[s] for s in stats]),
                                       legend=alt.Legend(symbolType="stroke", symbolStrokeColor="black",
                                                         symbolStrokeWidth=1.5, symbolSize=300)))
    points = base.mark_point(filled=True, size=20).encode(
        y=y, tooltip=["label", "engine", "workload", "op", "bs_kib", "threads", "iodepth", "numjobs", "metric", "value",
                      "unit", "n", "cv"])
    if shape:
        points = points.encode(shape=alt.Shape(f"{shape}:N", title=shape))
    band = base.mark_errorbar(ticks=True).encode(y=alt.Y("ymin:Q", title=None), y2="ymax:Q")
    return (band + line + points).properties(width=240, height=170).facet(
        row=alt.Row(f"{row}:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        column=alt.Column("group:N", title=None),
    ).resolve_scale(x="independent", y="independent").properties(title=title)  # every panel its own ticks


def device_figures(table: pd.DataFrame, labels=None, max_points: int = MAX_FIGURE_POINTS) -> alt.Chart:
    """Latency (mean, p99, p99.9 where recorded), IOPS and bandwidth by block size per device (at the
    lowest queue depth each device was measured at), with the spread of the repeats (min-max); where
    iodepth or numjobs varies, also against iodepth per block size, one line per numjobs (its points
    shaped by it). Latencies are drawn
    in seconds (SI prefixes: 150µ), device labels in full; at most ``max_points`` points per chart."""
    if table.empty:
        raise BenchcastError("device figures: no fio records in the study")
    df = table.copy()
    df["label"] = [device_label(labels, d) for d in df["device"]]
    if "iodepth" not in df:  # a table written before iodepth and numjobs were columns
        df = df.assign(iodepth=df["threads"], numjobs=1)
    df["bs_kib"] = df["block_size"] / 1024
    # latencies in seconds: the records' unit to the canonical us (benchcast.core.units), then to s
    lat = ~df["metric"].isin(list(FIGURE_GROUPS))
    to_us = canonical_factors(set(zip(df.loc[lat, "metric"], df.loc[lat, "unit"])))
    scale = pd.Series([to_us.get((m, u), (1.0,))[0] * 1e-6 if is_lat else 1.0
                       for m, u, is_lat in zip(df["metric"], df["unit"], lat)], index=df.index)
    for col, src in (("y", "value"), ("ymin", "min"), ("ymax", "max")):
        df[col] = (df[src] if src in df else df["value"]) * scale
    df["group"] = df["metric"].map(FIGURE_GROUPS).fillna(LATENCY)
    df["statistic"] = df["metric"].map(STATISTICS).fillna("mean")
    df["rw"] = df["workload"] + " " + df["op"]
    if df["engine"].nunique() > 1:
        df["rw"] += " (" + df["engine"] + ")"
    df["line"] = df["device"] + "|" + df["engine"] + "|" + df["workload"] + "|" + df["op"] + "|" + df["metric"]
    lowest = df.groupby(["device", "engine", "workload", "op", "metric"])["threads"].transform("min")
    bs = df[df["threads"] == lowest]
    bs, left = _cap_lines(bs, ["line"], max_points)
    bs["line"] = bs.groupby("line", sort=False).ngroup()  # a number per line: shorter than its name
    bs = compact(bs, FIGURE_COLUMNS + ["rw"])
    title = "by block size" + (f" ({left} lines of {left + bs['line'].nunique()} not drawn)" if left else "")
    by_bs = _figure_panels(bs, alt.X("bs_kib:Q", title="block size (KiB)", scale=alt.Scale(type="log", base=2),
                                     axis=alt.Axis(values=measured_ticks(bs["bs_kib"], 12))), "rw", title)
    q = df[df.groupby(["device", "engine", "workload", "block_size", "op", "metric"])["threads"]
           .transform("nunique") > 1].copy()
    q["line"] = q["line"] + "|j" + q["numjobs"].astype(str)
    if q.empty:
        return by_bs
    q["rw_bs"] = q["rw"] + ", " + q["bs_kib"].map(lambda k: f"{k:g} KiB")
    q["line"] = q["line"] + "|" + q["bs_kib"].astype(str)
    # too many points: every k-th block size (the smallest and largest kept), whole panels each
    sizes = np.sort(q["block_size"].unique())
    fit = max(2, int(max_points / (len(q) / len(sizes))))  # block sizes whose points fit
    note = ""
    if len(q) > max_points and len(sizes) > fit:
        keep = set(sizes[np.unique(np.linspace(0, len(sizes) - 1, fit).round().astype(int))])
        q = q[q["block_size"].isin(keep)]
        note = f"{len(keep)} of {len(sizes)} block sizes"
    q, left = _cap_lines(q, ["line"], max_points)
    q["line"] = q.groupby("line", sort=False).ngroup()
    q = compact(q, FIGURE_COLUMNS + ["rw_bs"])
    if left:
        note += (", " if note else "") + f"{left} lines of {left + q['line'].nunique()} left out"
    title = "by queue depth" + (f" ({note})" if note else "")
    x = alt.X("iodepth:Q", title="queue depth (requests in flight: fio iodepth; a line per numjobs)",
              scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=measured_ticks(q["iodepth"], 12)))
    by_qd = _figure_panels(q, x, "rw_bs", title, shape="numjobs" if q["numjobs"].nunique() > 1 else None)
    return alt.vconcat(by_bs, by_qd)
