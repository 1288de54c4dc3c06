"""Tests of benchcast.charts: saving a chart (SVG, interactive HTML), the one-line error of a format
it cannot write, and the small tables an interactive page embeds."""
import pandas as pd
import pytest

from benchcast import BenchcastError, charts, paper_charts


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
