"""Tests of benchcast.report.device_charts: the device figures (latency, IOPS, bandwidth) by block size and
queue depth, from the paper study and from a small table made by hand."""
import json

import pandas as pd

from benchcast.report import device_charts
from report_util import svg


def test_device_figures_of_the_paper_study(paper_analysis, tmp_path):
    table = device_charts.device_figures_table(paper_analysis["agg"])
    assert set(table["metric"]) == {"lat_mean", "bw"} and len(table) == 3 * 2 * 5 * 2
    assert "nand_flash" in svg(device_charts.device_figures(table), tmp_path, "figs")


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
    table = device_charts.device_figures_table(pd.DataFrame(rows))
    assert set(table["metric"]) == {"lat_mean", "clat_p99", "clat_p99.9", "iops", "bw"}  # no p50
    chart = device_charts.device_figures(table, {"a": "Device A (NVMe, ext4, a long label)"})
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2  # by block size, by queue depth
    text = svg(chart, tmp_path, "devfigs")
    assert "Device A (NVMe, ext4, a long label)" in text and "queue depth" in text
    assert "latency (s)" in text and "rate (IOPS)" in text and "100µ" in text and "p99.9" in text
    capped = device_charts.device_figures(table, max_points=10).to_dict()
    assert "not drawn" in json.dumps(capped)
    # a numjobs axis: against iodepth, a line per numjobs, its points shaped by it
    jobs = pd.concat([table.assign(iodepth=table["threads"], numjobs=1),
                      table.assign(iodepth=table["threads"], numjobs=4, threads=table["threads"] * 4)])
    by_qd = json.dumps(device_charts.device_figures(jobs).to_dict()["vconcat"][1])
    assert '"field": "iodepth"' in by_qd and '"shape": {"field": "numjobs"' in by_qd
    assert "a line per numjobs" in svg(device_charts.device_figures(jobs), tmp_path, "jobs")
