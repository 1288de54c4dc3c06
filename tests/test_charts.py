"""Tests of benchcast.report.charts: saving a chart (SVG, interactive HTML), the one-line error of a format
it cannot write, and the small tables an interactive page embeds."""
import pandas as pd
import pytest

from benchcast import BenchcastError
from benchcast.report import charts, paper_charts


def test_an_unknown_format_is_a_one_line_error(paper_analysis, tmp_path):
    with pytest.raises(BenchcastError, match="unsupported chart format 'gif'"):
        charts.save(paper_charts.heatmap_best_r2(paper_analysis["best"]), tmp_path / "x.gif")


def test_html_is_interactive_and_self_contained(paper_analysis, tmp_path):
    """The report's copy of a chart: the Vega-Lite spec (with its tooltips) and the vega-embed
    bundle inlined gzipped, nothing fetched; SVG and HTML written by one call."""
    import base64
    import gzip
    import json
    import re

    chart = paper_charts.heatmap_best_r2(paper_analysis["best"])
    charts.save(chart, tmp_path / "heat.svg", tmp_path / "heat.html")
    assert (tmp_path / "heat.svg").read_text().lstrip().startswith("<svg")
    page = (tmp_path / "heat.html").read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=", page)  # nothing loaded from elsewhere
    spec = json.loads(re.search(r"const spec = (.*);\n", page).group(1))
    assert spec == json.loads(json.dumps(chart.to_dict()))
    assert "tooltip" in json.dumps(spec)
    bundle = re.search(r'const bundle = "([A-Za-z0-9+/=]+)";', page).group(1)
    js = gzip.decompress(base64.b64decode(bundle)).decode()
    assert "window.vegaEmbed" in js and "vegaLite" in js


def test_html_spec_cannot_close_its_script(tmp_path):
    chart = charts.placeholder("a </script><script>alert(1)</script> label")
    assert "</script><script>alert" not in charts.to_html(chart)
    assert isinstance(chart.data, pd.DataFrame)


def test_compact_keeps_the_columns_asked_for_floats_to_4_digits():
    assert charts.compact(pd.DataFrame({"x": [1 / 3], "y": ["a"]}), ["x"]).to_dict("list") == {"x": [0.3333]}


def test_short_labels_are_unique_heads():
    labels = {"dram": "DRAM (tmpfs)", "fuse150": "delayed tmpfs (FUSE: read +150 us)",
              "fuse400": "delayed tmpfs (FUSE: read +400 us)", "disk": "project disk"}
    assert [charts.short_label(labels, d) for d in labels] == ["DRAM", "delayed tmpfs (fuse150)",
                                                               "delayed tmpfs (fuse400)", "project disk"]
    assert charts.short_label({}, "zram") == "zram" and charts.short_label(None, "zram") == "zram"


def test_axes_carry_their_unit_on_every_tick(tmp_path):
    """Sizes in KiB/MiB where binary, MB where decimal; times drawn in seconds with SI prefixes."""
    import altair as alt

    from report_util import svg

    assert charts.axis_unit("us") == (1e-6, "s") and charts.axis_unit("ops/s") == (1.0, "ops/s")
    sizes = [2e6, 16e6, 128 * 2**20, 2**30]
    df = pd.DataFrame({"size": sizes, "t": [150e-6, 2e-3, 10.0, 0.5]})
    chart = alt.Chart(df).mark_point().encode(
        x=alt.X("size:Q", scale=alt.Scale(type="log"), axis=charts.si_axis("B", charts.measured_ticks(df["size"]))),
        y=alt.Y("t:Q", scale=alt.Scale(type="log"), axis=charts.si_axis("s", [150e-6, 2e-3, 10.0])))
    text = svg(chart, tmp_path, "units")
    for label in ("2MB", "16MB", "128MiB", "1GiB", "150µs", "2ms", "10s"):
        assert f">{label}</text>" in text, label
    assert charts.measured_ticks(range(20), most=5) == [0.0, 4.0, 8.0, 12.0, 16.0]


@pytest.fixture
def made_bundles(monkeypatch, tmp_path):
    """vl-convert's bundle maker counted (a small stand-in script), the cache under tmp_path, and
    the per-process memo cleared before and after."""
    import vl_convert as vlc

    calls = []
    monkeypatch.setattr(vlc, "javascript_bundle", lambda vl_version: calls.append(vl_version) or "var made = 1;")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    charts._bundle.cache_clear()
    yield calls
    charts._bundle.cache_clear()


def unpacked(b64: str) -> str:
    import base64
    import gzip

    return gzip.decompress(base64.b64decode(b64)).decode()


def test_the_bundle_is_made_once_and_read_by_the_next_job(made_bundles, tmp_path):
    first = charts._bundle()
    kept = list((tmp_path / "cache" / "benchcast" / "vega").iterdir())
    assert len(made_bundles) == 1 and len(kept) == 1 and kept[0].read_text() == first
    charts._bundle.cache_clear()  # the next job: a new process
    assert charts._bundle() == first and len(made_bundles) == 1
    assert unpacked(first) == "var made = 1;"


def flipped(text: str) -> str:
    """One byte of the gzip stream's middle changed (its base64 text rewritten)."""
    import base64

    raw = bytearray(base64.b64decode(text))
    raw[len(raw) // 2] ^= 0xFF
    return base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize("damage", [lambda t: t[:-8], flipped, lambda t: ""], ids=["cut short", "a byte changed", "empty"])
def test_a_damaged_cached_bundle_is_made_again(made_bundles, tmp_path, damage):
    charts._bundle()
    (kept,) = (tmp_path / "cache" / "benchcast" / "vega").iterdir()
    kept.write_text(damage(kept.read_text()))
    charts._bundle.cache_clear()
    assert unpacked(charts._bundle()) == "var made = 1;" and len(made_bundles) == 2
    assert unpacked(kept.read_text()) == "var made = 1;"
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no temporary copy left


def test_a_cache_that_cannot_be_written_still_gives_the_page(made_bundles, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a file where the folder would go
    assert "const bundle" in charts.to_html(charts.placeholder("x")) and len(made_bundles) == 1
