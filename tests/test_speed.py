"""The speed reference: a run's speed from its probes computed by hand; the probe in a real fio run's
interference record, and a real spinner on the same CPU slowing both the run and its probe, so that
the latency stated at the unspun run's speed comes back near the unspun run's own."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import pytest

from benchcast.records import correction
from benchcast.sources.run import fio, quality
from benchcast.sources.parse import fiojson
from benchcast.core import speed
from devices_util import clean, needs_root  # noqa: F401

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

#: A spinner that waits for its go file (argv[1]), then spins for a minute at most.
SPIN = ("import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.01)\n"
        "t = time.time() + 60\nwhile time.time() < t:\n    pass\n")
SMALL = {"type": "fio", "size": "16M", "runtime": 2, "ramp_time": 0, "repeats": 1, "rw": ["randread"],
         "block_sizes": ["4K"], "direct": False}


def test_speed_by_hand():
    """Reference 12 ms (CPU) and 11 ms (memory); a run whose CPU probe took 15 ms before it and 13.33
    ms after: its CPU speed the geometric mean of 12/15 and 12/13.33 = sqrt(0.8 x 0.9); its memory
    probe 11 and 22 ms: memory speed sqrt(1 x 0.5); both probes: the geometric mean of all four."""
    rec = {"cpu_ms_before": 15.0, "mem_ms_before": 11.0, "cpu_ms_after": 12 / 0.9, "mem_ms_after": 22.0,
           "on_cpu_before": 0.9, "on_cpu_after": 0.7}
    ref = {"cpu_ms": 12.0, "mem_ms": 11.0}
    assert speed.speed(rec, ref, ["cpu"]) == pytest.approx((0.8 * 0.9) ** 0.5)
    assert speed.speed(rec, ref, ["mem"]) == pytest.approx(0.5 ** 0.5)
    assert speed.speed(rec, ref, ["cpu", "mem"]) == pytest.approx((0.8 * 0.9 * 0.5) ** 0.25)
    assert speed.availability(rec) == pytest.approx(0.8) and math.isnan(speed.availability({}))
    # only the probes there are; none at all (a run measured before the probe): unknown
    assert speed.speed({"cpu_ms_before": 24.0}, ref, ["cpu", "mem"]) == pytest.approx(0.5)
    assert math.isnan(speed.speed({"other_cpu": 0.1}, ref, ["mem"]))


def test_the_speed_around_a_run_by_hand():
    """Runs started at 0, 10, 50, 200 s with own speeds 1.0, 0.8, 0.9, 0.5, window 60 s: the first
    three see each other (median 0.9), the last only itself; a run without a speed is left out of
    its neighbours' medians, one without a start keeps its own."""
    got = speed.smoothed([0, 10, 50, 200], [1.0, 0.8, 0.9, 0.5], 60)
    assert got == pytest.approx([0.9, 0.9, 0.9, 0.5])
    assert speed.smoothed([0, 10, 20], [1.0, float("nan"), 0.8], 60) == pytest.approx([0.9, 0.9, 0.9])
    assert speed.smoothed([0, float("nan")], [1.0, 0.7], 60) == pytest.approx([1.0, 0.7])
    assert speed.smoothed([0, 10], [1.0, 0.8], 0) == pytest.approx([1.0, 0.8])  # no window: its own


def test_the_probe_is_short_and_steady():
    """Each probe takes milliseconds, tens at most (the default run's budget: 3 % for about 400
    runs, two probes each); the median of five within twice the second fastest (a shared machine: other work
    takes turns, and one probe now and then runs at half the others' time: memory 5.0 ms beside 6.4-12.1 ms)."""
    speed.prepare()
    times = [speed.probe("before") for _ in range(5)]
    cpu, mem = [t["cpu_ms_before"] for t in times], [t["mem_ms_before"] for t in times]
    assert all(0 < t["on_cpu_before"] <= 1 for t in times)
    assert 0 < min(cpu) < 60 and 0 < min(mem) < 60, (cpu, mem)
    assert sorted(cpu)[2] < 2 * sorted(cpu)[1] and sorted(mem)[2] < 2 * sorted(mem)[1], (cpu, mem)


def run_on_cpu0(clean, name: str, spinner: bool) -> dict:
    """One real fio run on a tmpfs, this process (and so fio) on CPU 0, beside a nice-0 spinner on
    the same CPU (started once the run holds the machine's benchmark lock) or not; its interference
    record, lat_mean and CPU share."""
    spec = {"kind": "tmpfs", "size": "64M"}
    cell = fio.expand_grid(SMALL, {"d": spec})[0]
    go = clean / f"{name}.go"
    spin = None
    if spinner:  # started now, outside the run's cgroups, spinning once the run is about to begin
        spin = subprocess.Popen([sys.executable, "-c", SPIN, str(go)], preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    real = quality.wait_before_run

    def go_spin(settings=None):
        go.touch()
        time.sleep(0.3)
        return real(settings)

    was = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})
    out = clean / f"{name}.json"
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(quality, "wait_before_run", go_spin)
            fio.run_cell("d", spec, clean / "d.json", cell, 0, clean / f"{name}.fio", out)
    finally:
        os.sched_setaffinity(0, was)
        if spin:
            spin.kill()
            spin.wait()
    recs = fiojson.parse(out, study="s", device="d")
    lat = recs[(recs["op"] == "read") & (recs["metric"] == "lat_mean")]
    return {"record": json.loads(quality.sidecar(out).read_text()), "lat": float(lat["value"].iloc[0]),
            "share": float(lat["cpu_share"].iloc[0])}


@needs_root
def test_a_real_spinner_slows_the_run_and_its_probe(clean):
    """Beside a spinner on its CPU the run's probes take longer (speed well below the unspun run's,
    the probe's thread on the CPU about half its time) and so does the tmpfs read, nearly all CPU
    work; both stated at one speed, the spun latency lands nearer the unspun one than it was
    measured (the correction explains at least half of the slowdown)."""
    from benchcast import devices

    try:
        quiet = run_on_cpu0(clean, "quiet", spinner=False)
        spun = run_on_cpu0(clean, "spun", spinner=True)
    finally:
        devices.teardown(clean / "d.json")
    ref = {"cpu_ms": 10.0, "mem_ms": 10.0}
    s_quiet, s_spun = (speed.speed(r["record"], ref, ["cpu", "mem"]) for r in (quiet, spun))
    a_quiet, a_spun = speed.availability(quiet["record"]), speed.availability(spun["record"])
    assert s_spun < 0.8 * s_quiet and a_spun < 0.8 * a_quiet, (quiet["record"], spun["record"])
    assert spun["lat"] > 1.25 * quiet["lat"], (quiet, spun)
    assert spun["share"] / a_spun > 0.6  # a tmpfs read is CPU work
    stated = [r["lat"] * float(correction.factor(r["share"], s, 1.0, a))
              for r, s, a in ((quiet, s_quiet, a_quiet), (spun, s_spun, a_spun))]
    assert abs(stated[1] / stated[0] - 1) < 0.5 * abs(spun["lat"] / quiet["lat"] - 1), (quiet, spun, stated)
