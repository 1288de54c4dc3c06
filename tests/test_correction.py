"""Figures stated at a reference speed: the correction computed by hand on a synthetic record (CPU
share, speed ratio), the raw value kept, what cannot be corrected left unknown, and the analysis's
choice of value."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchcast import aggregate, records
from benchcast.records import correction


def rec(value, unit, metric, share, speed, run=0):
    return {"study": "s", "source": "fio", "device": "dram", "benchmark": "fio", "engine": "psync",
            "workload": "randread", "block_size": 4096, "threads": 1, "data_size": 0, "op": "read",
            "metric": metric, "unit": unit, "value": value, "run": run, "cpu_share": share, "speed": speed}


def test_the_correction_by_hand():
    """A run at speed 0.8 (its probes took 1/0.8 of the reference's time) whose request path was on
    the CPU 60 % of the time: at speed 1.0 the CPU part takes 0.8 of its time, so a 100 us latency
    is 40 + 60 x 0.8 = 88 us and a rate of 1000 ops/s 1000 / 0.88; stated at speed 0.5 instead, the
    CPU part takes 0.8 / 0.5 = 1.6 of its time: 40 + 96 = 136 us. A count stays what it was."""
    df = records.make([rec(100.0, "us", "lat_mean", 0.6, 0.8), rec(1000.0, "ops/s", "iops", 0.6, 0.8),
                       rec(4e6, "B/s", "bw", 0.6, 0.8), rec(7.0, "1/op", "reads_per_op", 0.6, 0.8)])
    out = correction.correct(df, 1.0)
    assert list(out["value"]) == [100.0, 1000.0, 4e6, 7.0]  # the raw values stay
    assert out["corrected"].tolist() == pytest.approx([88.0, 1000 / 0.88, 4e6 / 0.88, 7.0])
    assert set(out["corrected_speed"]) == {1.0}
    assert correction.correct(df, 0.5)["corrected"].iloc[0] == pytest.approx(136.0)
    # a run at the reference speed, or without CPU work on its path, is as measured
    assert correction.factor(0.6, 1.0, 1.0) == pytest.approx(1.0)
    assert correction.factor(0.0, 0.5, 1.0) == pytest.approx(1.0)
    # a share above 1 (CPU work beside the path) counts as the whole path
    assert correction.factor(1.7, 0.8, 1.0) == pytest.approx(0.8)
    # a run that had its CPU half the time (a neighbour at its weight): 30 % CPU time is 60 % of
    # the wall time, corrected as a 60 % share; unknown availability counts as the whole CPU
    assert correction.factor(0.3, 0.8, 1.0, 0.5) == pytest.approx(0.88)
    assert correction.factor(0.3, 0.8, 1.0, float("nan")) == pytest.approx(0.94)


def test_without_share_or_speed_nothing_is_corrected():
    df = records.make([rec(100.0, "us", "lat_mean", math.nan, 0.8), rec(50.0, "us", "lat_mean", 0.5, math.nan)])
    out = correction.correct(df)
    assert out["corrected"].isna().all() and out["corrected_speed"].isna().all()
    # records written before these columns existed: both unknown, the file still reads
    old = records.make([rec(100.0, "us", "lat_mean", 0.5, 0.8)]).drop(columns=["cpu_share", "speed"])
    assert correction.correct(old)["corrected"].isna().all()


def test_the_analysis_takes_the_raw_values_unless_told():
    """aggregate: ``value`` the trimmed mean of the raw values, ``corrected`` of the corrected ones
    beside it; with value=corrected the analysis takes those (a record without one as measured)."""
    runs = [rec(v, "us", "lat_mean", 0.5, s, run=i) for i, (v, s) in enumerate([(100, 0.8), (110, 0.9), (300, 1.0)])]
    df = correction.correct(records.make(runs))  # corrected 90, 104.5, 300
    agg = aggregate.aggregate(df, trim=1)
    assert agg["value"].iloc[0] == pytest.approx(110) and agg["corrected"].iloc[0] == pytest.approx(104.5)
    agg = aggregate.aggregate(df, trim=1, value="corrected")
    assert agg["value"].iloc[0] == pytest.approx(104.5)
    mixed = pd.concat([df, records.make([rec(50.0, "us", "lat_mean", 0.5, 0.8)]).assign(device="zram")])
    stated = correction.stated(mixed, "corrected")
    assert stated.loc[stated["device"] == "zram", "value"].iloc[0] == 50.0
    assert aggregate.aggregate(records.make(runs), trim=1)["corrected"].isna().all()
