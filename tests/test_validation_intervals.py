"""Tests of benchcast.validation.intervals: the band of held-out errors beyond the measured
devices, by hand."""

import numpy as np
import pandas as pd
import pytest

from benchcast import fits, records
from benchcast.fits import positive
from benchcast.validation import intervals


def test_within_range_is_the_other_devices_results():
    """A prediction is within range when it lies within the results of the series' other devices
    (all of them for a target that is not a device of the table)."""
    Y = pd.DataFrame({"s": [1.0, 2.0, 3.0, 4.0]}, index=["a", "b", "c", "d"])
    got = intervals.within_range(Y, ["s"] * 5, ["a", "d", "card", "b", "a"], [1.5, 3.5, 5.0, 2.5, 2.0])
    assert got.tolist() == [False, False, False, True, True]


def test_interval_spread_is_the_conformal_quantile_of_the_extrapolations_errors_by_hand():
    """Of the n held-out errors |log(prediction / truth)| of the ranked models of a series' family
    on devices whose result lies beyond the other devices' results, the ceil((n + 1) level)-th
    smallest; all errors where no device lies beyond; an unranked model's errors do not count; a
    prediction within the other devices' results gets no spread."""
    Y = pd.DataFrame({"s": [100.0, 200.0, 300.0, 400.0]}, index=["a", "b", "c", "d"])
    keys = pd.DataFrame({c: ["x"] for c in records.SERIES_COLUMNS}, index=["s"])
    truth = {"a": 100.0, "b": 200.0, "c": 300.0, "d": 400.0}
    pct = {"b": 10.0, "c": -20.0, "a": 50.0, "d": 5.0}  # b and c interior, a and d extremes
    errors = pd.DataFrame({"series": "s", "model": "simple", "features": "f", "held_out": list(pct),
                           "prediction": [truth[d] * (1 + p / 100) for d, p in pct.items()],
                           "pct_error": list(pct.values())})
    other = errors.assign(features="g", pct_error=900.0, prediction=10 * errors["prediction"])
    ranked = pd.DataFrame({"series": ["s"], "model": ["simple"], "features": ["f"]})
    out = intervals.interval_spread(pd.concat([errors, other]), ranked, Y, keys, (), 0.5)
    assert out["s"] == pytest.approx(np.log(1.5))  # of log 1.05, log 1.5: the ceil(3 / 2) = 2nd smallest
    assert intervals.interval_spread(errors, ranked, Y, keys, (), 0.2)["s"] == pytest.approx(np.log(1.05))
    inner = errors[errors["held_out"].isin(["b", "c"])]
    assert intervals.interval_spread(inner, ranked, Y, keys, (), 0.5)["s"] == pytest.approx(-np.log(0.8))
    rows = pd.DataFrame({"series": ["s", "s"], "held_out": ["card", "card"], "prediction": [250.0, 450.0]})
    got = intervals.spread_of(rows, out, Y)
    assert np.isnan(got[0]) and got[1] == pytest.approx(np.log(1.5))


def test_widen_holds_the_band_keeps_a_wider_interval_and_no_negative_bound():
    rows = pd.DataFrame({"series": ["s"] * 5, "prediction": [100.0, 100.0, 100.0, 100.0, 100.0],
                         "lower": [90.0, 10.0, np.nan, 90.0, -20.0], "upper": [110.0, 1000.0, np.nan, 110.0, 220.0],
                         "truth": [140.0] * 5, "covered": pd.array([False] * 5, dtype="boolean"),
                         "interval_flag": ["", "", fits.FLAG_ZERO_DF, "", ""],
                         "log_spread": [np.log(1.5), np.log(1.5), np.log(1.5), np.nan, np.nan]})
    out = intervals.widen(rows)
    assert "log_spread" not in out.columns
    # the last row's bound below zero is mirrored on the log scale: 100^2 / 220, never 0 or less
    assert out["lower"].tolist() == pytest.approx([100 / 1.5, 10.0, 100 / 1.5, 90.0, 100**2 / 220])
    assert out["upper"].tolist() == pytest.approx([150.0, 1000.0, 150.0, 110.0, 220.0])
    assert out["covered"].tolist() == [True, True, True, False, True]
    # the third row had no interval of its own: its flag says where the band comes from
    assert out["interval_flag"].tolist() == ["", "", intervals.FLAG_BAND, "", positive.FLAG_MIRRORED]
