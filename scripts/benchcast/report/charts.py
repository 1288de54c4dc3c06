"""Altair charts of the report: saving one as SVG or PNG through vl-convert, as interactive HTML or as
its Vega-Lite spec, and what every chart module shares (the measured / hypothetical kinds, device
labels, a series' title, a placeholder when there is nothing to draw, the embedded table kept small)."""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import html
import json
import os
import zlib
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from .. import BenchcastError
from ..core import host, protect
from ..core.units import size_label


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
    writes (vl-convert makes it offline). Making it costs a chart job about 1.5 s of CPU, the same
    bytes every time for one vl-convert and Vega-Lite version: it is kept per version pair under
    :func:`benchcast.core.host.cache_dir` and read from there (a copy that does not unpack is made
    again; a new one replaces the file whole, so a concurrent job reads the old one or the new)."""
    import vl_convert as vlc

    version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])  # vl-convert names v6.4.1 "v6_4"
    path = host.cache_dir("vega") / f"vega-embed-vl{version}-vlc{vlc.__version__}.js.gz.b64"
    try:
        cached = path.read_text()
        if gzip.decompress(base64.b64decode(cached, validate=True)):
            return cached
    except (OSError, ValueError, EOFError, zlib.error):  # none kept, or not whole: made again
        pass
    js = vlc.javascript_bundle(vl_version=version).encode()
    made = base64.b64encode(gzip.compress(js, mtime=0)).decode()
    _keep(path, made)
    return made


def _keep(path: Path, text: str) -> None:
    """``text`` written to ``path`` whole (this process's sibling renamed over it); a cache that
    cannot be written is left alone: the chart is made all the same."""
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(text)
        protect.commit_as(part, path)
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)


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


def device_label(labels: dict, device: str) -> str:
    """The study's label of ``device`` (``report.labels``), else its id."""
    return labels.get(device, device) if labels else device


def short_label(labels: dict, device: str) -> str:
    """``device``'s short form, for panel headers and text beside points (the full label stays in
    legends and tooltips): its label up to `` (`` ("DRAM", "zram", "project disk"), with the
    device's id in parentheses where two of the study's labels share that head ("delayed tmpfs
    (fuse150)")."""
    heads = {d: str(lab).split(" (")[0].strip() or d for d, lab in (labels or {}).items()}
    head = heads.get(device, str(device))
    if list(heads.values()).count(head) > 1 and head != device:
        return f"{head} ({device})"
    return head


#: Each axis unit a record's unit is drawn in (the values multiplied by the factor): times in
#: seconds, with SI prefixes on the ticks (150µs, 2ms, 10s).
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def axis_unit(unit: str) -> tuple[float, str]:
    """How an axis draws values recorded in ``unit``: the factor that takes them to the drawn unit,
    and that unit (seconds for every time unit; else ``unit`` itself)."""
    unit = str(unit)
    return (TIME_UNITS[unit], "s") if unit in TIME_UNITS else (1.0, unit)


def si_axis(unit: str, ticks=None, **kw) -> alt.Axis:
    """An axis whose tick labels carry SI prefixes and ``unit`` (150µs, 16MB, 10k IOPS): short
    labels that do not collide, read without counting zeros; ``ticks`` its tick values where given
    (the sizes measured), else Vega's (a log axis labels some of its ticks: the others stay blank)."""
    sep = " " if unit and unit[0].isalpha() and len(unit) > 2 else ""
    suffix = f"{sep}{unit}".replace("'", "\\'")
    if ticks is not None:
        kw["values"] = [float(t) for t in ticks]
    decimal = label = f"format(datum.value, '.3~s') + '{suffix}'"
    if unit == "B":  # a binary size in binary units (fio's 64M, an out-of-core 16 MiB), a round decimal one
        for name, mult in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)):  # (16 MB) decimal; GiB first
            label = (f"datum.value >= {mult} && datum.value % {mult} == 0 ? "
                     f"format(datum.value / {mult}, '~r') + '{name}' : ({label})")
        label = f"datum.value % 1000 == 0 ? ({decimal}) : ({label})"
    return alt.Axis(labelExpr=f"datum.label === '' ? '' : ({label})", labelOverlap=True, **kw)


def measured_ticks(values, most: int = 8) -> list[float]:
    """Axis ticks at the measured values (data sizes, block sizes, queue depths), at most ``most``
    (every k-th, the smallest kept)."""
    vals = sorted(float(v) for v in pd.Series(values).dropna().unique())
    step = max(1, -(-len(vals) // most))
    return vals[::step]


#: A data size axis's title: its ticks read 2MB, 16GB (:func:`si_axis` with unit B).
DATA_SIZE = "data size (bytes)"


def series_title(focus: dict, size=None) -> str:
    """A chart's title for the focus series: its keys joined by ' / ', and ' at <size>' where given."""
    parts = [focus.get("engine"), focus.get("workload"), focus.get("op"), focus.get("metric")]
    t = " / ".join(str(p) for p in parts if p)
    return f"{t} at {size_label(size, decimal=True)}" if size is not None else t


def scheme(labels: pd.Series) -> str:
    """A colour scheme with a colour of its own for every device (up to 20)."""
    return "tableau20" if labels.nunique() > 10 else "tableau10"


#: At most this many points per chart (one line = device x rw x op x metric x queue depth): a study
#: of thousands of cells keeps its interactive page small; the table keeps every figure.
MAX_FIGURE_POINTS = 3000
