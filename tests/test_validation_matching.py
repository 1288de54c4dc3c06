"""benchcast.validation.matching: a model scored on the inner folds of the held-out device's kind."""
import numpy as np
import pandas as pd
import pytest

from benchcast.validation import matching
from benchcast.validation.folds import figures_cell

F = pd.DataFrame({"f": [1.0, 10.0, 20.0, 40.0, 80.0, 30.0], "g": [5.0, 4.0, 3.0, 2.0, 1.0, 2.5]},
                 index=["a", "b", "c", "d", "e", "new"])


def test_interior_on_every_figure_of_the_model():
    assert matching.interior(F, ["f"], ["a", "b", "c", "d", "e"], "new")
    assert not matching.interior(F, ["f"], ["b", "c", "d", "e"], "a")  # below the others
    assert not matching.interior(F, ["f", "g"], ["a", "b", "c"], "d")  # f above b..c
    assert matching.interior(F, ["f", "g"], ["a", "b", "c", "e"], "d")
    assert matching.interior(F, ["missing"], ["a", "b"], "c") is None


def _folds(errors: dict, model="m", fig="f", series="s"):
    return pd.DataFrame({"series": series, "features": model, "model": "simple", "form": "line",
                         "figures": figures_cell([fig]), "io_path": False, "held_out": list(errors),
                         "prediction": 100.0, "pct_error": list(errors.values())})


def test_scored_on_the_folds_of_the_predicted_devices_kind():
    # inner folds over a..e: a and e are extreme on f, b c d interior; "new" is interior
    folds = _folds({"a": 100.0, "b": 4.0, "c": -2.0, "d": 6.0, "e": -50.0})
    s = matching.matched_scores(folds, F, "new")
    assert s["mape"].iloc[0] == pytest.approx(4.0)
    # a device below all of them is scored on the extreme folds
    G = pd.concat([F, pd.DataFrame({"f": [0.5], "g": [2.0]}, index=["fast"])])
    assert matching.matched_scores(folds, G, "fast")["mape"].iloc[0] == pytest.approx(75.0)
    assert list(s.columns) == matching.SCORE_COLUMNS


def test_a_model_with_a_fold_at_or_below_zero_does_not_compete():
    folds = pd.concat([_folds({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}, model="bad"),
                       _folds({"a": 5.0, "b": 5.0, "c": 5.0, "d": 5.0, "e": 5.0}, model="good")])
    folds.loc[(folds["features"] == "bad") & (folds["held_out"] == "a"), "prediction"] = -3.0
    s = matching.matched_scores(folds, F, "new")
    assert s["features"].tolist() == ["good"]
    folds.loc[folds["features"] == "good", "prediction"] = np.nan
    assert matching.matched_scores(folds, F, "new").empty
