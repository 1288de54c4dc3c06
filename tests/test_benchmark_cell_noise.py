"""benchmarks/cell_noise.py: per-second means out of YCSB's histogram logs and fio's JSON status
reports, and the scatter of k-second windows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter

from analysis_util import benchmark

cn = benchmark("cell_noise")


def test_independent_seconds_scatter_as_one_over_root_k():
    rng = np.random.default_rng(1)
    cv = cn.window_cv(100 * (1 + 0.1 * rng.standard_normal(4096)))
    assert cv[1] == pytest.approx(10, rel=0.05)
    assert cv[16] == pytest.approx(10 / 4, rel=0.15)


def test_drift_is_not_averaged_away_by_longer_windows():
    """A slow drift (a sine over 64 s) keeps most of its scatter in 16-second windows."""
    t = np.arange(640)
    cv = cn.window_cv(100 * (1 + 0.1 * np.sin(2 * np.pi * t / 64)))
    assert cv[16] > 0.8 * cv[1]
    assert set(cn.window_cv(np.ones(40))) == {1, 2, 4, 8}  # at least three windows of each k


def test_fio_status_reports_are_differenced_into_each_second():
    def report(ios, mean_ns):
        return json.dumps({"jobs": [{"read": {"total_ios": ios, "clat_ns": {"mean": mean_ns}}}]})
    # second 1: 1000 ios at 10 us; second 2: 1000 more at 30 us (cumulative mean 20 us); then 10 ios
    text = "\n".join([report(0, 0), report(1000, 10_000), report(2000, 20_000), report(2010, 20_000)])
    assert cn.per_second_fio("fio: some notice\n" + text).tolist() == pytest.approx([10, 30])


def test_ycsb_log_drops_its_first_interval_and_nearly_empty_ones(tmp_path):
    path = tmp_path / "01-read-only.READ.hdr"
    with open(path, "w") as f:
        w = HistogramLogWriter(f)
        w.output_comment("[Logging for: READ]")
        w.output_log_format_version()
        w.output_legend()
        for start, n, us in ((0.0, 10, 900), (0.02, 1000, 40), (1.02, 1000, 50), (2.02, 20, 70)):
            h = HdrHistogram(1, 3_600_000_000, 3)
            h.record_value(us, n)
            h.set_start_time_stamp(int(start * 1000))
            h.set_end_time_stamp(int(start * 1000) + 1000)
            w.output_interval_histogram(h)
    assert cn.per_second_ycsb(path).tolist() == pytest.approx([40, 50], rel=1e-3)
