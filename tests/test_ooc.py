"""Out-of-core programs (benchcast.sources.run.ooc): built with the system compiler, run for real in each mode,
their JSON line parsed into records; a program killed for want of memory is named."""

from __future__ import annotations

import contextlib
import json
import shutil
import time

import pytest

from benchcast import BenchcastError, records
from benchcast.sources.run import ooc, paging
from devices_util import clean, needs_root  # noqa: F401
from test_memlimit import needs_memcg
from ycsb_util import processes_named

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

MB = 1 << 20


@pytest.fixture(scope="session")
def binaries(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("ooc-bin")
    return {p: ooc.build(p, out / p) for p in ooc.PROGRAMS}


def test_stream_and_stencil_in_memory_give_every_kernel(binaries, tmp_path):
    df = ooc.run_ooc(["stream", "stencil"], [4 * MB], "memory", 2,
                     ooc.Place(binaries, tmp_path, tmp_path / "raw", study="s", device="d", run=1))
    records.check(df, where="t")
    passes = df[df["op"] == "pass"]
    assert set(passes["workload"]) == {"copy", "scale", "add", "triad", "stencil5"}
    assert set(df["engine"]) == {"memory"} and set(df["benchmark"]) == {"ooc"} and set(df["run"]) == {1}
    assert set(df["data_size"]) == {4 * MB} and (df["ooc_reps"] == 2).all()
    lat = passes[passes["metric"] == "lat_mean"].set_index("workload")["value"]
    best = passes[passes["metric"] == "lat_min"].set_index("workload")["value"]
    assert (lat > 0).all() and (best <= lat).all()
    bw = passes[passes["metric"] == "bw"].set_index("workload")["value"]
    # copy moves two arrays of a third of the working set each: 2/3 of it per pass
    assert bw["copy"] == pytest.approx((4 * MB // 24) * 16 / (lat["copy"] * 1e-6), rel=1e-3)
    runtime = df[df["metric"] == "runtime"].set_index("workload")["value"]
    assert set(runtime.index) == {"stream", "stencil"} and (runtime > 0).all()
    assert (tmp_path / "raw" / f"stream-{4 * MB}.out").is_file()


def test_himeno_iterates_toward_the_solution_in_memory_and_over_a_mapping(binaries, tmp_path):
    """The Himeno kernel: records like the other programs', bytes per iteration as documented, and
    its residual (gosa, the raw line's check) falls as Jacobi iterations go on, mapped or not."""
    import json

    gosa = {}
    for mode, reps in (("memory", 1), ("memory", 4), ("mmap", 4)):
        out = tmp_path / f"{mode}{reps}"
        df = ooc.run_ooc(["himeno"], [4 * MB], mode, reps, ooc.Place(binaries, tmp_path, out, study="s", device="d"))
        records.check(df, where="t")
        passes = df[df["op"] == "pass"].set_index("metric")
        assert set(passes["workload"]) == {"himeno"} and passes.at["lat_mean", "value"] > 0
        line = json.loads((out / f"himeno-{4 * MB}.out").read_text())
        n = line["n"]
        assert n == int((4 * MB / (14 * 8)) ** (1 / 3)) and line["bytes"] == 14 * 8 * n ** 3
        assert passes.at["bw", "value"] == pytest.approx(16 * 8 * (n - 2) ** 3 / (passes.at["lat_mean", "value"] * 1e-6),
                                                         rel=1e-3)
        gosa[(mode, reps)] = line["check"]
    assert 0 < gosa[("memory", 4)] < gosa[("memory", 1)]
    assert gosa[("mmap", 4)] == pytest.approx(gosa[("memory", 4)], rel=1e-12)  # the same arithmetic


def test_mmap_mode_maps_a_file_in_the_device_directory_and_removes_it(binaries, tmp_path):
    df = ooc.run_ooc(["stream"], [2 * MB], "mmap", 1, ooc.Place(binaries, tmp_path, tmp_path / "raw", study="s", device="d"))
    assert set(df["engine"]) == {"mmap"} and (df["sync_s"] >= 0).all()
    assert not list(tmp_path.glob("benchcast-ooc-*"))
    assert '"mode": "mmap"' in (tmp_path / "raw" / f"stream-{2 * MB}.out").read_text()


def test_marks_read_the_counters_at_each_phase_outside_the_timed_passes(binaries, tmp_path):
    """With counters, the program stops at both edges of each phase (init, every pass, the final
    sync) while they are read; the waits are in no pass and not in the program's runtime, and each
    kernel's increases come back per pass (two passes summed, halved), the whole run's per run."""
    seen = []

    def counters():
        time.sleep(0.05)
        seen.append(paging.vmstat())
        return {"vmstat": {"pswpin": 10 * len(seen)}, "memcg": None, "device": None}

    at = ooc.Place(binaries, tmp_path, tmp_path / "raw", study="s", device="d", counters=counters)
    df = ooc.run_ooc(["stream"], [2 * MB], "memory", 2, at)
    marks = json.loads((tmp_path / "raw" / f"stream-{2 * MB}.marks.json").read_text())
    edges = [(m["phase"], m["edge"]) for m in marks]
    kernels = [(k, e) for k in ("copy", "scale", "add", "triad") for e in ("begin", "end")]
    assert edges == [("init", "begin"), ("init", "end"), *kernels, *kernels, ("sync", "begin"), ("sync", "end")]
    assert len(seen) == 20 and "#mark copy begin" in (tmp_path / "raw" / f"stream-{2 * MB}.out").read_text()
    runtime = df.loc[df["metric"] == "runtime", "value"].iloc[0]  # ms
    lat = df[(df["op"] == "pass") & (df["metric"] == "lat_mean")].set_index("workload")["value"]  # us
    assert runtime < 20 * 50 / 2 and (lat < 50_000).all()  # 20 waits of 50 ms are 1 s
    io = df[df["op"] == paging.OP].set_index("workload")
    assert set(io["metric"]) == {"swap_ins_per_op"}  # no memcg, no device counters: no rows of theirs
    # each pass of a kernel reads 10 more at its end than at its begin; the run 190 from first to last
    assert (io.loc[["copy", "scale", "add", "triad"], "value"] == 10).all() and io.at["stream", "value"] == 190
    assert (io["unit"] == "pages/op").all() and set(io["data_size"]) == {2 * MB} and set(io["engine"]) == {"memory"}
    assert df[df["op"] == "device"].empty


def test_a_failing_counter_reading_fails_the_run_without_stopping_the_program(binaries, tmp_path):
    def broken():
        raise OSError("memory.stat: gone")

    at = ooc.Place(binaries, tmp_path, tmp_path / "raw", study="s", device="d", counters=broken, timeout=60)
    with pytest.raises(BenchcastError, match=r"stream-1048576.out: reading the counters at a mark: memory.stat: gone"):
        ooc.run_ooc(["stream"], [MB], "memory", 1, at)
    assert '"program": "stream"' in (tmp_path / "raw" / f"stream-{MB}.out").read_text()  # it ran to its end


@pytest.mark.parametrize("text, message", [
    ("", "expected one JSON result line, found 0"),
    ('{"program": "stream"}', "not an ooc result line"),
    ('{"a": 1}\n{"b": 2}', "expected one JSON result line, found 2"),
])
def test_parse_refuses_what_is_not_one_result(text, message):
    with pytest.raises(BenchcastError, match=rf"x.out: {message}"):
        ooc.parse(text, "x.out")


def test_unknown_program_and_mode(tmp_path):
    with pytest.raises(BenchcastError, match="unknown program 'linpack'"):
        ooc.build("linpack", tmp_path / "h")
    with pytest.raises(BenchcastError, match="unknown mode 'zswap'"):
        ooc.run_ooc(["stream"], [MB], "zswap", 1, ooc.Place({}, tmp_path, tmp_path, study="s", device="d"))


@needs_root
@needs_memcg
def test_a_program_beyond_its_limit_without_swap_is_named_killed(binaries, clean, capfd):
    """Anonymous memory beyond the limit and no swap: the kernel kills the program (only the
    program: it alone is in the cgroup), and the error says why; the cgroup is removed. With
    retries it runs again, each time killed, and the error counts the attempts."""
    from benchcast import devices
    from benchcast.devices import swap

    if swap.active():
        pytest.skip("swap is active here: the program would page instead of being killed")
    sp = clean / "d.json"
    for retries, said in ((0, r"there is no swap for it\)$"), (2, r"there is no swap for it\) \(3 times\)$")):
        with pytest.raises(ooc.ProgramKilled, match=r"stream was killed: its memory cgroup's OOM killer .*" + said):
            with devices.on_device("d", {"kind": "dir", "path": str(clean)}, sp, memory_limit=16 * MB,
                                   enter_memory=False) as st:
                ooc.run_ooc(["stream"], [64 * MB], "swap", 1,
                            ooc.Place(binaries, st["target"], clean / "raw", study="s", device="d",
                                      cgroup=st["created"]["memcg"], kill_retries=retries))
        assert devices.state_record.read_state(sp)["created"] == {}
    assert capfd.readouterr().err.count("was killed") == 2  # the two attempts that were retried


@needs_root
@needs_memcg
def test_a_program_killed_from_outside_is_said_so_and_runs_again(binaries, clean, capfd):
    """SIGKILL from another process (not its memory cgroup's OOM killer, whose count stays): the
    program runs again and the job goes on; the line names the job and the cause."""
    import os
    import signal
    import threading
    import time

    from benchcast import devices

    sp = clean / "d.json"

    def kill_first():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            progs = processes_named("stream")
            if progs:
                os.kill(progs[0], signal.SIGKILL)
                return
            time.sleep(0.005)

    with devices.on_device("d", {"kind": "dir", "path": str(clean)}, sp, memory_limit=64 * MB,
                           enter_memory=False) as st:
        killer = threading.Thread(target=kill_first)
        killer.start()
        df = ooc.run_ooc(["stream"], [32 * MB], "swap", 20,
                         ooc.Place(binaries, st["target"], clean / "raw", study="s", device="d",
                                   cgroup=st["created"]["memcg"], kill_retries=2, kill_pause=0.1))
        killer.join()
    assert len(df[df["op"] == "run"]) == 1
    said = [ln for ln in capfd.readouterr().err.splitlines() if "was killed" in ln]
    assert len(said) == 1 and said[0].startswith("benchcast: ooc: device d, mode swap, repeat 0: "), said
    assert said[0].endswith("stream was killed: SIGKILL from outside (not its memory cgroup's OOM killer); "
                            "again in 0.1 s"), said


def test_a_program_that_stops_answering_fails_within_its_timeout_in_one_line(binaries, tmp_path):
    """An out-of-core program stopped (SIGSTOP: a device that no longer answers its page faults) is
    killed at its source's timeout, and the run fails in one line naming the program and the deadline."""
    import os
    import signal
    import threading
    import time

    from benchcast import BenchcastError

    stopped = []

    def stop_it():
        until = time.monotonic() + 30
        while time.monotonic() < until:
            progs = processes_named("stream")
            if progs:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(progs[0], signal.SIGSTOP)
                    stopped.append(progs[0])
                return
            time.sleep(0.005)

    threading.Thread(target=stop_it, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(BenchcastError, match=r"stream-\d+\.out: stream did not finish within its deadline of 3 s "
                                             r"\(the source's timeout\)"):
        # 4,000 passes: about 0.75 s here unstopped, long enough to be found and stopped on a busy
        # machine (50 passes took 10 ms and once ended before the look found it), short of the deadline
        ooc.run_ooc(["stream"], [4 * MB], "memory", 4000,
                    ooc.Place(binaries, tmp_path, tmp_path / "raw", study="s", device="d", run=1, timeout=3))
    assert time.monotonic() - t0 < 15 and stopped
    assert not processes_named("stream")
