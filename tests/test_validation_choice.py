"""Tests of benchcast.validation.choice: the paper's and the held-out choice, how the nested choice ranks
and takes the median of its best models, by hand."""

import numpy as np
import pandas as pd
import pytest

from benchcast import features
from benchcast.validation import choice
from benchcast.validation import folds as vfolds
from validation_util import four_devices, pooled


def test_select_simple_both_choices_and_differ_flag():
    agg, *_ = four_devices()
    _, summary = vfolds.loo_simple(agg)
    sel = choice.select_simple(summary)
    row = sel.iloc[0]
    best_r2 = summary.loc[summary["r2"].idxmax()]
    best_mape = summary.loc[summary["mape"].idxmin()]
    assert row["paper_feature"] == best_r2["features"] and row["paper_r2"] == best_r2["r2"]
    assert row["selected_feature"] == best_mape["features"] and row["selected_mape"] == best_mape["mape"]
    assert row["differ"] == (best_r2["features"] != best_mape["features"])
    # hand-made summary where they differ
    s = pd.DataFrame({"series": "s", **{c: "" for c in ["benchmark", "engine", "workload", "op", "metric", "unit"]},
                      "threads": 0, "data_size": 0, "features": ["f1", "f2", "f3"], "r2": [0.99, 0.95, 0.5],
                      "mape": [12.0, 3.0, 1.0], "coverage": np.nan, "n_folds": 3, "n_predicted": [3, 3, 2],
                      "form": "line", "figures": [vfolds.figures_cell([f]) for f in ["f1", "f2", "f3"]]})
    out = choice.select_simple(s).iloc[0]
    assert (out["paper_feature"], out["selected_feature"], out["differ"]) == ("f1", "f2", True)  # f3 incomplete


def test_shared_scores_average_a_model_over_series_that_differ_in_the_shared_fields():
    """Each model's score is the mean of its scores over the series of its family (the series
    fields but the shared ones); an application's I/O-path figure is one model across workloads,
    also inside a log-log line; simple and multiple models are apart."""
    keys = pd.DataFrame({"benchmark": "ycsb", "engine": ["m", "m", "m", "r"], "workload": ["w", "w", "x", "w"],
                         "threads": 1, "data_size": [4, 8, 4, 4], "op": "update", "metric": "lat_mean", "unit": "us"},
                        index=["m/w/4", "m/w/8", "m/x/4", "r/w/4"])
    scores = pd.DataFrame([
        ("m/w/4", "f", "simple", "line", False, 10.0), ("m/w/8", "f", "simple", "line", False, 30.0),
        ("m/x/4", "f", "simple", "line", False, 50.0), ("r/w/4", "f", "simple", "line", False, 7.0),
        ("m/w/4", "f", "multiple", "line", False, 1.0),
        ("m/w/4", "io_path[m/w]", "simple", "log-log", True, 4.0),
        ("m/x/4", "io_path[m/x]", "simple", "log-log", True, 8.0),
        ("m/w/8", "io_path[m/w]", "simple", "line", True, 2.0)],
        columns=["series", "figures", "model", "form", "io_path", "mape"])
    scores["figures"] = [vfolds.figures_cell([f]) for f in scores["figures"]]
    by_size = choice.shared_scores(scores, keys, ["data_size"])["mape"].tolist()
    assert by_size == [20.0, 20.0, 50.0, 7.0, 1.0, 4.0, 8.0, 2.0]
    both = choice.shared_scores(scores, keys, ["data_size", "workload"])["mape"].tolist()
    assert both == [30.0, 30.0, 30.0, 7.0, 1.0, 6.0, 6.0, 2.0]
    assert choice.shared_scores(scores, keys, [])["mape"].tolist() == scores["mape"].tolist()


def test_median_model_uses_an_odd_number_of_the_best():
    """Three rows: the median prediction's row; two rows: the best-ranked alone (no average of two
    models); rows keep their own columns and lose the rank."""
    ranked = pd.DataFrame({"series": ["s"] * 3 + ["t"] * 2, "features": ["x", "y", "z", "x", "y"],
                           "_rank": [0, 1, 2, 1, 0], "prediction": [30.0, 10.0, 20.0, 5.0, 7.0],
                           "lower": [1.0, 2.0, 3.0, 4.0, 5.0]})
    out = choice.median_model(ranked).set_index("series")
    assert out.loc["s", "features"] == "z" and out.loc["s", "lower"] == 3.0
    assert out.loc["t", "features"] == "y" and out.loc["t", "prediction"] == 7.0
    assert "_rank" not in out.columns


def test_fold_scores_of_the_multiple_folds_are_the_nested_choices_inner_scores():
    """The scores that rank multiple models on all devices (from loo_multiple's folds) are those
    the nested choice computes for a table itself: one computation, two ways to reach it."""
    agg, _ = pooled(5)
    folds, _, _ = vfolds.loo_multiple(agg, max_figures=2)
    a = choice.fold_scores(folds).set_index(["series", "features"])["mape"].sort_index()
    b = choice.fold_scores(vfolds.multiple_inner(agg, None, features.POOL_PER_WORKLOAD, None, 2))
    b = b.set_index(["series", "features"])["mape"].sort_index()
    assert len(a) > 1 and a.index.equals(b.index)
    assert a.to_numpy() == pytest.approx(b.to_numpy())


def test_median_model_of_nothing_is_nothing():
    """No ranked row (no model could predict anything): an empty table, not an error."""
    empty = pd.DataFrame({"series": [], "target": [], "prediction": [], "_rank": []})
    out = choice.median_model(empty, by=("series", "target"))
    assert out.empty and "_rank" not in out.columns


def test_median_model_refuses_a_prediction_at_or_below_zero():
    ranked = pd.DataFrame({"series": ["s"] * 3, "_rank": [0, 1, 2], "prediction": [-5.0, 40.0, 60.0],
                           "features": ["crosses", "b", "c"]})
    got = choice.median_model(ranked)
    # the line through zero takes no part: of the two left, the best alone
    assert got["features"].tolist() == ["b"]
    assert choice.median_model(ranked.assign(prediction=[0.0, np.nan, -1.0])).empty


def test_bag_takes_the_median_of_the_draws_on_the_log_scale_by_hand():
    """A row's prediction 100 with draws 50, 200 and 400 (a fourth at -1 takes no part): the median
    of the logs of 100, 50, 200, 400 is sqrt(100 x 200); the interval moves by the same factor and
    the errors are made again; a group no draw predicted keeps its own."""
    rows = pd.DataFrame({"series": ["s", "s"], "held_out": ["a", "b"], "truth": [120.0, 10.0],
                         "prediction": [100.0, 12.0], "lower": [80.0, 6.0], "upper": [125.0, 24.0]})
    idx = pd.MultiIndex.from_tuples([("s", "a")], names=["series", "held_out"])
    draws = [pd.Series([v], index=idx) for v in (50.0, 200.0, 400.0, -1.0)]
    out = choice.bag(rows, draws)
    f = np.sqrt(100 * 200) / 100
    assert out.loc[0, "prediction"] == pytest.approx(100 * f)
    assert (out.loc[0, "lower"], out.loc[0, "upper"]) == (pytest.approx(80 * f), pytest.approx(125 * f))
    assert out.loc[0, "pct_error"] == pytest.approx(100 * (100 * f - 120) / 120)
    assert bool(out.loc[0, "covered"]) is True
    assert list(out.loc[1, ["prediction", "lower", "upper"]]) == [12.0, 6.0, 24.0]
    assert choice.bag(rows, []) is rows
