"""benchcast.prediction.answers: every card and series answered with a number above zero, its interval
and the held-out error of the procedure that made it; one line per card."""
import copy

import numpy as np
import pandas as pd
import pytest

from analysis_util import CONFIG
from benchcast import config, validation
from benchcast.prediction import answers
from benchcast.screening import screen
from validation_util import six_tiers

FEATS = {"workloads": ["randwrite"], "block_sizes": ["4K", "64K"], "metrics": ["lat_mean"]}
PAIRING = [{"when": {}, "workloads": ["randwrite"]}]
CARDS = {"x64": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": "20 us"}]},
         "x4": {"figures": [{"workload": "randwrite", "block_size": "4K", "metric": "lat_mean", "value": "3 us"}]},
         # a datasheet's IOPS at queue depth 1: its mean latency by Little's law, 1 / 50000 s = 20 us
         "iops": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "iops", "value": "50000 IOPS"}]}}


def _answers():
    agg, x64, x4, y = six_tiers()
    settings = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["validate"]
    study = validation.Study(features=FEATS, series=None, pairing=PAIRING, settings=validation.Settings.of(settings))
    out = validation.run_cards(study, CARDS, agg, screen.screen(agg, FEATS, None, PAIRING, 3))
    c = answers.CardTables(out["card_figures"], out["card_verdicts"], out["card_selection"], out["figure_value"])
    return answers.answers(agg, FEATS, None, CARDS, c, settings), c, y


def test_every_card_answered_above_zero_with_its_procedure_s_error():
    table, c, y = _answers()
    assert list(table.columns) == answers.ANSWER_COLUMNS
    t = table.set_index("target")
    assert (table["prediction"] > 0).all() and (table["lower"] > 0).all() and (table["upper"] > table["lower"]).all()
    # x64 explains the results: its nested choice answers, with that choice's interior error
    v = c.verdicts.set_index("target")
    assert t.loc["x64", "status"] == answers.ANSWERED and t.loc["x64", "heldout_mape"] == v.loc["x64", "model_mape"]
    assert "64K random-write mean latency" in t.loc["x64", "figures"]
    # x4 explains nothing: the devices' mean, with the baseline's error
    assert t.loc["x4", "status"] == answers.BY_MEAN and t.loc["x4", "prediction"] == pytest.approx(np.mean(list(y.values())))
    assert t.loc["x4", "heldout_mape"] == v.loc["x4", "baseline_mape"]
    # a card giving IOPS is answered as the card giving the latency Little's law fixes from it
    assert t.loc["iops", "prediction"] == pytest.approx(t.loc["x64", "prediction"])
    assert "64K random-write mean latency (little)" in t.loc["iops", "figures"]


def test_sentences_and_card_lines_in_units_a_person_reads():
    table, c, _ = _answers()
    s = table.set_index("target").loc["x4", "line"]
    assert s.startswith("x4: mysql write-only write mean latency, 16 GB: ") and " us (" in s
    assert "the measured devices' mean" in s and "held-out error" in s
    lines = answers.card_lines(table, c.value)
    assert len(lines) == 3 and lines[1].startswith("x4: 1 of 1 series answered (0 from its figures, 1 by the devices' mean)")
    assert "ask for 64K random-write mean latency: all series" in lines[1]


def test_quantities_and_series_as_people_name_them():
    r = dict(benchmark="ooc", engine="swap", workload="add", op="pass", metric="lat_mean", unit="us", threads=1,
             data_size=128 * 2**20)
    assert answers.series_text(r) == "swap add pass time, 128 MiB"
    r = dict(r, status=answers.ANSWERED, target="T", procedure="the card's nested choice", prediction=240000.0,
             lower=96000.0, upper=599000.0, figures="randread 4K lat_mean", heldout_mape=12.34, floor_mape=5.0,
             verdict="predictable from device figures")
    assert answers.line(r) == ("T: swap add pass time, 128 MiB: 240 ms (96 ms-599 ms) from randread 4K lat_mean; "
                               "held-out error 12.3 % (noise floor 5 %); predictable from device figures")
    # beside the error, what the noise alone costs the study's procedure where its draws said
    assert answers.line(dict(r, noise_mape=9.06)).endswith(
        "held-out error 12.3 % (noise alone 9.06 %, noise floor 5 %); predictable from device figures")
    # an interval no rule could give is said, never an empty "(-)"
    assert "240 ms (no interval) from" in answers.line(dict(r, lower=np.nan, upper=np.nan))
    assert answers.family_text("ycsb mariadb update lat_mean (us)") == "mariadb update"


def test_no_answer_where_no_device_measured_enough():
    r = dict(target="T", benchmark="ycsb", engine="rocksdb", workload="read-only", op="read", metric="lat_mean",
             unit="us", threads=1, data_size=2 * 10**6, status=answers.NO_ANSWER)
    assert answers.line(r).endswith("no answer (fewer than two devices measured it)")
    empty = pd.DataFrame(columns=answers.ANSWER_COLUMNS)
    assert answers.card_lines(empty, pd.DataFrame(columns=["target"])) == []
