"""Altair charts of the report, saved as SVG or PNG through vl-convert, and as interactive HTML."""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from . import BenchcastError
from . import tables
from .features import FEATURE_BENCHMARK
from .tables import APP_COLUMNS, focus_size, select
from .units import canonical_factors, size_label

MEASURED = "measured"
TARGET = "hypothetical"


FORMATS = ("svg", "png", "html", "json")

#: One chart's interactive page. The Vega, Vega-Lite and vega-embed bundle is inlined gzipped and
#: base64-encoded (about 250 kB instead of 900 kB: the report embeds every chart's page) and
#: unpacked by the browser (DecompressionStream); nothing is fetched. When the chart is drawn (or
#: fails) the body's ``data-chart`` says so: ``rendered`` or ``error: <message>``.
HTML = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>body {{ font-family: sans-serif; margin: 8px; }} #vis.vega-embed {{ width: 100%; }}</style>
</head>
<body data-chart="loading">
<div id="vis"></div>
<script>
(async () => {{
  // inside the function: the bundle's top-level names are global, these must not meet them
  const spec = {spec};
  const bundle = "{bundle}";
  const zipped = Uint8Array.from(atob(bundle), (c) => c.charCodeAt(0));
  const stream = new Blob([zipped]).stream().pipeThrough(new DecompressionStream("gzip"));
  const script = document.createElement("script");
  script.text = await new Response(stream).text();
  document.head.appendChild(script);
  await vegaEmbed("#vis", spec, {{mode: "vega-lite"}});
  document.body.dataset.chart = "rendered";
}})().catch((err) => {{
  document.body.dataset.chart = "error: " + err;
  console.error(err);
}});
</script>
</body>
</html>
"""


@functools.cache
def _bundle() -> str:
    """The gzipped, base64-encoded JavaScript bundle of vega-embed with the Vega-Lite version Altair
    writes (vl-convert makes it offline)."""
    import vl_convert as vlc

    version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])  # vl-convert names v6.4.1 "v6_4"
    js = vlc.javascript_bundle(vl_version=version).encode()
    return base64.b64encode(gzip.compress(js, mtime=0)).decode()


def to_html(chart: alt.TopLevelMixin, title: str = "benchcast chart") -> str:
    """A self-contained interactive page of ``chart`` (tooltips, zoom, legends): no network."""
    spec = json.dumps(chart.to_dict(), separators=(",", ":")).replace("</", "<\\/")
    return HTML.format(title=html.escape(title), spec=spec, bundle=_bundle())


def save(chart: alt.TopLevelMixin, *paths) -> None:
    """Save ``chart`` once per path, the format taken from the suffix: SVG or PNG for papers, HTML
    for the report (:func:`to_html`), JSON for the Vega-Lite spec."""
    for path in map(Path, paths):
        fmt = path.suffix.lstrip(".").lower()
        if fmt not in FORMATS:
            raise BenchcastError(f"{path}: unsupported chart format {fmt!r} ({', '.join(FORMATS)})")
    for path in map(Path, paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        fmt = path.suffix.lstrip(".").lower()
        if fmt == "html":
            path.write_text(to_html(chart, path.stem))
        else:
            chart.save(str(path), format=fmt)


def compact(df: pd.DataFrame, columns) -> pd.DataFrame:
    """Only ``columns`` (those present) of ``df``, floats to 4 significant digits: what an
    interactive page embeds of a large table (a chart shows no more; the CSV beside it has it all)."""
    out = df[[c for c in dict.fromkeys(columns) if c in df.columns]].copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [float(f"{v:.4g}") if np.isfinite(v) else v for v in out[c].to_numpy()]
    return out


def placeholder(message: str) -> alt.Chart:
    """A chart that says why there is nothing to draw (rather than failing the report)."""
    return alt.Chart(pd.DataFrame({"text": [message]})).mark_text(fontSize=13, align="left").encode(
        text="text:N"
    ).properties(width=520, height=40)


def _label(labels: dict, device: str) -> str:
    return labels.get(device, device) if labels else device


def _series_title(focus: dict, size=None) -> str:
    parts = [focus.get("engine"), focus.get("workload"), focus.get("op"), focus.get("metric")]
    t = " / ".join(str(p) for p in parts if p)
    return f"{t} at {size_label(size, decimal=True)}" if size is not None else t


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
    allp["label"] = [_label(labels, d) for d in allp["device"]]
    lo, hi = float(allp["x"].min()), float(allp["x"].max())
    xline = np.linspace(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), 50)
    line = pd.DataFrame({"x": xline, "y": fit["a"] * xline + fit["b"]})
    xt = f"{fit['feature']} ({fit['feature_unit']})"
    yt = f"{focus.get('op', '')} {focus.get('metric', '')} ({fit['unit']})"
    base_line = alt.Chart(line).mark_line(color="gray", strokeDash=[4, 3]).encode(
        x=alt.X("x:Q", title=xt), y=alt.Y("y:Q", title=yt)
    )
    dots = alt.Chart(allp).mark_point(size=120, filled=True).encode(
        x="x:Q",
        y="y:Q",
        color=alt.Color("kind:N", title=None, scale=alt.Scale(domain=[MEASURED, TARGET], range=["#4c78a8", "#e45756"])),
        shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=[MEASURED, TARGET], range=["circle", "diamond"])),
        tooltip=["label", "x", "y", "kind"],
    )
    text = alt.Chart(allp).mark_text(align="left", dx=8, dy=-6, fontSize=11).encode(x="x:Q", y="y:Q", text="label:N")
    title = f"{_series_title(focus, size)}: Y = {fit['a']:.4g} X + {fit['b']:.4g}, R² = {fit['r2']:.4f}"
    return (base_line + dots + text).interactive().properties(width=480, height=320, title=title)


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
    df["label"] = [_label(labels, d) for d in df["device"]]
    enc = dict(
        x=alt.X("gb:Q", title="data size (GB)"),
        y=alt.Y("value:Q", title=f"{focus.get('op', '')} {focus.get('metric', '')}"),
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
    return (lines + ext).interactive().properties(width=520, height=340, title=_series_title(focus) + " over data size")


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
#: At most this many points per chart (one line = device x rw x op x metric x queue depth): a study
#: of thousands of cells keeps its interactive page small; the table keeps every figure.
MAX_FIGURE_POINTS = 3000


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


def _scheme(labels: pd.Series) -> str:
    """A colour scheme with a colour of its own for every device (up to 20)."""
    return "tableau20" if labels.nunique() > 10 else "tableau10"


def _ticks(values: pd.Series, most: int = 12) -> list:
    """Axis ticks at the measured values (block sizes, queue depths), at most ``most`` of them."""
    vals = sorted(float(v) for v in values.unique())
    step = max(1, -(-len(vals) // most))
    return vals[::step]


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
                        scale=alt.Scale(scheme=_scheme(df["label"]))),
        strokeDash=alt.StrokeDash("statistic:N", title="statistic", sort=stats,
                                  scale=alt.Scale(domain=stats, range=[DASHES[s] for s in stats]),
                                  legend=alt.Legend(symbolType="stroke")),
        detail="line:N",
    )
    if shape:
        base = base.encode(shape=alt.Shape(f"{shape}:N", title=shape))
    line = base.mark_line(point=True).encode(
        y=y, tooltip=["label", "engine", "workload", "op", "bs_kib", "threads", "iodepth", "numjobs", "metric", "value",
                      "unit", "n", "cv"])
    band = base.mark_errorbar(ticks=True).encode(y=alt.Y("ymin:Q", title=None), y2="ymax:Q")
    return (band + line).properties(width=240, height=170).facet(
        row=alt.Row(f"{row}:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        column=alt.Column("group:N", title=None),
    ).resolve_scale(y="independent").properties(title=title)


def device_figures(table: pd.DataFrame, labels=None, max_points: int = MAX_FIGURE_POINTS) -> alt.Chart:
    """Latency (mean, p99, p99.9 where recorded), IOPS and bandwidth by block size per device (at the
    lowest queue depth each device was measured at), with the spread of the repeats (min-max); where
    iodepth or numjobs varies, also against iodepth per block size, one line per numjobs (its points
    shaped by it). Latencies are drawn
    in seconds (SI prefixes: 150µ), device labels in full; at most ``max_points`` points per chart."""
    if table.empty:
        raise BenchcastError("device figures: no fio records in the study")
    df = table.copy()
    df["label"] = [_label(labels, d) for d in df["device"]]
    if "iodepth" not in df:  # a table written before iodepth and numjobs were columns
        df = df.assign(iodepth=df["threads"], numjobs=1)
    df["bs_kib"] = df["block_size"] / 1024
    # latencies in seconds: the records' unit to the canonical us (benchcast.units), then to s
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
                                     axis=alt.Axis(values=_ticks(bs["bs_kib"]))), "rw", title)
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
    by_qd = _figure_panels(q, alt.X("iodepth:Q", title="queue depth (fio iodepth; a line per numjobs)",
                                    scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=_ticks(q["iodepth"]))),
                           "rw_bs", title, shape="numjobs" if q["numjobs"].nunique() > 1 else None)
    return alt.vconcat(by_bs, by_qd)


def heldout(chosen: pd.DataFrame, labels=None) -> alt.Chart:
    """Predicted vs measured result of each held-out device, per model kind, with the prediction
    intervals where the fit had residual degrees of freedom; the diagonal is a perfect prediction."""
    if chosen.empty:
        return placeholder("No held-out predictions: too few devices to leave one out.")
    # only what is drawn or shown (the interactive copy carries its data: thousands of folds)
    df = chosen[["kind", "series", "op", "features", "held_out", "truth", "prediction", "lower", "upper",
                 "pct_error"]].copy()
    df["device"] = [_label(labels, d) for d in df.pop("held_out")]
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
            f"No prediction for the hypothetical devices of {_series_title(focus)}: no model was "
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
    return (bars + pts).properties(width=260, height=220, title=_series_title(focus)).facet(
        column=alt.Column("model:N", title=None)
    )


def ooc_relative(table: pd.DataFrame, labels=None) -> alt.Chart:
    """Pass time relative to the in-memory run against working set / memory limit, per device
    (columns) and kernel (rows), one line per mode (the paper's Figures 5 and 6)."""
    if table.empty:
        return placeholder("no out-of-core runs with an in-memory baseline")
    df = table.dropna(subset=["relative"]).copy()
    df["label"] = [_label(labels, d) for d in df["device"]]
    base = alt.Chart(df).encode(
        x=alt.X("ratio:Q", title="working set / memory limit", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("relative:Q", title="time of a pass / in memory", scale=alt.Scale(type="log")),
        color=alt.Color("engine:N", title="mode"),
        tooltip=["label", "engine", "workload", "data_size", "ratio", "value", "memory_value", "relative", "cv"],
    )
    return (base.mark_line(point=True)).properties(width=200, height=140).facet(
        column=alt.Column("label:N", title=None), row=alt.Row("workload:N", title=None)
    )


def noise(table: pd.DataFrame, threshold: float, repeated: int, labels=None,
          max_points: int = MAX_FIGURE_POINTS) -> alt.Chart:
    """The noisy cells (:func:`benchcast.tables.noisy_cells`): the CV of each, per device, one row
    per benchmark, the threshold marked; ``repeated``: how many cells were run more than once. At
    most ``max_points`` cells are drawn, the noisiest (the table has them all)."""
    title = f"{len(table)} of {repeated} cells run more than once spread above CV {threshold:.0%}"
    if table.empty:
        return placeholder(title + ".")
    if len(table) > max_points:
        title += f" (the {max_points} noisiest drawn)"
    df = compact(table.sort_values("cv", ascending=False, kind="mergesort").head(max_points), tables.NOISE_COLUMNS)
    df["label"] = [_label(labels, d) for d in df["device"]]
    df["cell"] = (df["engine"].astype(str) + " " + df["workload"].astype(str) + " bs " + df["block_size"].astype(str)
                  + " x" + df["threads"].astype(str) + " size " + df["data_size"].astype(str))
    base = alt.Chart(df)
    ticks = base.mark_tick(thickness=2, size=14).encode(
        x=alt.X("cv:Q", title="coefficient of variation of the repeats", axis=alt.Axis(format="%")),
        y=alt.Y("label:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("metric:N", title="metric", legend=alt.Legend(columns=2)),
        tooltip=["label", "benchmark", "cell", "op", "metric", "unit", "value", "n", "cv", "min", "max"],
    )
    rule = base.transform_aggregate(cells="count()", groupby=["benchmark"]).mark_rule(
        color="gray", strokeDash=[4, 3]).encode(x=alt.datum(threshold))
    return (rule + ticks).properties(width=480).facet(
        row=alt.Row("benchmark:N", title=None)
    ).resolve_scale(y="independent").properties(title=title)


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
    """The application results (:func:`benchcast.tables.app_overview`), one block per benchmark and
    engine: a panel per op and metric (rows) and workload (columns), the result over data size per
    device on log axes, the repeats' fastest-slowest run as a bar. Beyond ``max_points`` points in
    all, every k-th data size is drawn (the table has them all)."""
    if table.empty:
        return placeholder("No application results in this study (fio figures only).")
    df, note = _thin_sizes(table, max_points)
    df = compact(df, APP_COLUMNS)
    df["label"] = [_label(labels, d) for d in df["device"]]
    df["figure"] = df["op"] + " " + df["metric"] + " (" + df["unit"] + ")"
    # the legend on top: the panels are wide, a legend at the right leaves the view of a narrow window
    color = alt.Color("label:N", title="device", legend=alt.Legend(labelLimit=0, orient="top", columns=3),
                      scale=alt.Scale(scheme=_scheme(df["label"])))
    x = alt.X("data_size:Q", title="data size (B)", scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    blocks = []
    for (bench, engine), part in df.groupby(["benchmark", "engine"], sort=True):
        base = alt.Chart(part).encode(x=x, color=color)
        line = base.mark_line(point=True).encode(
            y=alt.Y("value:Q", title=None, scale=alt.Scale(type="log"), axis=alt.Axis(format="~s")),
            tooltip=["label", "engine", "workload", "data_size", "op", "metric", "unit", "value", "n", "cv", "min",
                     "max"],
        )
        spread = base.mark_errorbar(ticks=True).encode(y=alt.Y("min:Q", title=None), y2="max:Q")
        blocks.append((spread + line).properties(width=170, height=120).facet(
            # rows in name order (an explicit sort list puts the data of one row under another's header
            # when the y scales are independent): throughput, then per op mean, p95, p99 latency
            row=alt.Row("figure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            column=alt.Column("workload:N", title=None),
        ).resolve_scale(y="independent").properties(title=f"{bench} / {engine}{note}"))
    return alt.vconcat(*blocks)


def latency_over_size(table: pd.DataFrame, labels=None) -> alt.Chart:
    """Mean latency against data size per engine (rows of blocks) and device (columns), one line per
    workload and op, on log axes; the memory the runs could use as a vertical line (where the
    source set one) and the held-out size's prediction from the smaller sizes as a hollow point
    (the paper's Figures 2 and 4: a knee where the data outgrows memory)."""
    if table.empty:
        return placeholder("No application latency measured at two data sizes or more.")
    df = table.copy()
    df["label"] = [_label(labels, d) for d in df["device"]]
    df["series"] = df["workload"] + " " + df["op"]
    x = alt.X("data_size:Q", title="data size (B)", scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    y = alt.Y("value:Q", title="mean latency (us)", scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    color = alt.Color("series:N", title="workload / op", legend=alt.Legend(orient="top", columns=4, labelLimit=0))
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
        blocks.append((limit + line + held).properties(width=170, height=130).facet(
            column=alt.Column("label:N", title=None, header=alt.Header(labelLimit=0))
        ).properties(title=f"{bench} / {engine}: latency over data size (dashed: memory limit)"))
    return alt.vconcat(*blocks)


def _size(nbytes) -> str:
    """A cell's size as the sources write it: decimal where it is a round decimal size (a YCSB data
    set of 16MB), else binary as fio writes it (64K, 64M), else bytes."""
    n = int(nbytes)
    for label in (size_label(n, decimal=True), size_label(n)):
        if label != str(n):
            return label
    return f"{n}B"


def compare(cells: pd.DataFrame, names: tuple[str, str], max_cells: int, labels=None) -> alt.Chart:
    """Per cell (:func:`benchcast.tables.compare_cells`), the ratio b / a of the trimmed means on a
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
    df["label"] = [_label(labels, d) for d in df["device"]]
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
    x = alt.X("ratio:Q", title=f"{b} / {a} (trimmed means; 1 = unchanged)", scale=scale)
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
