"""The CPU share of a run's request path: fio's own figures, a YCSB workload's window of the
benchmark cgroup's CPU time (readings interpolated by hand, the window from the histogram logs), an
out-of-core run's cgroup CPUs; a real sampler reading a real cgroup while a real spinner runs in it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from benchcast.sources.run import cpushare
from benchcast.sources.parse import fiojson
from benchcast.devices import benchcg
from devices_util import needs_root

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing


def test_fio_share_from_its_own_figures():
    assert fiojson.cpu_share({"usr_cpu": 24.7, "sys_cpu": 75.1}) == pytest.approx(0.998)
    assert fiojson.cpu_share({"usr_cpu": 80.0, "sys_cpu": 40.0}) == 1.0  # several threads: within [0, 1]
    assert math.isnan(fiojson.cpu_share({"usr_cpu": 1.0}))


def sampler(times, cpu):
    s = cpushare.Sampler(None)
    s.times, s.cpu = list(times), list(cpu)
    return s


def test_the_window_interpolated_by_hand():
    """Readings at 10.0, 10.5, 11.0, 11.5 s of 2.0, 2.25, 2.75, 2.85 CPU-s: over [10.25, 11.25]
    the cgroup used (2.80 - 2.125) = 0.675 CPU-s: a share of 0.675 for one thread, 0.3375 per
    thread for two; outside the readings unknown."""
    s = sampler([10.0, 10.5, 11.0, 11.5], [2.0, 2.25, 2.75, 2.85])
    assert s.cpu_at(10.25) == pytest.approx(2.125) and s.cpu_at(11.25) == pytest.approx(2.80)
    assert s.share(10.25, 1.0, threads=1) == pytest.approx(0.675)
    assert s.share(10.25, 1.0, threads=2) == pytest.approx(0.3375)
    assert math.isnan(s.share(9.0, 1.0, 1)) and math.isnan(s.share(11.0, 1.0, 1))
    assert sampler([0, 1], [0, 3]).share(0, 1, 1) == 1.0  # beside the path (compaction, JIT): within [0, 1]


def test_ycsb_workload_windows_from_the_histogram_logs(tmp_path):
    """Two workloads: the first's operations' logs start at 100.2 and 100.3 (its CLEANUP log at 101.5
    is not an operation), runtime 1000 ms: the window [100.2, 101.2]; the second's at 103.0 for 500
    ms. CPU 0.4 CPU-s per s in the first window, 0.9 in the second."""
    def logs(stem, starts):
        for op, t in starts.items():
            (tmp_path / f"{stem}.{op}.hdr").write_text(f"#[Logging for: {op}]\n#[Histogram log format version 1.3]\n"
                                                     f"#[StartTime: {t} (seconds since epoch), x]\n")
        return str(tmp_path / f"{stem}.txt")

    raw1 = logs("01-a", {"READ": 100.2, "UPDATE": 100.3, "CLEANUP": 101.5})
    raw2 = logs("02-b", {"READ": 103.0})
    rows = []
    for raw, w, ms in ((raw1, "a", 1000.0), (raw2, "b", 500.0)):
        rows += [{"workload": w, "op": "overall", "metric": "runtime", "value": ms, "raw": raw, "threads": 1},
                 {"workload": w, "op": "read", "metric": "lat_mean", "value": 50.0, "raw": raw, "threads": 1}]
    rows.append({"workload": "a", "op": "device", "metric": "reads_per_op", "value": 1.0, "raw": "", "threads": 1})
    s = sampler([100.0, 101.2, 103.0, 103.5], [1.0, 1.48, 2.0, 2.45])
    out = cpushare.ycsb_shares(pd.DataFrame(rows), s)
    assert out["cpu_share"].tolist()[:4] == pytest.approx([0.4, 0.4, 0.9, 0.9])
    assert math.isnan(out["cpu_share"].iloc[4])
    assert cpushare.log_start(tmp_path / "01-a.READ.hdr") == 100.2
    assert math.isnan(cpushare.log_start(tmp_path / "missing.hdr"))


def test_an_out_of_core_run_takes_its_cgroups_cpus():
    assert cpushare.run_share({"bench_cpu": 0.73}) == 0.73
    assert cpushare.run_share({"bench_cpu": 1.4}) == 1.0
    assert math.isnan(cpushare.run_share(None)) and math.isnan(cpushare.run_share({"bench_cpu": float("nan")}))


@needs_root
def test_a_real_sampler_on_a_real_cgroup_with_a_spinner_in_it():
    """A spinner moved into a CPU cgroup made here spins for 0.6 s of a 1 s window: the sampler's
    share of the window is the CPU time the spinner got (its own rusage; on a busy machine less
    than 0.6), not the 0 before it started; the cgroup goes."""
    where = benchcg.layout()
    if where is None:
        pytest.skip("no CPU accounting cgroup")
    cg = where["acct"] / f"benchcast-cpu-test-{os.getpid()}"
    cg.mkdir()
    spin = None
    try:
        s = cpushare.sampled(cg)
        time.sleep(0.3)
        t0 = time.time()
        code = "import time\nt = time.time() + 0.6\nwhile time.time() < t:\n    pass\n"
        spin = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(0.1)\n{code}"])
        (cg / "cgroup.procs").write_text(str(spin.pid))
        _, _, usage = os.wait4(spin.pid, 0)
        spin.returncode = 0
        time.sleep(0.3)
        s.stop()
        assert s.share(t0 - 0.25, 0.2, 1) < 0.05
        got = usage.ru_utime + usage.ru_stime
        assert got > 0.1 and s.share(t0, 1.0, 1) == pytest.approx(got, abs=0.05), (got, s.share(t0, 1.0, 1))
    finally:
        if spin and spin.poll() is None:
            spin.kill()
        errors: list = []
        from benchcast.devices import cgroups

        assert cgroups.cgroup_remove(str(cg), errors), errors


def test_what_a_runs_records_take_from_the_interference_records(tmp_path):
    """Two runs 30 s apart whose CPU probes took 10 ms and 12.5 ms (reference 10 ms; the speed of the
    CPU probe): own speeds 1.0 and 0.8; within a 60 s window each is corrected with their median 0.9, without one with its own;
    the first's thread had the CPU 90 % of the probes' time; an out-of-core run also takes its
    cgroup's CPUs as its share; a run measured before the probe has none of them."""
    for i, (ms, t) in enumerate(((10.0, 100.0), (12.5, 130.0))):
        rec = {"cpu_ms_before": ms, "mem_ms_before": 11.0, "cpu_ms_after": ms, "mem_ms_after": 11.0,
               "on_cpu_before": 0.9, "on_cpu_after": 0.9, "bench_cpu": 0.35, "started": t}
        (tmp_path / f"quality-run{i}.json").write_text(json.dumps(rec))
    outs = [str(tmp_path / f"run{i}.csv") for i in range(3)]
    settings = {"reference": {"cpu_ms": 10.0, "mem_ms": 11.0}, "probes": ["cpu"], "window": 60}
    speeds = cpushare.run_speeds(outs, settings)
    assert len(speeds) == 2 and speeds["speed_run"].tolist() == pytest.approx([1.0, 0.8])
    first = cpushare.run_columns(outs[0], speeds, "ycsb")
    assert first == {"speed": pytest.approx(0.9), "speed_run": pytest.approx(1.0), "cpu_available": pytest.approx(0.9)}
    alone = cpushare.run_speeds(outs, {**settings, "window": 0})
    assert cpushare.run_columns(outs[1], alone, "fio")["speed"] == pytest.approx(0.8)
    assert cpushare.run_columns(outs[0], speeds, "ooc")["cpu_share"] == 0.35
    old = cpushare.run_columns(outs[2], speeds, "fio")
    assert math.isnan(old["speed"]) and math.isnan(old["cpu_available"])
