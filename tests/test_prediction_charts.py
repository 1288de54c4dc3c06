"""Tests of benchcast.report.prediction_charts: the held-out predictions against the measured results and
the hypothetical devices' predictions with their intervals, drawn from the paper study."""
import json

import pytest

from benchcast.report import prediction_charts
from report_util import FOCUS, LABELS, svg


def test_validity_charts_and_placeholders(paper_analysis, tmp_path):
    a = paper_analysis
    assert "held-out device" in svg(prediction_charts.heldout(a["chosen_folds"], LABELS), tmp_path, "heldout")
    ti = prediction_charts.target_intervals(a["target_predictions"], FOCUS)
    assert "hypothetical device" in svg(ti, tmp_path, "ti")
    empty = svg(prediction_charts.heldout(a["chosen_folds"].iloc[:0]), tmp_path, "empty")
    assert "too few devices" in empty


def test_heldout_chart_keeps_its_log_axes_on_the_data(paper_analysis):
    """A prediction at or below zero (and an interval bound below zero) must not stretch the log
    axes down to 1e-9: it is left out and counted in the subtitle; bounds are clipped to the axes
    (drawn in seconds: the folds' us times 1e-6)."""
    chosen = paper_analysis["chosen_folds"].copy()
    chosen.loc[chosen.index[0], "prediction"] = -5.0
    chosen.loc[chosen.index[1], "lower"] = -100.0
    spec = prediction_charts.heldout(chosen).to_dict()
    layers = spec["spec"]["layer"]
    domains = [lay["encoding"][axis]["scale"]["domain"] for lay in layers for axis in ("x", "y")
               if "scale" in lay["encoding"].get(axis, {})]
    positive = chosen[(chosen["truth"] > 0) & (chosen["prediction"] > 0)]
    lowest = min(positive["truth"].min(), positive["prediction"].min())
    assert domains and all(d[0] == pytest.approx(0.8 * lowest * 1e-6) for d in domains)
    assert spec["title"]["subtitle"] == "1 prediction at or below zero not drawn"


def test_heldout_chart_zooms_and_pans(paper_analysis):
    """Zoom (wheel) and pan (drag) in the interactive copy: a selection bound to the scales."""
    assert '"bind": "scales"' in json.dumps(prediction_charts.heldout(paper_analysis["chosen_folds"]).to_dict())


def test_the_answer_chart_draws_every_target_and_counts_what_it_cannot(paper_analysis):
    """Every target card, each series by the first procedure that predicts it; a prediction at or
    below zero is not drawn but counted in the subtitle."""
    preds = paper_analysis["target_predictions"].copy()
    spec = prediction_charts.target_intervals(preds).to_dict()
    drawn = [r for d in spec["datasets"].values() for r in d]
    assert {r["target"] for r in drawn} == set(preds["target"]) and "subtitle" not in json.dumps(spec["title"])
    keys = ["target", "engine", "workload", "op", "metric", "data_size"]
    assert len(drawn) == len(preds.drop_duplicates(keys))
    first = preds.index[0]
    same = (preds[keys] == preds.loc[first, keys]).all(axis=1)
    preds.loc[same, "prediction"] = -1.0
    spec = prediction_charts.target_intervals(preds).to_dict()
    assert spec["title"]["subtitle"] == "1 prediction at or below zero not drawn"
