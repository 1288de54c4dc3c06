"""Tests of benchcast.charts: every chart of the report drawn from the paper study, saved as SVG."""
import json

import pandas as pd
import pytest

from benchcast import BenchcastError, charts

FOCUS = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write", "metric": "lat_mean"}
LABELS = {"dram": "DRAM (tmpfs)"}


def svg(chart, tmp_path, name):
    path = tmp_path / f"{name}.svg"
    charts.save(chart, path)
    text = path.read_text()
    assert text.lstrip().startswith("<svg")
    return text


def test_fig3_scatter_has_devices_targets_and_the_fitted_line(paper_analysis, tmp_path):
    a = paper_analysis
    text = svg(charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB", LABELS),
               tmp_path, "fig3")
    assert "DRAM (tmpfs)" in text and "S-SCM" in text and "R² = 0.9999" in text
    assert "randwrite_64K_lat_mean" in text  # the best feature is the X axis


def test_fig4_heatmap_and_device_figures(paper_analysis, tmp_path):
    a = paper_analysis
    assert "M-SCM" in svg(charts.fig4_data_size(a["agg"], a["predictions"], a["points"], FOCUS), tmp_path, "fig4")
    assert "best R²" in svg(charts.heatmap_best_r2(a["best"]), tmp_path, "heat")
    table = charts.device_figures_table(a["agg"])
    assert set(table["metric"]) == {"lat_mean", "bw"} and len(table) == 3 * 2 * 5 * 2
    assert "nand_flash" in svg(charts.device_figures(table), tmp_path, "figs")


def test_validity_charts_and_placeholders(paper_analysis, tmp_path):
    a = paper_analysis
    assert "held-out device" in svg(charts.heldout(a["chosen_folds"], LABELS), tmp_path, "heldout")
    assert "hypothetical device" in svg(charts.target_intervals(a["target_predictions"], FOCUS), tmp_path, "ti")
    empty = svg(charts.heldout(a["chosen_folds"].iloc[:0]), tmp_path, "empty")
    assert "too few devices" in empty


def test_bad_focus_and_format_are_one_line_errors(paper_analysis, tmp_path):
    a = paper_analysis
    with pytest.raises(BenchcastError, match="report.focus_data_size: 16GB was not measured"):
        charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], {**FOCUS, "engine": "x"},
                            "16GB")
    with pytest.raises(BenchcastError, match="unsupported chart format 'gif'"):
        charts.save(charts.heatmap_best_r2(a["best"]), tmp_path / "x.gif")


def test_heldout_chart_keeps_its_log_axes_on_the_data(paper_analysis):
    """A prediction at or below zero (and an interval bound below zero) must not stretch the log
    axes down to 1e-9: it is left out and counted in the title; bounds are clipped to the axes."""
    chosen = paper_analysis["chosen_folds"].copy()
    chosen.loc[chosen.index[0], "prediction"] = -5.0
    chosen.loc[chosen.index[1], "lower"] = -100.0
    spec = charts.heldout(chosen).to_dict()
    layers = spec["spec"]["layer"]
    domains = [lay["encoding"][axis]["scale"]["domain"] for lay in layers for axis in ("x", "y")
               if "scale" in lay["encoding"].get(axis, {})]
    positive = chosen[(chosen["truth"] > 0) & (chosen["prediction"] > 0)]
    lowest = min(positive["truth"].min(), positive["prediction"].min())
    assert domains and all(d[0] == pytest.approx(0.8 * lowest) for d in domains)
    assert "1 at or below zero not drawn" in spec["title"]


def test_html_is_interactive_and_self_contained(paper_analysis, tmp_path):
    """The report's copy of a chart: the Vega-Lite spec (with its tooltips) and the vega-embed
    bundle inlined gzipped, nothing fetched; SVG and HTML written by one call."""
    import base64
    import gzip
    import json
    import re

    chart = charts.heatmap_best_r2(paper_analysis["best"])
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
    import pandas as pd

    chart = charts.placeholder("a </script><script>alert(1)</script> label")
    assert "</script><script>alert" not in charts.to_html(chart)
    assert isinstance(chart.data, pd.DataFrame)


def test_noise_chart_marks_each_noisy_cell_and_counts_them(tmp_path):
    from benchcast import tables
    from report_util import repeated_agg

    agg = repeated_agg()
    noisy = tables.noisy_cells(agg, 0.1)
    chart = charts.noise(noisy, 0.1, len(agg), {"dram": "DRAM (tmpfs)"})
    spec = chart.to_dict()
    assert spec["title"] == f"{len(noisy)} of {len(agg)} cells run more than once spread above CV 10%"
    assert "DRAM (tmpfs)" in svg(chart, tmp_path, "noise")
    quiet = svg(charts.noise(noisy.iloc[:0], 0.6, len(agg)), tmp_path, "quiet")
    assert f"0 of {len(agg)} cells" in quiet


def test_app_overview_draws_each_engine_metric_and_spread(tmp_path):
    from benchcast import tables
    from report_util import repeated_agg

    table = tables.app_overview(repeated_agg())
    chart = charts.app_overview(table, {"dram": "DRAM (tmpfs)"})
    spec = chart.to_dict()
    assert [b["title"] for b in spec["vconcat"]] == ["ycsb / mysql"]
    marks = [lay["mark"]["type"] for lay in spec["vconcat"][0]["spec"]["layer"]]
    assert marks == ["errorbar", "line"]  # the repeats' spread under every line
    text = svg(chart, tmp_path, "apps")
    assert "DRAM (tmpfs)" in text and "read lat_mean (us)" in text and "write-only" in text
    assert "fio figures only" in svg(charts.app_overview(table.iloc[:0]), tmp_path, "none")


def test_scatter_charts_zoom_and_pan(paper_analysis):
    """Zoom (wheel) and pan (drag) in the interactive copies: a selection bound to the scales."""
    import json

    a = paper_analysis
    for chart in (charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB"),
                  charts.fig4_data_size(a["agg"], a["predictions"], a["points"], FOCUS),
                  charts.heldout(a["chosen_folds"])):
        assert '"bind": "scales"' in json.dumps(chart.to_dict())


def test_device_figures_latency_iops_and_queue_depth(tmp_path):
    """Mean and tail latency, IOPS and bandwidth against block size and, where it varies, queue
    depth; latencies drawn in seconds (SI prefixes), devices by their full labels; lines capped."""
    rows = []
    for dev in ("a", "b"):
        for bs in (4096, 65536):
            for qd in (1, 8):
                for metric, unit, v in (("lat_mean", "us", 100.0), ("clat_p99", "us", 300.0),
                                        ("clat_p99.9", "us", 900.0), ("iops", "ops/s", 5e4), ("bw", "B/s", 2e8),
                                        ("lat_p50", "us", 80.0)):
                    rows.append(dict(benchmark="fio", device=dev, engine="libaio", workload="randread",
                                     block_size=bs, threads=qd, op="read", metric=metric, unit=unit,
                                     value=v * qd, n=3, k=0, std=1.0, cv=0.01, min=v * qd * 0.9, max=v * qd * 1.1))
    table = charts.device_figures_table(pd.DataFrame(rows))
    assert set(table["metric"]) == {"lat_mean", "clat_p99", "clat_p99.9", "iops", "bw"}  # no p50
    chart = charts.device_figures(table, {"a": "Device A (NVMe, ext4, a long label)"})
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2  # by block size, by queue depth
    text = svg(chart, tmp_path, "devfigs")
    assert "Device A (NVMe, ext4, a long label)" in text and "queue depth" in text
    assert "latency (s)" in text and "rate (IOPS)" in text and "100µ" in text and "p99.9" in text
    capped = charts.device_figures(table, max_points=10).to_dict()
    assert "not drawn" in json.dumps(capped)
    # a numjobs axis: against iodepth, a line per numjobs, its points shaped by it
    jobs = pd.concat([table.assign(iodepth=table["threads"], numjobs=1),
                      table.assign(iodepth=table["threads"], numjobs=4, threads=table["threads"] * 4)])
    by_qd = json.dumps(charts.device_figures(jobs).to_dict()["vconcat"][1])
    assert '"field": "iodepth"' in by_qd and '"shape": {"field": "numjobs"' in by_qd
    assert "a line per numjobs" in svg(charts.device_figures(jobs), tmp_path, "jobs")


def test_large_tables_are_capped_in_the_charts():
    """Noise draws the noisiest cells, the overview every k-th data size, both within the cap, and
    the pages embed only the columns they use, floats to 4 significant digits."""
    rows = [dict(source="s", device=f"d{d}", benchmark="ycsb", engine="rocksdb", workload="w", block_size=0,
                 threads=1, data_size=(s + 1) * 1_000_000, op="read", metric="lat_mean", unit="us",
                 value=100.0 + s + 1 / 3, n=3, cv=0.2 + s / 1000, min=90.0, max=110.0)
            for d in range(10) for s in range(60)]
    table = pd.DataFrame(rows)
    spec = json.dumps(charts.noise(table, 0.1, 600, max_points=50).to_dict())
    assert "the 50 noisiest drawn" in spec and '"cv": 0.255' in spec and '"cv": 0.254' not in spec
    spec = charts.app_overview(table, max_points=100).to_dict()
    text = json.dumps(spec)
    assert "data sizes drawn" in text and '"source"' not in text
    values = [r for d in spec["datasets"].values() for r in d]
    assert len(values) <= 100 + 10 and {r["data_size"] for r in values} >= {1_000_000, 60_000_000}
    assert charts.compact(pd.DataFrame({"x": [1 / 3], "y": ["a"]}), ["x"]).to_dict("list") == {"x": [0.3333]}


def test_cell_sizes_are_labelled_as_their_sources_write_them():
    # a YCSB data set is decimal (16 MB is also 15625 KiB, which must not win), a fio file or
    # block size binary; anything else in bytes
    assert charts._size(16_000_000) == "16MB"
    assert charts._size(4_000_000) == "4MB"
    assert charts._size(1_500_000_000) == "1500MB"
    assert charts._size(64 << 20) == "64M"
    assert charts._size(4096) == "4K"
    assert charts._size(123_457) == "123457B"


def test_latency_over_size_draws_the_memory_line_and_the_held_out_prediction(tmp_path):
    from analysis_util import make_agg

    from benchcast import screen, sizes, tables

    mb = 10**6
    figs = {"a": {("randread", 4096, "lat_mean"): 10.0}, "b": {("randread", 4096, "lat_mean"): 20.0},
            "c": {("randread", 4096, "lat_mean"): 40.0}}
    # flat below the 32 MiB limit, rising above it, per device
    res = {d: {s * mb: 50 + x * max(s - 33, 0) for s in (16, 32, 64, 128)} for d, x in (("a", 1), ("b", 2), ("c", 4))}
    agg = make_agg(figs, res, workload="read-only", op="read")
    memory = {"test": 32 * 2**20}
    sc = screen.screen(agg, {"workloads": ["randread"], "block_sizes": [4096], "metrics": ["lat_mean"]}, None, None, 2)
    folds, _, _ = sizes.validate(agg, sc, memory=memory)
    table = tables.latency_over_size(agg, memory, folds)
    assert set(table["kind"]) == {"measured", "predicted"} and (table["memory_limit"] == 2**25).all()
    pred = table[table["kind"] == "predicted"]
    assert len(pred) == 3 and set(pred["data_size"]) == {128 * mb}
    assert tables.latency_over_size(agg, {}, None)["memory_limit"].isna().all()
    chart = charts.latency_over_size(table, {"a": "tier A"})
    layers = chart.to_dict()["vconcat"][0]["spec"]["layer"]
    assert [lay["mark"]["type"] for lay in layers] == ["rule", "line", "point"]
    text = svg(chart, tmp_path, "latsize")
    assert "tier A" in text and "memory limit" in text
    assert "two data sizes" in svg(charts.latency_over_size(table.iloc[:0]), tmp_path, "none")
