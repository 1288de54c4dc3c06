"""benchcast.prediction.answers: every card and series answered, or told which figure it lacks."""
import numpy as np
import pandas as pd
import pytest
from analysis_util import make_agg

from benchcast.prediction import answers
from benchcast.validation.folds import figures_cell

F64 = ("randwrite", 65536, "lat_mean")
R16 = ("randread", 16384, "clat_p50")
KEYS = dict(benchmark="ycsb", engine="mysql", workload="write-only", threads=0, data_size=16 * 10**9, op="write",
            metric="lat_mean", unit="us")
SERIES = "ycsb/mysql/write-only/write/lat_mean/16GB"
TARGETS = {
    "S-SCM": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": "50 us"}]},
    "Fast": {"figures": [{"workload": "randread", "block_size": "16K", "metric": "clat_p50", "value": "9 us"},
                         {"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": "20 us"}]},
}


def _inputs():
    agg = make_agg({d: {F64: x, R16: x / 2} for d, x in {"a": 10.0, "b": 40.0, "c": 90.0, "d": 200.0}.items()},
                   {"a": 100.0, "b": 160.0, "c": 260.0, "d": 480.0})
    selection = pd.DataFrame([{"series": SERIES, **KEYS, "rank": 1, "model": "simple",
                               "features": "relative randread_16K_clat_p50", "score_mape": 7.5, "form": "relative",
                               "figures": figures_cell(["randread_16K_clat_p50"])}])
    predictions = pd.DataFrame([{"choice": "nested", "series": SERIES, **KEYS, "target": "Fast", "prediction": 75.0,
                                 "lower": 60.0, "upper": 94.0, "features": "relative randread_16K_clat_p50"},
                                {"choice": "paper", "series": SERIES, **KEYS, "target": "S-SCM", "prediction": 190.0,
                                 "lower": 150.0, "upper": 230.0, "features": "randwrite_64K_lat_mean"}])
    verdicts = pd.DataFrame([{"series": SERIES, "interior_mape": 8.25, "interior_floor_mape": 5.5,
                              "verdict": "predictable from device figures"}])
    return agg, selection, predictions, verdicts


def test_answered_with_the_nested_choice_and_its_held_out_error():
    table = answers.answers(*_at(), min_per_op=None)
    fast = table[table["target"] == "Fast"].iloc[0]
    assert (fast["status"], fast["prediction"], fast["lower"], fast["upper"]) == ("answered", 75.0, 60.0, 94.0)
    assert (fast["heldout_mape"], fast["floor_mape"]) == (8.25, 5.5)
    assert fast["line"] == ("Fast: ycsb/mysql/write-only/write/lat_mean/16GB: 75 us (60-94); held-out error 8.2 % "
                            "(noise floor 5.5 %), predictable from device figures")
    assert list(table.columns) == answers.ANSWER_COLUMNS


def test_a_card_without_the_chosen_figure_is_told_which_one_to_ask_for():
    table = answers.answers(*_at(), min_per_op=None)
    s = table[table["target"] == "S-SCM"].iloc[0]
    # the paper's choice predicted it from the figure the card has; that is no validated prediction
    assert s["status"] == "missing figure" and np.isnan(s["prediction"])
    assert s["missing_figure"] == "randread 16K clat_p50" and s["missing_mape"] == 7.5
    assert s["line"] == ("S-SCM: ycsb/mysql/write-only/write/lat_mean/16GB: no validated prediction: the card lacks "
                         "randread 16K clat_p50 (the model on it missed held-out devices by 7.5 %)")
    lines = answers.lines(table)
    assert len(lines) == 2 and lines[0].startswith("Fast: ") and lines[1].startswith("S-SCM: ")


def _at():
    agg, selection, predictions, verdicts = _inputs()
    return agg, {"workloads": ["randwrite", "randread"], "metrics": ["lat_mean", "clat_p50"]}, TARGETS, \
        predictions, selection, verdicts


def test_figure_text_names_a_commit_and_queue_depth():
    agg = make_agg({"a": {("write", 4096, "lat_mean"): 5.0}}, {"a": 1.0})
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    from benchcast.features import feature_table
    feats = feature_table(agg)
    assert answers.figure_text(feats, "write_4K_sync_lat_mean") == "write 4K sync lat_mean"
    assert answers.figure_text(feats, "nothing_like_it") == "nothing_like_it"
