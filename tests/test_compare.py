"""The compare target: two aggregated tables side by side (ratio and each side's spread, computed by
hand on a small synthetic pair), and a dry run that plans the compare rules alone, whatever the
rest of the workflow would measure."""
import math

import pandas as pd
import pytest

from benchcast.report import charts, device_charts, spread_charts, tables
from workflow_util import copy_workflow, edit_config, planned_jobs, snakemake

KEY = dict(benchmark="fio", engine="psync", workload="randread", block_size=4096, threads=1, data_size=0,
           op="read", unit="us")


def agg(study, rows):
    return pd.DataFrame([dict(study=study, source="fio:fio", **KEY, **r) for r in rows])


A = agg("old", [
    dict(device="disk", metric="lat_mean", value=100.0, n=3, k=0, cv=0.05, min=95.0, max=105.0),
    dict(device="disk", metric="clat_p99", value=200.0, n=3, k=0, cv=0.10, min=180.0, max=220.0),
    dict(device="dram", metric="lat_mean", value=2.0, n=3, k=0, cv=0.0, min=2.0, max=2.0),  # a only
])
B = agg("new", [
    dict(device="disk", metric="lat_mean", value=150.0, n=5, k=1, cv=0.02, min=140.0, max=160.0),
    dict(device="disk", metric="clat_p99", value=210.0, n=3, k=0, cv=0.08, min=190.0, max=230.0),
    dict(device="zram", metric="lat_mean", value=9.0, n=3, k=0, cv=0.1, min=8.0, max=10.0),  # b only
])


def test_how_much_of_a_change_the_speed_explains_by_hand():
    """disk: raw 100 -> 150 us, stated at the reference speed 100 -> 120: log 1.2 / log 1.5 = 45 % of
    the change is left, 55 % explained; dram 10 -> 8, corrected 10 -> 8 (nothing explained); zram
    10 -> 11, corrected 10 -> 12 (the correction made it larger: below 0); a side without corrected
    values (measured before the probe): unknown."""
    a = agg("old", [dict(device=d, metric="lat_mean", value=v, corrected=c)
                    for d, v, c in (("disk", 100.0, 100.0), ("dram", 10.0, 10.0), ("zram", 10.0, 10.0),
                                    ("slow", 5.0, float("nan")))])
    b = agg("new", [dict(device=d, metric="lat_mean", value=v, corrected=c)
                    for d, v, c in (("disk", 150.0, 120.0), ("dram", 8.0, 8.0), ("zram", 11.0, 12.0),
                                    ("slow", 6.0, 6.0))])
    cells = tables.compare_cells(a, b).set_index("device")
    assert cells.at["disk", "corrected_ratio"] == pytest.approx(1.2)
    assert cells.at["disk", "speed_explained"] == pytest.approx(1 - math.log(1.2) / math.log(1.5))
    assert cells.at["dram", "speed_explained"] == pytest.approx(0.0)
    assert cells.at["zram", "speed_explained"] < 0
    assert math.isnan(cells.at["slow", "speed_explained"])
    spread = tables.compare_spread(cells.reset_index())
    row = spread[(spread["device"] == "disk")].iloc[0]
    assert row["median_pct"] == pytest.approx(50) and row["median_pct_corrected"] == pytest.approx(20)
    # older aggregated tables have no corrected column: the comparison still works, nothing explained
    plain = tables.compare_cells(A, B)
    assert plain["speed_explained"].isna().all() and plain["ratio"].notna().all()


def test_compare_cells_by_hand(tmp_path):
    cells = tables.compare_cells(A, B)
    assert len(cells) == 2  # the cells both sides have
    first, second = cells.iloc[0], cells.iloc[1]  # furthest from 1 first
    assert first["metric"] == "lat_mean" and first["ratio"] == pytest.approx(1.5)
    assert (first["study_a"], first["study_b"]) == ("old", "new")
    assert (first["n_a"], first["n_b"], first["cv_a"], first["cv_b"]) == (3, 5, 0.05, 0.02)
    assert (first["min_a"], first["max_a"], first["min_b"], first["max_b"]) == (95.0, 105.0, 140.0, 160.0)
    assert bool(first["outside_spread"])  # 140-160 does not meet 95-105
    assert second["metric"] == "clat_p99" and second["ratio"] == pytest.approx(1.05)
    assert not bool(second["outside_spread"])  # 190-230 meets 180-220
    assert abs(math.log(first["ratio"])) > abs(math.log(second["ratio"]))
    spread = tables.compare_spread(cells)
    top = spread.iloc[0]  # fio over every engine, op and device first: lat_mean +50 %, clat_p99 +5 % apart
    assert list(spread.iloc[:2]["metric"]) == ["clat_p99", "lat_mean"]
    assert (top["engine"], top["op"], top["device"], top["cells"]) == ("all", "all", "all", 1)
    row = spread[(spread["metric"] == "lat_mean") & (spread["device"] == "disk")].iloc[0]
    assert (row["engine"], row["op"], row["cells"]) == ("psync", "read", 1)
    assert row["mean_abs_pct"] == pytest.approx(50) and row["median_pct"] == pytest.approx(50)
    assert len(spread) == 6  # two metrics at three levels
    both = tables.compare_spread(pd.concat([cells, cells.assign(device="zram", ratio=0.9)]))
    row = both[(both["metric"] == "lat_mean") & (both["device"] == "all") & (both["op"] == "read")].iloc[0]
    assert row["cells"] == 2 and row["mean_abs_pct"] == pytest.approx(30) and row["median_pct"] == pytest.approx(20)
    assert row["p90_abs_pct"] == pytest.approx(10 + 0.9 * 40)
    summary = tables.compare_summary(A, B, cells)
    assert summary == {"cells_a": 3, "cells_b": 3, "both": 2, "only_a": 1, "only_b": 1, "outside_spread": 1}
    path = tmp_path / "ratios.svg"
    charts.save(spread_charts.compare(cells, ("old kernel", "new kernel"), 100), path)
    text = path.read_text()
    assert "new kernel / old kernel" in text and "outside both spreads" in text
    assert "disk: fio psync randread bs 4K x1 read lat_mean" in text
    assert "No cell" in str(spread_charts.compare(cells.iloc[:0], ("a", "b"), 100).to_dict())
    # the chart's bars: a's runs over a's mean around 1 (grey), b's runs over a's mean
    drawn = next(iter(spread_charts.compare(cells, ("a", "b"), 100).to_dict()["datasets"].values()))
    assert drawn[0]["a_range_lo"] == pytest.approx(0.95) and drawn[0]["a_range_hi"] == pytest.approx(1.05)
    assert drawn[0]["b_range_lo"] == pytest.approx(1.4) and drawn[0]["b_range_hi"] == pytest.approx(1.6)
    assert drawn[1]["b_range_lo"] == pytest.approx(0.95) and drawn[1]["b_range_hi"] == pytest.approx(1.15)


@pytest.mark.workflow
def test_compare_target_plans_only_compare(tmp_path):
    wd = copy_workflow(tmp_path / "wf")
    (tmp_path / "old").mkdir()
    A.to_csv(tmp_path / "old" / "aggregated.csv", index=False)
    # b: this tree's own (not yet built) study result, written by hand: nothing upstream may be planned
    (wd / "results" / "local").mkdir(parents=True)
    B.assign(study="local").to_csv(wd / "results" / "local" / "aggregated.csv", index=False)
    edit_config(wd, lambda c: c.update(compare={"kernel": {"a": str(tmp_path / "old"), "b": "results/local",
                                                           "names": ["old", "new"]}}))
    assert planned_jobs(wd, "compare") == {"compare_cells": 1, "compare": 1}
    assert "compare_cells" not in planned_jobs(wd)  # rule all never builds it
    snakemake(wd, "compare")
    out = pd.read_csv(wd / "results" / "compare" / "kernel" / "ratios.csv")
    assert list(out["ratio"].round(2)) == [1.5, 1.05]
    spread = pd.read_csv(wd / "results" / "compare" / "kernel" / "spread.csv")
    assert spread.loc[spread["metric"] == "lat_mean", "mean_abs_pct"].round(6).tolist() == [50.0] * 3
    assert (wd / "results" / "compare" / "kernel" / "ratios.html").stat().st_size > 100_000


@pytest.mark.bench
@pytest.mark.skipif(__import__("browser_util").missing() is not None, reason="no headless Chromium")
def test_compare_and_device_figure_pages_render_in_chromium(tmp_path):
    """The interactive pages of the compare chart and of device figures over block size and queue
    depth draw in headless Chromium with no console error."""
    from browser_util import Browser
    from test_browser import render

    figs = []
    for qd in (1, 4):
        for bs in (4096, 65536):
            for metric, unit, v in (("lat_mean", "us", 100.0), ("clat_p99", "us", 400.0), ("iops", "ops/s", 1e4),
                                    ("bw", "B/s", 4e7)):
                figs.append(dict(benchmark="fio", device="disk", engine="psync", workload="randread",
                                 block_size=bs, threads=qd, op="read", metric=metric, unit=unit, value=v * qd,
                                 n=3, k=0, std=1.0, cv=0.01, min=v * qd * 0.9, max=v * qd * 1.1))
    pages = {"compare": spread_charts.compare(tables.compare_cells(A, B), ("old", "new"), 100),
             "device_figures_qd": device_charts.device_figures(device_charts.device_figures_table(pd.DataFrame(figs)))}
    browser = Browser()
    try:
        for name, chart in pages.items():
            path = tmp_path / f"{name}.html"
            charts.save(chart, path)
            got = render(browser, path)
            assert got["state"] == "rendered" and got["errors"] == [] and got["drawn"] > 10, (name, got)
    finally:
        browser.close()
