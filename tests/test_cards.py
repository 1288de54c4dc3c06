"""Tests of benchcast.features.cards: a card's figures as the study's, given and fixed by the datasheet
rules, with their provenance."""
import pytest

from analysis_util import make_agg
from benchcast import features
from benchcast.features import cards

GRID = {("randread", 4096, "lat_mean"): 1.0, ("randread", 16384, "lat_mean"): 1.0, ("randread", 16384, "bw"): 1.0,
        ("randread", 16384, "clat_p50"): 1.0, ("randwrite", 65536, "lat_mean"): 1.0}
FEATS = features.feature_table(make_agg({d: GRID for d in "abc"}, {d: 1.0 for d in "abc"}))
OPTANE = {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": "8.9 us"},
                      {"workload": "read", "block_size": "128K", "metric": "bw", "value": "2.4 GB/s"}]}


def test_card_figures_given_and_derived_with_their_rule():
    t = cards.card_figures({"O": OPTANE}, FEATS).set_index("feature")
    assert t.at["randread_4K_lat_mean", "rule"] == "given" and t.at["read_128K_bw", "rule"] == "given"
    r16 = t.loc["randread_16K_lat_mean"]
    assert r16["rule"] == "transfer" and r16["value"] == pytest.approx(8.9 + 12288 / 2.4e9 * 1e6)
    assert r16["inputs"] == "randread_4K_lat_mean, read_128K_bw" and "2400 MB/s" in r16["how"]
    bw = t.loc["randread_16K_bw"]
    assert bw["rule"] == "little" and bw["value"] == pytest.approx(16384 / (r16["value"] * 1e-6))
    assert bw["unit"] == "B/s" and r16["unit"] == "us"
    # no rule fixes a median, nor a write from reads
    assert "randread_16K_clat_p50" not in t.index and "randwrite_64K_lat_mean" not in t.index


def test_expanded_cards_carry_the_derived_figures_as_plain_numbers():
    e = cards.expanded({"O": OPTANE}, FEATS)
    T = features.target_figures(e)
    assert T.at["O", "randread_16K_lat_mean"] == pytest.approx(14.02)
    assert T.at["O", "randread_4K_lat_mean"] == 8.9  # the given figure, as given
    assert len(e["O"]["figures"]) > len(OPTANE["figures"]) and OPTANE["figures"][0] in e["O"]["figures"]


def test_card_names_and_what_one_more_figure_would_give():
    names = cards.card_names({"O": OPTANE}, FEATS)["O"]
    assert names == {"randread_4K_lat_mean", "randread_16K_lat_mean", "randread_16K_bw"}
    measured = set(FEATS["feature"])
    grown = cards.grown_names("O", OPTANE, FEATS, measured)
    assert set(grown) == measured - names
    assert grown["randread_16K_clat_p50"] == names | {"randread_16K_clat_p50"}
    # a write latency at 64K: given, nothing more (no write rate on the card)
    assert grown["randwrite_64K_lat_mean"] == names | {"randwrite_64K_lat_mean"}


def test_feature_texts():
    t = cards.feature_texts(FEATS)
    assert t["randread_16K_clat_p50"] == "16K random-read median latency"
    assert t["randwrite_64K_lat_mean"] == "64K random-write mean latency"
