"""Tests of benchcast.report.app_charts: the application results over data size (every k-th size beyond the
cap), and mean latency over data size with the memory line and the held-out prediction."""
import json

import pandas as pd

from benchcast.report import app_charts, tables
from report_util import repeated_agg, svg


def test_app_overview_draws_each_engine_metric_and_spread(tmp_path):
    table = tables.app_overview(repeated_agg())
    chart = app_charts.app_overview(table, {"dram": "DRAM (tmpfs)"})
    spec = chart.to_dict()
    assert [b["title"] for b in spec["vconcat"]] == ["ycsb / mysql"]
    marks = [lay["mark"]["type"] for lay in spec["vconcat"][0]["spec"]["layer"]]
    assert marks == ["errorbar", "line"]  # the repeats' spread under every line
    text = svg(chart, tmp_path, "apps")
    assert "DRAM (tmpfs)" in text and "read lat_mean (s)" in text and "write-only" in text  # times in seconds
    assert "fio figures only" in svg(app_charts.app_overview(table.iloc[:0]), tmp_path, "none")


def test_a_large_overview_draws_every_kth_data_size():
    """Within the cap, the smallest and largest sizes kept; the page embeds only the columns it uses."""
    rows = [dict(source="s", device=f"d{d}", benchmark="ycsb", engine="rocksdb", workload="w", block_size=0,
                 threads=1, data_size=(s + 1) * 1_000_000, op="read", metric="lat_mean", unit="us",
                 value=100.0 + s + 1 / 3, n=3, cv=0.2 + s / 1000, min=90.0, max=110.0)
            for d in range(10) for s in range(60)]
    spec = app_charts.app_overview(pd.DataFrame(rows), max_points=100).to_dict()
    text = json.dumps(spec)
    assert "data sizes drawn" in text and '"source"' not in text
    values = [r for d in spec["datasets"].values() for r in d]
    assert len(values) <= 100 + 10 and {r["data_size"] for r in values} >= {1_000_000, 60_000_000}


def test_latency_over_size_draws_the_memory_line_and_the_held_out_prediction(tmp_path):
    from analysis_util import make_agg

    from benchcast.screening import screen, sizes

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
    chart = app_charts.latency_over_size(table, {"a": "tier A"})
    layers = chart.to_dict()["vconcat"][0]["spec"]["layer"]
    assert [lay["mark"]["type"] for lay in layers] == ["rule", "line", "point"]
    text = svg(chart, tmp_path, "latsize")
    assert "tier A" in text and "memory limit" in text
    assert "two data sizes" in svg(app_charts.latency_over_size(table.iloc[:0]), tmp_path, "none")
