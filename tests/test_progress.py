"""Tests of benchcast.core.progress: lines per finished job and the time left, computed by hand."""

import time

from benchcast.core import progress
import pytest

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing


def test_lines_and_time_left_by_hand(tmp_path):
    fio = {"runtime": 2, "ramp_time": 1}  # 3 s per fio run
    ycsb = {"workloads": ["a", "b", "c", "d"], "maxexecutiontime": 2}  # 8 s per YCSB job
    planned = [progress.Planned("fio", (str(tmp_path / f"f{i}.json"),), progress.fio_weight(fio)) for i in range(4)]
    planned.append(progress.Planned("ycsb", (str(tmp_path / "y.csv"), str(tmp_path / "y")), progress.ycsb_weight(ycsb)))
    p = progress.Progress(planned, start=100.0)
    assert p.poll(now=101.0) == []
    (tmp_path / "f0.json").touch()
    (tmp_path / "f1.json").touch()
    lines = p.poll(now=112.0)
    # 6 s of weight took 12 s; 3 + 3 + 8 = 14 s of weight left -> 28 s
    assert lines[-1] == "benchcast: fio done: 2/5 benchmark runs (fio 2/4, ycsb 0/1), about 28 s left"
    assert len(lines) == 2
    (tmp_path / "y.csv").touch()  # one of the YCSB job's two outputs: not done yet
    assert p.poll(now=113.0) == []
    (tmp_path / "y").mkdir()
    # the YCSB job took 230 - 112 = 118 s; fio's rate stays 12 s / 6 s of weight: 6 s of fio weight
    # left -> 12 s
    assert p.poll(now=230.0) == ["benchcast: ycsb done: 3/5 benchmark runs (fio 2/4, ycsb 1/1), about 12 s left"]
    assert p.took == {0: 12.0, 1: 0.0, 4: 118.0}
    assert progress.eta(planned, {}, 5.0) is None
    assert progress.format_duration(3725) == "1 h 02 min" and progress.format_duration(95) == "1 min 35 s"
    assert progress.ooc_weight({"programs": ["stream", "stencil"], "working_sets": ["16M", "32M"], "passes": 3}) == 12


def test_the_watcher_thread_reports_and_stops(tmp_path):
    planned = [progress.Planned("ooc", (str(tmp_path / "o.csv"),), 1.0)]
    lines = []
    stop = progress.watch(progress.Progress(planned, start=time.monotonic()), lines.append, interval=0.05)
    (tmp_path / "o.csv").touch()
    deadline = time.monotonic() + 5
    while not lines and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    assert len(lines) == 1 and lines[0].startswith("benchcast: ooc done: 1/1 benchmark runs (ooc 1/1), about 0 s left")
