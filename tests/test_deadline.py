"""Tests of benchcast.sources.run.deadline: a benchmark process's deadline from what it was asked to do and
the run's settings, by hand."""
import json

import pytest

from benchcast import config
from benchcast.sources.run import deadline, quality

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

P = {"factor": 5, "margin_s": 120, "layout_mb_s": 1, "ops_per_s": 50}


def test_fio_s_deadline_is_its_ramp_runtime_and_files_times_the_factor_plus_the_margin():
    cell = {"ramp_time": 2, "runtime": 1, "size": 64 * 2**20, "numjobs": 2}
    seconds, how = deadline.fio_seconds(cell, P)
    assert seconds == pytest.approx(120 + 5 * (2 + 1 + 2 * 64 * 2**20 / 1e6))
    assert how == "5 x (ramp 2 s + runtime 1 s + 128 MiB laid out at 1 MB/s) + 120 s"


def test_a_ycsb_phase_s_deadline_is_its_time_or_its_operations_at_the_slowest_rate():
    assert deadline.ycsb_seconds(P, seconds=1, operations=1000) == (125.0, "5 x 1 s + 120 s")
    seconds, how = deadline.ycsb_seconds(P, operations=16000)
    assert seconds == pytest.approx(120 + 5 * 16000 / 50) and how == "5 x 16000 operations at 50/s + 120 s"


def test_the_job_takes_the_run_s_settings_else_the_schema_s(monkeypatch):
    monkeypatch.delenv(quality.GUARD_ENV, raising=False)
    assert deadline.policy() == config.defaults("deadline")
    mine = {**P, "factor": 2}
    monkeypatch.setenv(quality.GUARD_ENV, json.dumps(quality.guard_settings({"deadline": mine})))
    assert deadline.policy() == mine


def test_the_line_names_the_process_and_the_deadline():
    assert deadline.expired("fio", 127.4, "how") == ("fio did not finish within its deadline of 127 s (how): stopped, "
                                                     "with all it started")


def test_a_phase_s_given_timeout_wins(monkeypatch):
    monkeypatch.delenv(quality.GUARD_ENV, raising=False)
    assert deadline.ycsb_phase(30) == (30.0, "given")
    d = config.defaults("deadline")
    assert deadline.ycsb_phase(None, seconds=2)[0] == pytest.approx(d["margin_s"] + d["factor"] * 2)
