"""Interference records: the figures of an interval computed by hand; a real fio run beside a real
spinner started and stopped here (its CPU shows as other CPU, fio's as the benchmark's); nothing
left behind (cgroups, processes, partial files), also after a failure."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchcast import BenchcastError, devices
from benchcast.sources.run import fio, quality
from benchcast.devices import benchcg, delayed
from devices_util import clean, needs_root  # noqa: F401

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"type": "fio", "size": "16M", "runtime": 2, "ramp_time": 0, "repeats": 1, "rw": ["randread"],
         "block_sizes": ["4K"], "direct": False}
SPIN = "import time\nt = time.time() + 60\nwhile time.time() < t:\n    pass\n"


def snap(t, cpu_some, io_full, busy, steal, total, bench_ns, niced=0.0):
    p = {k: 0.0 for k in quality.FIGURES[:6]}
    return {"time": t, "pressure": {**p, "cpu_some": cpu_some, "io_full": io_full},
            "cpu": {"busy": busy, "niced": niced, "steal": steal, "total": total}, "bench_ns": bench_ns}


def test_figures_by_hand():
    """10 s; cpu some stalled 2 s, io full 0.5 s; the machine was busy 15 CPU-s of 40, the run's
    cgroup used 6 s of them, 4 CPU-s were stolen: other CPU (15 - 6) / 10 = 0.9 CPUs."""
    a = snap(100.0, 1e6, 0.0, 50.0, 1.0, 400.0, 1e9)
    b = snap(110.0, 3e6, 5e5, 65.0, 5.0, 440.0, 7e9)
    f = quality.figures(a, b)
    assert f["wall_s"] == pytest.approx(10)
    assert f["cpu_some"] == pytest.approx(0.2) and f["io_full"] == pytest.approx(0.05)
    assert f["memory_some"] == 0
    assert f["steal"] == pytest.approx(0.1)
    assert f["bench_cpu"] == pytest.approx(0.6) and f["other_cpu"] == pytest.approx(0.9)
    assert f["niced_cpu"] == 0
    # no cgroup: other CPU unknown, not zero
    assert math.isnan(quality.figures({**a, "bench_ns": math.nan}, {**b, "bench_ns": math.nan})["other_cpu"])


def test_work_at_a_positive_nice_value_is_recorded_apart_by_hand():
    """Besides the 9 CPU-s of other work at nice 0, 8 CPU-s ran at a positive nice value: other CPU
    stays 0.9, niced CPU 0.8; a job that itself runs niced finds its benchmark in the nice bucket."""
    a = snap(100.0, 0.0, 0.0, 50.0, 0.0, 400.0, 1e9, niced=10.0)
    b = snap(110.0, 0.0, 0.0, 65.0, 0.0, 440.0, 7e9, niced=18.0)
    f = quality.figures(a, b)
    assert f["other_cpu"] == pytest.approx(0.9) and f["niced_cpu"] == pytest.approx(0.8)
    code = ("import os, sys, json\nos.nice(5)\nsys.path.insert(0, 'scripts')\nfrom benchcast.sources.run import quality\n"
            f"print(json.dumps(quality.figures({a!r}, {b!r})))")
    got = json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                    check=True).stdout)
    assert got["niced_cpu"] == pytest.approx(0.2) and got["other_cpu"] == pytest.approx(1.5)


def test_guard_settings_from_the_config_and_the_environment(monkeypatch):
    """The jobs get the shield (only its set keys), the wait and the deadlines in the environment;
    none: as before (the deadlines then the schema's, benchcast.sources.run.deadline)."""
    deadline = {"factor": 5, "margin_s": 120, "layout_mb_s": 4, "ops_per_s": 50}
    run = {"shield": {"cpu_shares": 4096, "nice": None}, "interference": {"wait_run": 20, "other_cpu": 0.5},
           "deadline": deadline}
    g = quality.guard_settings(run)
    assert g == {"shield": {"cpu_shares": 4096}, "wait_run": 20, "other_cpu": 0.5, "deadline": deadline}
    monkeypatch.delenv(quality.GUARD_ENV, raising=False)
    assert quality.guard() == {"shield": {}, "wait_run": 0, "other_cpu": None, "deadline": None}
    monkeypatch.setenv(quality.GUARD_ENV, json.dumps(g))
    assert quality.guard() == g


@pytest.mark.quiet
def test_our_own_niced_work_is_taken_from_the_nice_bucket_in_every_look():
    """A run started niced (``nice ./benchcast.sh run``): the before-measuring look excludes its
    processes from the nice bucket, where their time is, so a niced spinner of its own is neither
    other work at a positive nice value nor (taken from the wrong bucket) hides other work at nice 0."""
    code = ("import os, sys, json, subprocess, time\nos.nice(10)\nsys.path.insert(0, 'scripts')\n"
            "from benchcast.sources.run import quality\n"
            f"spin = subprocess.Popen([sys.executable, '-c', {SPIN!r}])\ntime.sleep(0.3)\n"
            "now = quality.machine_now(1.0, exclude=[spin.pid], top=0)\nspin.kill()\n"
            "print(json.dumps(now))")
    background = quality.machine_now(1.0, top=0)["niced"]
    if background > 0.5:
        pytest.skip(f"{background:.1f} CPUs of other niced work: the spinner would not show beside it")
    got = json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                    check=True).stdout)
    assert got["niced"] < background + 0.4, (got, background)


def test_the_first_look_spans_the_jobs_start_up():
    """A job that began its look at start-up (:func:`quality.start_look`) and spent it busy itself:
    its own CPU is not other work, and the run starts without a pause of its own; a real spinner
    during the start-up is seen by that first look, and the run waits for it to end."""
    import time

    background = quality.machine_now(1.0, top=0)["busy"]
    if background > 0.8:
        pytest.skip(f"{background:.1f} CPUs of other work: a spinner would not show beside it")
    quiet = background + 0.6
    quality.start_look()
    t = time.monotonic() + 0.4
    while time.monotonic() < t:  # the job's own start-up: a core busy
        pass
    t0 = time.monotonic()
    assert quality.wait_before_run({"wait_run": 5, "other_cpu": quiet}) == 0.0
    assert time.monotonic() - t0 < quality.LOOK_S / 2  # the start-up was the look
    quality.start_look()
    code = "import time\nt = time.time() + 0.6\nwhile time.time() < t:\n    pass\n"
    spinner = subprocess.Popen([sys.executable, "-c", code])  # not the job's: other work
    try:
        time.sleep(0.3)
        waited = quality.wait_before_run({"wait_run": 5, "other_cpu": quiet})
        assert 0 < waited < 3, waited
    finally:
        spinner.kill()
        spinner.wait()


def test_the_wait_before_a_run_outlasts_a_real_spinner_and_is_bounded():
    """A nice-0 spinner that stops after 1.5 s: the run waits for it, about that long; one that
    spins on: the wait gives up at its bound; a nice-19 spinner (it yields to the benchmark) and no
    wait set: no wait at all."""
    import time

    def spinner(seconds, nice=0):
        code = f"import os, time\nos.nice({nice})\nt = time.time() + {seconds}\nwhile time.time() < t:\n    pass\n"
        return subprocess.Popen([sys.executable, "-c", code])

    # the threshold sits above what else this machine does now (a test suite may run beside)
    background = quality.machine_now(1.0, top=0)["busy"]
    if background > 0.8:
        pytest.skip(f"{background:.1f} CPUs of other work: a spinner would not show beside it")
    quiet = background + 0.6
    procs = []
    try:
        procs.append(spinner(1.5))
        time.sleep(0.3)
        waited = quality.wait_before_run({"wait_run": 10, "other_cpu": quiet})
        assert 0.6 < waited < 4, (waited, quiet)
        procs.append(spinner(60))
        time.sleep(0.3)
        t0 = time.monotonic()
        waited = quality.wait_before_run({"wait_run": 1.0, "other_cpu": quiet})
        assert 1.0 <= waited < 1.6 and time.monotonic() - t0 < 2, waited
        assert quality.wait_before_run({"wait_run": 0, "other_cpu": quiet}) == 0.0
        procs.pop().kill()
        procs.append(spinner(60, nice=19))
        time.sleep(0.3)
        assert quality.wait_before_run({"wait_run": 5, "other_cpu": quiet}) == 0.0
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_sidecar_names_and_collect_skips_runs_without_records(tmp_path):
    assert quality.sidecar("a/run3.json").name == "quality-run3.json"
    assert quality.sidecar("a/run3.csv") == quality.sidecar("a/run3")
    (tmp_path / "quality-run0.json").write_text(json.dumps({"run": 0, "cpu_some": 0.1}))
    df = quality.collect([tmp_path / "run0.json", tmp_path / "run1.json"])
    assert list(df["run"]) == [0] and df["cpu_some"].iloc[0] == 0.1
    assert quality.collect([tmp_path / "run1.json"]).empty


def test_a_failed_run_writes_no_record(tmp_path):
    with pytest.raises(RuntimeError):
        with quality.sample(tmp_path / "run0.json"):
            raise RuntimeError("fio failed")
    assert list(tmp_path.iterdir()) == []


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@needs_root
def test_real_fio_beside_a_real_spinner(clean):
    """fio runs in the benchmark's CPU cgroup; a spinner started here (outside it) is other CPU:
    at least the CPU time the spinner itself took during the run, and fio's own CPU is not."""
    if benchcg.layout() is None:
        pytest.skip("no CPU accounting cgroup")
    spec = {"kind": "dir", "path": str(clean / "dev")}
    (clean / "dev").mkdir()
    cell = fio.expand_grid(SMALL, {"d": spec})[0]
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    seen = []  # the spinner's CPU time at the instants the record's snapshots are taken
    real = quality.snapshot

    def snapshot(cgroup=None):
        seen.append(cpu_seconds(spinner.pid))
        return real(cgroup)

    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(quality, "snapshot", snapshot)
            fio.run_cell("d", spec, clean / "d.json", cell, 0, clean / "run0.fio", clean / "run0.json")
        spun = seen[-1] - seen[0]
    finally:
        spinner.send_signal(signal.SIGKILL)
        spinner.wait()
    rec = json.loads((clean / "quality-run0.json").read_text())
    assert rec["benchmark"] == "fio" and rec["cell"] == cell["cell"] and rec["run"] == 0
    assert rec["wall_s"] >= 2 and set(quality.FIGURES) <= set(rec)
    assert len(seen) == 2 and spun > 0.05  # the spinner really ran during the run
    # the snapshots' instants differ by a little on each side, and the machine's busy time is
    # sampled by clock ticks while the benchmark's own CPU taken from it is exact: a few percent
    # either way (2.17 s counted of 2.37 s spun once, in a full suite on this 2-CPU VM); time the
    # hypervisor stole is not busy time, and where the kernel charges it to the running task it
    # is in the spinner's
    stolen = rec["steal"] * (os.cpu_count() or 1)  # in CPUs, as other_cpu
    assert (rec["other_cpu"] + stolen) * rec["wall_s"] >= 0.9 * spun - 0.05
    assert rec["bench_cpu"] > 0.01
    assert 0 <= rec["cpu_some"] <= 1 and 0 <= rec["steal"] <= 1
    assert not set(benchcg.KEYS) & set(devices.state_record.read_state(clean / "d.json")["created"])
    devices.teardown(clean / "d.json")


@needs_root
def test_a_delayed_devices_server_counts_as_the_run_not_the_machine(clean):
    """A delayed device's FUSE server serves the benchmark's requests: while the job runs it sits in
    the benchmark's CPU cgroup, so its CPU time is the run's (bench_cpu), not other CPU that would
    spoil every run on the device; afterwards it is back where it was, still serving the mount."""
    if benchcg.layout() is None:
        pytest.skip("no CPU accounting cgroup")
    spec = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "64M"}, "read_delay_us": 1}
    cell = fio.expand_grid(SMALL, {"d": spec})[0]
    state = devices.ensure("d", spec, clean / "d.json")
    try:
        (pid,) = delayed.servers(state)
        where = Path(f"/proc/{pid}/cgroup").read_text()
        seen, groups = [], []  # the server's CPU time and cgroups when the record's snapshots are taken
        real = quality.snapshot

        def snapshot(cgroup=None):
            seen.append(cpu_seconds(pid))
            groups.append(Path(f"/proc/{pid}/cgroup").read_text())
            return real(cgroup)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(quality, "snapshot", snapshot)
            fio.run_cell("d", spec, clean / "d.json", cell, 0, clean / "run0.fio", clean / "run0.json")
        served = seen[-1] - seen[0]
        rec = json.loads((clean / "quality-run0.json").read_text())
        assert served > 0.05  # the server really worked during the run
        assert all(f"/benchcast-cpu-d-{os.getpid()}" in g for g in groups), groups  # in the run's cgroup
        assert rec["bench_cpu"] * rec["wall_s"] >= 0.95 * served - 0.05  # so its CPU is the run's
        assert Path(f"/proc/{pid}/cgroup").read_text() == where
        assert delayed.servers(devices.read_state(clean / "d.json")) == [pid]
    finally:
        devices.teardown(clean / "d.json")


@needs_root
def test_a_failing_run_leaves_no_cgroup_record_or_process(clean):
    """fio fails (a job option it does not know): the run's cgroups are gone, no interference record
    and no fio JSON were written, the device is torn down."""
    if benchcg.layout() is None:
        pytest.skip("no CPU accounting cgroup")
    spec = {"kind": "dir", "path": str(clean / "dev")}
    (clean / "dev").mkdir()
    cell = fio.expand_grid({**SMALL, "extra": {"no_such_option": 1}}, {"d": spec})[0]
    with pytest.raises(BenchcastError, match="fio"):
        fio.run_cell("d", spec, clean / "d.json", cell, 0, clean / "run0.fio", clean / "run0.json")
    assert not (clean / "quality-run0.json").exists() and not (clean / "run0.json").exists()
    state = devices.state_record.read_state(clean / "d.json")
    assert state["status"] == "torn_down" and state["created"] == {}


@needs_root
def test_shield_sets_weight_nice_and_ionice(clean):
    """The shield's settings reach the benchmark: its cgroup's cpu.shares, and the job's nice and
    I/O priority, which the programs it starts inherit."""
    if benchcg.layout() is None:
        pytest.skip("no CPU accounting cgroup")
    spec = {"kind": "dir", "path": str(clean / "dev")}
    (clean / "dev").mkdir()
    code = ("import json, os, subprocess, sys\n"
            "from benchcast import devices\n"
            "from pathlib import Path\n"
            f"with devices.on_device('d', {spec!r}, {str(clean / 'd.json')!r}, "
            "shield={'cpu_shares': 2048, 'nice': 5, 'ionice': '2:0'}) as st:\n"
            "    cg = Path(st['created'].get('cpucg_weight') or st['created']['cpucg'])\n"
            "    w = (cg / 'cpu.shares').read_text().strip() if (cg / 'cpu.shares').exists() else None\n"
            "    child = subprocess.run(['sh', '-c', 'ionice -p $$; nice'], capture_output=True, text=True).stdout\n"
            "    print(json.dumps({'shares': w, 'child': child}))\n")
    scripts = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=clean,
                          env={**os.environ, "PYTHONPATH": scripts})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["shares"] in ("2048", None)
    assert "best-effort: prio 0" in got["child"] and got["child"].split()[-1] == "5"
    devices.teardown(clean / "d.json")


# --------------------------------------------------------------------------- spoiled runs

TH = {"other_cpu": 0.5, "steal": 0.1, "io_some": None}


def write_runs(folder, figures: list[dict | None]) -> list:
    """Run outputs run0.json.. in ``folder``, with an interference record where given."""
    folder.mkdir(parents=True, exist_ok=True)
    outs = []
    for i, fig in enumerate(figures):
        out = folder / f"run{i}.json"
        out.write_text("{}")
        if fig is not None:
            quality.sidecar(out).write_text(json.dumps({"run": i, **fig}))
        outs.append(out)
    return outs


def test_spoiled_names_every_figure_over_its_threshold():
    assert quality.spoiled({"other_cpu": 0.8, "steal": 0.2, "io_some": 0.9}, TH) == \
        "other_cpu 0.8 > 0.5; steal 0.2 > 0.1"
    assert quality.spoiled({"other_cpu": 0.5, "steal": math.nan}, TH) is None
    assert quality.severity({"other_cpu": 1.0, "steal": 0.1}, TH) == pytest.approx(2.0)


@pytest.mark.parametrize("spoil, needed", [
    # which of 3 runs were spoiled, then which extra runs (0, 1, 2) measure
    ([False, False, False], [False, False, False]),
    ([True, False, False], [True, False, False]),
    ([True, True, False], [True, True, False]),
])
def test_extra_runs_measure_only_for_spoiled_runs(tmp_path, spoil, needed):
    """Extra run k is needed while more than k earlier runs were spoiled; the extra runs that do
    measure (clean here) do not call for more."""
    figs = [{"other_cpu": 0.9 if s else 0.1} for s in spoil]
    outs = write_runs(tmp_path, figs)
    got = []
    for k in range(3):
        why = quality.extra_run_not_needed(outs, TH, k)
        got.append(why is None)
        if why is None:  # measured, and clean
            outs += write_runs(tmp_path / f"x{k}", [{"other_cpu": 0.0}])
    assert got == needed


def test_a_spoiled_extra_run_calls_for_the_next_and_the_bound_holds(tmp_path):
    """Every run spoiled: each extra run is needed, up to the planned number (the bound is the plan:
    there is no run beyond it); the cell then keeps its least spoiled runs and is flagged."""
    outs = write_runs(tmp_path / "c", [{"other_cpu": v} for v in (0.9, 2.0, 0.7)])
    assert quality.extra_run_not_needed(outs, TH, 0) is None
    outs.append(write_runs(tmp_path / "e0", [{"other_cpu": 1.5}])[0])
    assert quality.extra_run_not_needed(outs, TH, 1) is None
    tab = quality.table(write_runs(tmp_path / "d", [{"other_cpu": v} for v in (0.9, 2.0, 0.7, 1.5, 0.6)]), TH, 3)
    assert list(tab["used"]) == [True, False, True, False, True]  # the three least spoiled: 0.6, 0.7, 0.9
    assert tab["flagged"].all() and (tab["spoiled"] != "").all()


def test_table_keeps_clean_runs_leaves_out_spoiled_and_counts_old_runs_clean(tmp_path):
    """Cell a: run 1 spoiled, its extra run 3 clean: runs 0, 2, 3 used, not flagged. Cell b, measured
    before interference records existed: every run used. Cell c: two runs spoiled, no extra run
    measured (run 3 a skip note without record): both spoiled runs fill up to repeats, flagged."""
    a = write_runs(tmp_path / "a", [{"other_cpu": 0.1}, {"other_cpu": 0.9, "steal": 0.3}, {"other_cpu": 0.2},
                                    {"other_cpu": 0.0}])
    b = write_runs(tmp_path / "b", [None, None, None])
    c = write_runs(tmp_path / "c", [{"other_cpu": 0.9}, {"other_cpu": 0.1}, {"other_cpu": 0.8}, None])
    tab = quality.table(a + b + c, TH, 3).set_index("output")
    assert tab.loc[map(str, a), "used"].tolist() == [True, False, True, True]
    assert tab.loc[str(a[1]), "spoiled"] == "other_cpu 0.9 > 0.5; steal 0.3 > 0.1"
    assert not tab.loc[map(str, a), "flagged"].any()
    assert tab.loc[map(str, b), "used"].all() and not tab.loc[map(str, b), "flagged"].any()
    assert tab.loc[map(str, c), "used"].tolist() == [True, True, True, True]
    assert tab.loc[map(str, c), "flagged"].all()
    assert math.isnan(tab.loc[str(b[0]), "other_cpu"]) and tab.loc[str(a[1]), "other_cpu"] == 0.9


# --------------------------------------------------------------------------- the report's section


def test_summary_by_hand(tmp_path):
    """Two fio cells on device disk (one run spoiled by other CPU and measured again, one clean), a
    YCSB job on zram with every run spoiled (flagged), runs of an old tree without records."""
    root = tmp_path / "results/s"
    a = write_runs(root / "fio/fio/disk/c1", [{"other_cpu": 0.1, "cpu_some": 0.2, "io_some": 0.5, "steal": 0.0,
                                               "memory_some": 0.0, "wall_s": 1},
                                              {"other_cpu": 0.9, "cpu_some": 0.4, "io_some": 0.7, "steal": 0.01,
                                               "memory_some": 0.0, "wall_s": 1},
                                              {"other_cpu": 0.3, "cpu_some": 0.1, "io_some": 0.3, "steal": 0.0,
                                               "memory_some": 0.0, "wall_s": 1}])
    # an extra run that measured, clean: c1 then has 3 clean runs without run 1
    extra = root / "fio/fio/disk/c1/run3.json"
    extra.write_text("{}")
    quality.sidecar(extra).write_text(json.dumps({"other_cpu": 0.2, "cpu_some": 0.0, "io_some": 0.1, "steal": 0.0,
                                                  "memory_some": 0.0, "wall_s": 1}))
    b = write_runs(root / "ycsb/ycsb/zram/rocksdb/4000000", [{"other_cpu": 0.6, "steal": 0.2, "cpu_some": 0.0,
                                                             "io_some": 0.0, "memory_some": 0.1, "wall_s": 2}] * 2)
    old = write_runs(root / "fio/fio/disk/c2", [None, None, None])
    tab = pd.concat([quality.table(a + [extra] + old, TH, 3), quality.table(b, TH, 3)], ignore_index=True)
    s = quality.summary(tab).set_index(["device", "benchmark"])
    disk, zram = s.loc[("disk", "fio")], s.loc[("zram", "ycsb")]
    assert (disk["runs"], disk["recorded"], disk["spoiled"], disk["measured_again"], disk["flagged_cells"]) == \
        (7, 4, 1, 1, 0)
    assert disk["why"] == "other_cpu x1"
    assert disk["other_cpu_median"] == pytest.approx(0.25) and disk["other_cpu_max"] == 0.9
    assert disk["cpu_some_median"] == pytest.approx(0.15) and disk["io_some_median"] == pytest.approx(0.4)
    assert (zram["runs"], zram["spoiled"], zram["measured_again"], zram["flagged_cells"]) == (2, 2, 0, 1)
    assert zram["why"] == "other_cpu x2, steal x2" and zram["steal_max"] == 0.2 and zram["memory_some_max"] == 0.1


def test_floor_line_warns_when_the_floor_is_above_the_tolerance():
    """Median of 8, 14 and 20 = 14 > 10: the warning; median of 3, 4, NaN, 40 = 4: within."""
    busy = pd.DataFrame({"interior_floor_mape": [8.0, 14.0, 20.0]})
    assert quality.floor_line(busy, 10) == ("this machine was too busy for 10 % predictions: a perfect model "
                                            "would miss by 14 % here (noise floor, median over series)")
    idle = pd.DataFrame({"interior_floor_mape": [3.0, 4.0, math.nan, 40.0]})
    assert quality.floor_line(idle, 10) == "noise floor 4.0 % (median over series) is within the 10 % tolerance"
    assert quality.floor_line(pd.DataFrame(), 10).startswith("noise floor: unknown")


# --------------------------------------------------------------------------- before measuring


def test_machine_line_names_a_real_spinner_and_the_wait_is_bounded():
    """A spinner started here is among the top consumers; waiting for a machine quieter than it
    gives up after the configured time (bounded), and a threshold above it does not wait."""
    import time

    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.3)
        now = quality.machine_now(1.0, top=10_000)
        assert [cpu for _name, cpu, pid in now["top"] if pid == spinner.pid][0] > 0.05, now
        assert now["busy"] > 0.05 and "top: " in quality.machine_line(now)
        said = []
        t0 = time.monotonic()
        assert quality.wait_for_quiet(2, 0.1, said.append, sample=1.0) is False
        assert 2 <= time.monotonic() - t0 < 6
        assert said[0].startswith("machine before measuring: load") and "still busy after 2 s" in said[-1]
        said.clear()
        t0 = time.monotonic()
        assert quality.wait_for_quiet(30, 50.0, said.append, sample=1.0) is True
        assert time.monotonic() - t0 < 5 and said[-1] == "machine quiet: measuring"
    finally:
        spinner.kill()
        spinner.wait()
    said = []
    quality.wait_for_quiet(0, 0.5, said.append)  # the default: one line, no wait
    assert len(said) == 1


# --------------------------------------------------------------------------- the workflow


@pytest.mark.workflow
@pytest.mark.root
def test_a_measured_study_records_interference_and_measures_spoiled_runs_again(tmp_path, mini_study):
    """A small fio study with one extra run and a low other-CPU threshold (whatever this machine
    does, the rule must hold): every measured run has its interference record; a cell's extra run
    measures exactly when one of its runs was spoiled; the records keep the runs the quality table
    uses; the quality section and its line are written; no CPU cgroup is left."""
    from workflow_util import copy_workflow, edit_config, planned_jobs, snakemake

    if os.geteuid() != 0:
        pytest.skip("provisioning tmpfs devices needs root")
    before = cpu_cgroups()

    def mutate(cfg):
        mini_study(cfg)
        local = cfg["studies"]["local"]
        local["devices"] = {k: v for k, v in local["devices"].items() if k in ("dram", "disk")}
        local["sources"] = {"fio": {**local["sources"]["fio"], "rw": ["randread"], "block_sizes": ["4K", "64K"]}}
        local["screen"] = {"min_devices": 2}  # two devices
        cfg["run"] = {"interference": {"extra_runs": 1, "other_cpu": 0.3}}

    wd = copy_workflow(tmp_path / "wf")
    edit_config(wd, mutate)
    try:
        snakemake(wd, timeout=1800)
    finally:
        subprocess.run([sys.executable, "-m", "snakemake", "teardown"], cwd=wd, capture_output=True)
    res = wd / "results/local"
    tab = pd.read_csv(res / "quality/fio/fio.csv", keep_default_na=False, na_values=[""])
    recs = pd.read_csv(res / "records/fio/fio.csv")
    assert len(tab) == 2 * 2 * 3  # devices x cells x (2 runs + 1 extra)
    for group, g in tab.groupby("group"):
        g = g.set_index("run")
        extra = json.loads(Path(wd, g.loc[2, "output"]).read_text())
        spoiled = g.loc[[0, 1], "spoiled"].astype(object).fillna("").astype(str).ne("").sum()
        assert ("benchcast_skipped" not in extra) == (spoiled >= 1), (group, g)
        assert g.loc[[0, 1], "wall_s"].notna().all()  # measured runs have a record
        device, cell = Path(group).parent.name, Path(group).name
        used = {r for r in g.index if g.loc[r, "used"] and (r < 2 or "benchcast_skipped" not in extra)}
        assert set(recs.loc[(recs["device"] == device) & (recs["cell"] == cell), "run"]) == used
    summary = pd.read_csv(res / "tables/quality.csv")
    assert set(summary["benchmark"]) == {"fio"} and (summary["recorded"] >= 4).all()
    assert (res / "quality/summary.txt").read_text().startswith("local: ")
    assert cpu_cgroups() == before
    # how a run is protected is not what it measures: another shield or wait plans no measurement
    (wd / "guard.yaml").write_text("run: {shield: {cpu_shares: 4096, nice: 5}, "
                                   "interference: {extra_runs: 1, other_cpu: 0.3, wait_run: 9}}\n")
    assert not set(planned_jobs(wd, "--configfile", "config/config.yaml", "guard.yaml")) & {"fio_run", "provision_device"}
    assert all(json.loads(Path(wd, o).parent.joinpath(quality.sidecar(o).name).read_text())["shield"] == "cpu_shares=262144"
               for o in tab.loc[tab["wall_s"].notna(), "output"])
    states = [json.loads(p.read_text()) for p in (res / "devices/state").glob("*.json")]
    assert len(states) == 2 and not any(set(benchcg.KEYS) & set(st["created"]) for st in states)


def cpu_cgroups() -> list[str]:
    """The benchmark CPU cgroups left behind: those whose job (the pid ending the name) is gone.
    Other tests' blkio and memory cgroups are theirs, and so are the live jobs' CPU cgroups of
    workflow tests running beside this one."""
    from devices_util import benchcast_cgroups

    return [c for c in benchcast_cgroups()
            if "benchcast-cpu-" in c and not Path("/proc", c.rsplit("-", 1)[1]).exists()]


@needs_root
def test_no_cgroup_where_none_can_be_made_measures_as_before(tmp_path, monkeypatch):
    """Where the cgroup cannot be made (here: a parent in /proc, as a read-only cgroup file system
    in a container), the job gets none, the state records why and lists nothing to remove."""
    monkeypatch.setattr(benchcg, "layout", lambda: {"version": 1, "acct": Path("/proc/1"), "weight": None})
    rec = devices.state_record.Recorder({"device": "d"}, tmp_path / "d.json")
    assert benchcg.create(rec) == []
    assert rec.created == {} and "no CPU cgroup for the benchmark" in rec.state["notes"][0]
