"""Tests of benchcast.report.spread_charts: the noisy cells and their count, the noisiest drawn within the
cap, and cell sizes labelled as their sources write them (the compare chart: tests/test_compare.py)."""
import json

import pandas as pd

from benchcast.report import spread_charts, tables
from report_util import repeated_agg, svg


def test_noise_chart_marks_each_noisy_cell_and_counts_them(tmp_path):
    agg = repeated_agg()
    noisy = tables.noisy_cells(agg, 0.1)
    chart = spread_charts.noise(noisy, 0.1, len(agg), {"dram": "DRAM (tmpfs)"})
    spec = chart.to_dict()
    assert spec["title"] == f"{len(noisy)} of {len(agg)} cells run more than once spread above CV 10%"
    assert "DRAM (tmpfs)" in svg(chart, tmp_path, "noise")
    quiet = svg(spread_charts.noise(noisy.iloc[:0], 0.6, len(agg)), tmp_path, "quiet")
    assert f"0 of {len(agg)} cells" in quiet


def test_noise_draws_the_noisiest_cells_within_the_cap():
    """The page embeds only the columns it uses, floats to 4 significant digits."""
    rows = [dict(source="s", device=f"d{d}", benchmark="ycsb", engine="rocksdb", workload="w", block_size=0,
                 threads=1, data_size=(s + 1) * 1_000_000, op="read", metric="lat_mean", unit="us",
                 value=100.0 + s + 1 / 3, n=3, cv=0.2 + s / 1000, min=90.0, max=110.0)
            for d in range(10) for s in range(60)]
    spec = json.dumps(spread_charts.noise(pd.DataFrame(rows), 0.1, 600, max_points=50).to_dict())
    assert "the 50 noisiest drawn" in spec and '"cv": 0.255' in spec and '"cv": 0.254' not in spec


def test_cell_sizes_are_labelled_as_their_sources_write_them():
    # a YCSB data set is decimal (16 MB is also 15625 KiB, which must not win), a fio file or
    # block size binary; anything else in bytes
    assert spread_charts._size(16_000_000) == "16MB"
    assert spread_charts._size(4_000_000) == "4MB"
    assert spread_charts._size(1_500_000_000) == "1500MB"
    assert spread_charts._size(64 << 20) == "64M"
    assert spread_charts._size(4096) == "4K"
    assert spread_charts._size(123_457) == "123457B"
