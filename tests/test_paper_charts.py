"""Tests of benchcast.report.paper_charts: the paper's Figures 3 and 4 and the best-R² heatmap, drawn from
the paper study."""
import json

import pytest

from benchcast import BenchcastError
from benchcast.report import paper_charts
from report_util import FOCUS, LABELS, svg


def test_fig3_scatter_has_devices_targets_and_the_fitted_line(paper_analysis, tmp_path):
    a = paper_analysis
    text = svg(paper_charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB", LABELS),
               tmp_path, "fig3")
    assert "DRAM (tmpfs)" in text and "S-SCM" in text and "R² = 0.9999" in text
    assert "randwrite_64K_lat_mean" in text  # the best feature is the X axis


def test_fig4_and_heatmap(paper_analysis, tmp_path):
    a = paper_analysis
    assert "M-SCM" in svg(paper_charts.fig4_data_size(a["agg"], a["predictions"], a["points"], FOCUS), tmp_path, "fig4")
    assert "best R²" in svg(paper_charts.heatmap_best_r2(a["best"]), tmp_path, "heat")


def test_bad_focus_is_a_one_line_error(paper_analysis):
    a = paper_analysis
    with pytest.raises(BenchcastError, match="report.focus_data_size: 16GB was not measured"):
        paper_charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], {**FOCUS, "engine": "x"},
                                  "16GB")


def test_scatter_charts_zoom_and_pan(paper_analysis):
    """Zoom (wheel) and pan (drag) in the interactive copies: a selection bound to the scales."""
    a = paper_analysis
    for chart in (paper_charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB"),
                  paper_charts.fig4_data_size(a["agg"], a["predictions"], a["points"], FOCUS)):
        assert '"bind": "scales"' in json.dumps(chart.to_dict())
