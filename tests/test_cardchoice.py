"""Tests of benchcast.validation.cardchoice (through benchcast.validation.run_cards): each card answered
from its own figures, with the error of the procedure that made the answer; the devices' mean where no
model of its figures beats it; the paper's line where too few devices check a choice; the figure worth
asking for. Small studies whose answers are known by hand."""
import copy

import numpy as np
import pandas as pd
import pytest

from analysis_util import CONFIG, make_agg
from benchcast import config, validation
from benchcast.screening import screen
from benchcast.validation import cardchoice
from validation_util import F4, F64, hand_loo, six_tiers

FEATS = {"workloads": ["randwrite"], "block_sizes": ["4K", "64K"], "metrics": ["lat_mean"]}
PAIRING = [{"when": {}, "workloads": ["randwrite"]}]
SERIES = "ycsb/mysql/write-only/write/lat_mean/16GB"


def _card(**figs):
    return {"figures": [{"workload": "randwrite", "block_size": bs, "metric": "lat_mean", "value": v}
                        for bs, v in figs.items()]}


def _study(agg, **validate):
    settings = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["validate"]
    study = validation.Study(features=FEATS, series=None, pairing=PAIRING,
                             settings=validation.Settings.of({**settings, **validate}))
    return study, screen.screen(agg, FEATS, None, PAIRING, 3)


def test_a_card_with_every_figure_is_answered_by_the_study_s_own_nested_choice():
    agg, *_ = six_tiers()
    study, scr = _study(agg)
    out = validation.run_cards(study, {"all": _card(**{"4K": "3 us", "64K": "20 us"})}, agg, scr)
    own = validation.run_study(study, agg=agg, screened=scr)
    v = out["card_verdicts"].iloc[0]
    mine = own["verdicts"].iloc[0]
    assert v["model_mape"] == mine["interior_mape"] and v["baseline_mape"] == mine["interior_baseline_mape"]
    assert v["procedure"] == cardchoice.MODEL and v["heldout_mape"] == mine["interior_mape"]
    sel = out["card_selection"]
    assert list(sel["features"]) == list(own["nested_selection"]["features"])
    assert sel["score_mape"].tolist() == pytest.approx(own["nested_selection"]["score_mape"].tolist())


def test_a_card_whose_figures_explain_nothing_gets_the_devices_mean_with_its_own_error():
    """x4 is noise: no model of it beats the mean of the other devices on the interior tiers, so the
    answer is the devices' mean, its held-out error the baseline's (each interior device by the mean of
    the others), its interval above zero from the baseline's own misses."""
    agg, x64, x4, y = six_tiers()
    study, scr = _study(agg)
    out = validation.run_cards(study, {"x4": _card(**{"4K": "3 us"})}, agg, scr)
    v = out["card_verdicts"].iloc[0]
    assert v["model_mape"] > v["baseline_mape"]
    assert v["procedure"] == cardchoice.MEAN and v["heldout_mape"] == v["baseline_mape"]
    ys = np.array(list(y.values()))
    interior = [d for d in y if min(ys) < y[d] < max(ys)]
    by_hand = np.mean([abs(100 * ((ys.sum() - y[d]) / 5 - y[d]) / y[d]) for d in interior])
    assert v["baseline_mape"] == pytest.approx(by_hand)
    assert v["baseline"] == pytest.approx(ys.mean()) and 0 < v["baseline_lower"] < v["baseline"] < v["baseline_upper"]
    # its held-out folds are x4's line on the other devices, by hand
    folds = out["card_folds"].set_index("held_out")
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        b, a = np.polyfit([x4[e] for e in rest], [y[e] for e in rest], 1)
        if d in folds.index and folds.loc[d, "features"] == "randwrite_4K_lat_mean":
            assert folds.loc[d, "prediction"] == pytest.approx(a + b * x4[d])


def test_the_figure_worth_asking_for_and_the_error_it_would_bring():
    agg, *_ = six_tiers()
    study, scr = _study(agg)
    cards = {"x4": _card(**{"4K": "3 us"}), "all": _card(**{"4K": "3 us", "64K": "20 us"})}
    out = validation.run_cards(study, cards, agg, scr)
    value = out["figure_value"].set_index(["target", "family"])
    ask = value.loc[("x4", cardchoice.ALL)]
    full = out["card_verdicts"].set_index("target").loc["all", "heldout_mape"]
    assert ask["figure"] == "randwrite_64K_lat_mean" and ask["figure_text"] == "64K random-write mean latency"
    assert ask["error_with"] == pytest.approx(full) and ask["error_with"] < ask["error"]
    assert value.loc[("all", cardchoice.ALL), "figure"] == ""  # nothing left to ask for


def test_too_few_devices_for_a_choice_the_paper_s_line_checked_where_the_card_gives_one_figure():
    """Three devices: no nested choice can be checked (its inner folds would fit one device). A card
    with one candidate figure has no choice to check: the paper's line on it, checked leave one device
    out (the middle device by the line through the other two, by hand); with two, unchecked."""
    x64, x4 = {"a": 1.0, "b": 30.0, "c": 200.0}, {"a": 5.0, "b": 1.0, "c": 3.0}
    y = {d: 50 + 2 * x64[d] for d in x64}
    y["b"] *= 1.1
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    study, scr = _study(agg)
    out = validation.run_cards(study, {"one": _card(**{"64K": "20 us"}), "two": _card(**{"4K": "3 us", "64K": "20 us"})},
                               agg, scr)
    v = out["card_verdicts"].set_index("target")
    pred = hand_loo(np.array([x64[d] for d in "abc"]), np.array([y[d] for d in "abc"]))[1, 0]
    assert v.loc["one", "procedure"] == cardchoice.PAPER_CHECKED
    assert v.loc["one", "heldout_mape"] == pytest.approx(abs(100 * (pred - y["b"]) / y["b"]))
    assert v.loc["two", "procedure"] == cardchoice.PAPER and np.isnan(v.loc["two", "heldout_mape"])
    sel = out["card_selection"].set_index("target")
    assert sel.loc["one", "features"] == "randwrite_64K_lat_mean" and sel.loc["one", "procedure"] == cardchoice.PAPER


def test_baseline_interval_by_hand():
    Y = pd.DataFrame({"s": [10.0, 20.0, 40.0]}, index=["a", "b", "c"])
    b = cardchoice.baseline(Y, 0.95).loc["s"]
    misses = [abs(np.log(30 / 10)), abs(np.log(25 / 20)), abs(np.log(15 / 40))]
    q = max(misses)  # 3 misses at 95 %: the largest
    assert b["baseline"] == pytest.approx(70 / 3)
    assert b["baseline_lower"] == pytest.approx(70 / 3 * np.exp(-q)) and b["baseline_upper"] == pytest.approx(
        70 / 3 * np.exp(q))
