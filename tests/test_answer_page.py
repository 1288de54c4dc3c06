"""Tests of benchcast.report.answer_page: the report's answer page from a small hand-made answers table
(two targets, three series), figure-value, card-figures and verdicts tables, every number checked by hand."""
import numpy as np
import pandas as pd
import pytest

from benchcast import BenchcastError
from benchcast.report import answer_page
from report_util import ROCKS, answer, answers, card_figures, figure_value, verdicts


def test_the_answer_table_by_hand():
    t = answer_page.answer_table(answers())
    assert list(t.columns) == ["application", "result", "data size", "A", "A error", "B", "B error", "noise alone",
                               "noise floor"]
    # one row per series, in the series' key order: mariadb before rocksdb, then by data size
    assert list(t["application"]) == ["mariadb read-only", "rocksdb write-only", "rocksdb write-only"]
    assert list(t["result"]) == ["read lat_mean (us)", "update lat_mean (us)", "update lat_mean (us)"]
    assert list(t["data size"]) == ["16 MiB, 1 thread", "2 MB", "4 MB"]
    maria, small, large = t.to_dict("records")
    assert maria["A"] == "55.5" and maria["B"] == "no answer"  # no interval known; nothing for B
    assert small["A"] == "120 [100-150]" and small["B"] == "300 [150-600] (mean)"
    assert (small["A error"], small["B error"]) == ("12 %", "40 %")
    assert large["A"] == "1,230 [1,000-1,500]" and large["B"] == "2,340 [2,000-2,700]"
    # the noise floor of the series: one value, or the lowest-highest where the cards' differ
    assert small["noise floor"] == "6 %" and large["noise floor"] == "6-7 %"
    # what the noise alone costs the study's procedure, where its draws said (none: blank)
    assert small["noise alone"] == "9 %" and large["noise alone"] == ""


def test_the_databases_before_the_out_of_core_programs():
    """The keys sort "ooc" before "ycsb"; the page shows the databases first, on both tables."""
    ooc = dict(ROCKS, benchmark="ooc", engine="mmap", workload="add", op="pass")
    a = pd.concat([pd.DataFrame([answer("A", ooc, 2**24, prediction=9.0, heldout=30.0, floor=6.0)]), answers()],
                  ignore_index=True)
    assert list(answer_page.answer_table(a)["application"]) == ["mariadb read-only", "rocksdb write-only",
                                                                "rocksdb write-only", "mmap add"]
    v = pd.concat([pd.DataFrame([dict(ooc, interior_mape=30.0, interior_floor_mape=6.0, interior_baseline_mape=60.0,
                                      verdict="predictable")]), verdicts()], ignore_index=True)
    assert list(answer_page.how_good(v)["family"]) == ["mariadb read lat_mean (us)", "rocksdb update lat_mean (us)",
                                                       "mmap pass lat_mean (us)"]


def test_how_good_per_family_by_hand():
    g = answer_page.how_good(verdicts()).set_index("family")
    rocks = g.loc["rocksdb update lat_mean (us)"]
    assert rocks["series"] == 2
    assert rocks["held-out error (%)"] == pytest.approx(15.0) and rocks["noise floor (%)"] == pytest.approx(6.0)
    assert rocks["noise alone (%)"] == pytest.approx(8.5)
    assert rocks["ratio"] == pytest.approx(2.5) and rocks["baseline error (%)"] == pytest.approx(40.0)
    assert set(rocks["verdicts"].split(", ")) == {"1 predictable", "1 beats the baseline but misses the tolerance"}
    maria = g.loc["mariadb read lat_mean (us)"]
    assert np.isnan(maria["held-out error (%)"]) and maria["verdicts"] == "1 too few devices to judge"
    assert answer_page.how_good(verdicts().iloc[:0]).empty


def test_the_figure_worth_asking_for_per_card_and_family():
    t = answer_page.asking(figure_value())
    assert list(t["card"]) == ["A", "B", "B"] and list(t["family"]) == ["all series", "rocksdb update", "all series"]
    assert t.iloc[0]["ask for"] == "no one figure cuts it" and t.iloc[0]["error then"] == ""
    assert (t.iloc[1]["ask for"], t.iloc[1]["held-out error"], t.iloc[1]["error then"]) == \
        ("randread 16K lat_mean", "29 %", "13 %")


def test_the_page_leads_with_the_answer():
    page = answer_page.page("local", answers(), verdicts(), ["local: noise floor 6.0 % is within the 10 % tolerance"],
                            figure_value(), card_figures())
    assert page.isascii()
    parts = ("what the application would do on A, B", "The answers", "The figure worth asking for",
             "What each card gives", "How good is it", "How clean was the measurement")
    at = [page.index(s) for s in parts]
    assert at == sorted(at)
    assert "<li>A: 3 of 3 series answered (3 from its figures, 0 by the devices&#x27; mean)" in page
    assert "ask for randread 16K lat_mean: all series 29 % -&gt; 12 %, rocksdb update 29 % -&gt; 13 %" in page
    assert 'title="A rocksdb 4000000: a sentence"' in page  # each cell's sentence as its tooltip
    assert "1.31 GB/s" in page and "randwrite 64K bw = 1 in flight / 50 us x 64K" in page
    assert "<td colspan=\"7\">rocksdb write-only: update lat_mean (us)</td>" in page.replace(' class="group"', "")


def test_never_a_number_that_cannot_be_true():
    """A latency is above zero: a prediction at or below zero is not shown, a lower bound at or
    below zero opens the interval below."""
    a = answers()
    a.loc[0, "lower"] = -3.0
    a.loc[2, "prediction"] = -1.0
    t = answer_page.answer_table(a)
    assert t.loc[1, "A"] == "120 [up to 150]" and t.loc[2, "A"] == "no prediction above zero"
    assert "-" not in "".join(t["A"].str.replace(r"\d-\d", "", regex=True))


def test_a_bad_answers_table_is_named():
    with pytest.raises(BenchcastError, match="missing column.*procedure"):
        answer_page.answer_table(answers().drop(columns=["procedure"]))
    with pytest.raises(BenchcastError, match="status 'maybe'"):
        answer_page.answer_table(answers().assign(status="maybe"))


def test_numbers_as_people_read_them():
    assert [answer_page.number(v) for v in (1666.49, 15.24, 0.012345, 2.5e6)] == ["1,670", "15.2", "0.0123",
                                                                                   "2,500,000"]
