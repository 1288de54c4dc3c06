"""Cross-run validation on two small stored trees (tests/data/crossrun: parts of two real default
runs on different days): a model of tree A predicting B's devices from B's figures. The same tree
on both sides gives the same-run errors back; results of another day moved by hand move the
cross-run error as computed by hand; corrected values that take a day's speed out give the same-run
error back where the raw ones do not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchcast import config, records
from benchcast.config import configfiles
from benchcast.prediction import crossrun

DATA = Path(__file__).resolve().parent / "data" / "crossrun"
ROOT = Path(__file__).resolve().parents[1]


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


@pytest.fixture(scope="module")
def study():
    return config.validate(configfiles.read_file(ROOT / "config" / "config.yaml"))["studies"]["local"]


@pytest.fixture(scope="module")
def trees():
    a = crossrun.Tree(records.fill_settings(read(DATA / "a/aggregated.csv.gz")),
                      read(DATA / "a/validation/nested_selection.csv"), read(DATA / "a/validation/tiers.csv"))
    b = crossrun.Tree(records.fill_settings(read(DATA / "b/aggregated.csv.gz")), a.nested.iloc[0:0], a.tiers.iloc[0:0])
    return a, b


@pytest.fixture(scope="module")
def same(trees, study):
    a, _ = trees
    return crossrun.errors(a, a, study, "raw").set_index(["series", "device"])


def test_a_card_of_its_own_tree_is_the_same_run(same):
    """A against itself: the card is the device's own figures and the truth its own results, so
    the cross-run error is the same-run error, pair by pair; every series of the four families on
    every device is predicted, and the first tree's validation error stands beside it."""
    assert len(same) == 24 and same["same_run_pct_error"].notna().all()
    assert np.allclose(same["same_run_pct_error"], same["cross_run_pct_error"])
    assert same["validation_pct_error"].notna().all()
    assert set(same["position"]) == {"interior", "extreme"}
    table = crossrun.table(same.reset_index())
    assert set(table["family"]) == {"ycsb rocksdb read", "ycsb rocksdb write", "ycsb mariadb read",
                                    "ycsb mariadb write", "all YCSB"}
    assert np.allclose(table["ratio"], 1.0)


def test_results_of_another_day_moved_by_hand(trees, study, same):
    """B = A with zram's YCSB results 25 % slower (its fio figures as they were): zram's cross-run
    error is (1 + e/100) / 1.25 - 1 of its same-run error e; every other device's is unchanged."""
    a, _ = trees
    agg = a.aggregated.copy()
    hit = (agg["device"] == "zram") & (agg["benchmark"] == "ycsb") & (agg["metric"] == "lat_mean")
    agg.loc[hit, "value"] *= 1.25
    errs = crossrun.errors(a, crossrun.Tree(agg, a.nested, a.tiers), study, "raw").set_index(["series", "device"])
    zram = errs.xs("zram", level="device")
    want = ((1 + same.xs("zram", level="device")["same_run_pct_error"] / 100) / 1.25 - 1) * 100
    assert np.allclose(zram["cross_run_pct_error"], want)
    others = errs.drop(index="zram", level="device")
    assert np.allclose(others["cross_run_pct_error"], others["same_run_pct_error"])


def test_corrected_values_take_the_days_speed_out(trees, study):
    """B: the machine 20 % slower on the day zram was measured again - its figures and results 1.2 x
    as measured, but stated at the reference speed as A's. Raw, zram's cross-run errors move away
    from the same-run ones; corrected, they are the same-run ones."""
    a, _ = trees
    agg_a = a.aggregated.assign(corrected=a.aggregated["value"])
    agg_b = agg_a.copy()
    hit = (agg_b["device"] == "zram") & agg_b["unit"].isin(["us"])
    agg_b.loc[hit, "value"] *= 1.2
    ta, tb = crossrun.Tree(agg_a, a.nested, a.tiers), crossrun.Tree(agg_b, a.nested, a.tiers)
    raw = crossrun.errors(ta, tb, study, "raw").set_index(["series", "device"]).xs("zram", level="device")
    cor = crossrun.errors(ta, tb, study, "corrected").set_index(["series", "device"]).xs("zram", level="device")
    assert not np.allclose(raw["cross_run_pct_error"], raw["same_run_pct_error"])
    assert np.allclose(cor["cross_run_pct_error"], cor["same_run_pct_error"])
    assert set(crossrun.table(pd.concat([raw.reset_index(), cor.reset_index()]))["value"]) <= {"raw", "corrected"}


def test_the_cross_run_table_of_two_real_days(trees, study):
    """A model of tree A (today) predicting the devices of B (a run of another day) from B's figures:
    every family has interior pairs with finite errors on both sides; trees without corrected
    values (measured before the probe) give no corrected rows."""
    a, b = trees
    errs = pd.concat([crossrun.errors(a, b, study, v) for v in ("raw", "corrected")], ignore_index=True)
    table = crossrun.table(errs).set_index("family")
    assert set(table["value"]) == {"raw"}
    assert (table["pairs"] > 0).all() and table[["same_run_mape", "cross_run_mape"]].notna().all().all()
    assert table.loc["all YCSB", "pairs"] == table.drop(index="all YCSB")["pairs"].sum()
    print(table.round(1).to_string())
