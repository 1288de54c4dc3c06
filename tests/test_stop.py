"""Stopping a run, for real: SIGTERM/SIGINT to the Snakemake process or to ./benchcast.sh during each
kind of measuring job (fio, YCSB on RocksDB and on MariaDB, out-of-core swap and mmap, a delayed
device's job) ends the run within 60 s, non-zero, with one line; the job's device and what it owns
and every other device of the run are torn down; a resume plans only what was unfinished.

Which target gets which kind (the full cross product would take too long): Snakemake: fio, YCSB
MariaDB, ooc mmap; ./benchcast.sh: fio (SIGINT, also to a script started with SIGINT ignored, as a
script's `./benchcast.sh run &` starts it), YCSB RocksDB, ooc swap, the delayed device's MariaDB job
(the reported hang). SIGINT or SIGTERM to ./benchcast.sh before Snakemake starts: the run stops there.
SIGINT to the Snakemake process itself: the stop module's own test."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchcast.core import stop
from benchcast.devices import memlimit, swap
from devices_util import HAS_FUSE, HAS_LOOP, losetup_all, mounts_under, needs_root
from workflow_util import ROOT, checksums, copy_workflow, edit_config, planned_jobs, snakemake, terminate
from ycsb_util import need_mariadb, processes_under, ycsb_jar  # noqa: F401 (fixture)

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

SCRIPTS = str(ROOT / "scripts")

# --- the stop mechanism on its own: a process that holds a lock in its main thread -------------------

HOLDER = textwrap.dedent("""
    import sys, threading, time, subprocess
    sys.path.insert(0, {scripts!r})
    from benchcast.core import stop
    lock = threading.Lock()
    def then(signum):  # as Snakemake's handler does: take the lock the main thread holds
        with lock:
            print("then", signum, flush=True)
    job = subprocess.Popen(["sh", "-c", {job!r}])
    st = stop.watch(then=then, grace={grace})
    with lock:  # the main thread busy inside the lock when the signal comes
        print("ready", flush=True)
        time.sleep(2)
    st.done.wait(30)
    print("jobs", [n for _, n in st.jobs], "killed", len(st.killed), st.signal, flush=True)
    print("rc", job.wait(), flush=True)
""")


def _holder(job: str, grace: float = 5) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER.format(scripts=SCRIPTS, job=job, grace=grace)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_jobs_while_the_main_thread_holds_the_lock(sig):
    """The handler only wakes the stop thread: Snakemake's handling (``then``) runs there once the main
    thread lets go of the lock it takes, then the job (under a shell) gets SIGTERM; a second signal
    changes nothing."""
    p = _holder(f"exec {sys.executable} -c 'import time; time.sleep(60)'")
    t0 = time.monotonic()
    p.send_signal(sig)
    time.sleep(0.3)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=20)
    assert time.monotonic() - t0 < 5
    assert out.splitlines() == [f"then {int(sig)}", f"jobs ['{Path(sys.executable).name}'] killed 0 {sig.name}",
                                f"rc {-signal.SIGTERM}"], out


def test_a_job_that_ignores_sigterm_is_killed_after_the_grace_time():
    p = _holder("trap '' TERM; exec sleep 60", grace=1)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=20)
    assert out.splitlines()[1:] == ["jobs ['sleep'] killed 1 SIGTERM", f"rc {-signal.SIGKILL}"], out


def test_the_stop_line_names_the_devices_and_what_they_held(tmp_path):
    (tmp_path / "fz.json").write_text(json.dumps({"kind": "delayed", "status": "ready", "target": str(tmp_path / "m"),
                                                  "created": {"mount": "x"}, "backing": {"created": {"loop": "/dev/loop9"}}}))
    (tmp_path / "ram.json").write_text(json.dumps({"kind": "tmpfs", "status": "torn_down", "created": {}}))
    (tmp_path / "sw.json").write_text(json.dumps({"kind": "loop", "status": "ready", "created": {"swapfile": "f", "memcg": "c"}}))
    (tmp_path / "r" / "db").mkdir(parents=True)
    (tmp_path / "r" / "db" / "mariadbd.pid").write_text("1\n")
    st = stop.Stop(signal="SIGTERM", jobs=[(1, "benchcast.ycsb_job")])
    st.live, st.servers = stop.live_devices([tmp_path, tmp_path / "missing"]), stop.servers([tmp_path / "r"])
    assert st.live == {str(tmp_path / "fz.json"): ["FUSE daemon", "loop device"],
                       str(tmp_path / "sw.json"): ["memory cgroup", "swap file"]}
    line = stop.summary(st, [str(tmp_path / "sw.json")])
    assert line == ("benchcast: run stopped by SIGTERM: 1 job(s) stopped (benchcast.ycsb_job); torn down: "
                    "fz (FUSE daemon, loop device); 1 MariaDB server(s) stopped; "
                    "NOT cleaned, run ./benchcast.sh teardown: sw")


def test_a_job_is_named_by_its_module_and_log_or_its_rule(tmp_path):
    """What the stop line and the recovery line call a job: its module and log (the log's path names
    its device and run), a rule script's rule, else its command."""
    code = "import time; time.sleep(30)"
    script = tmp_path / ".snakemake" / "scripts" / "tmpab12cd.aggregate.py"
    script.parent.mkdir(parents=True)
    script.write_text(code)
    procs = [subprocess.Popen([sys.executable, "-c", code, "-m", "benchcast.fio", "--log", "logs/s/fio/x/run0.log"]),
             subprocess.Popen([sys.executable, str(script)]), subprocess.Popen(["sleep", "30"])]
    try:
        time.sleep(0.3)
        assert [stop.job_name(p.pid, "comm") for p in procs] == [
            "benchcast.fio logs/s/fio/x/run0.log", "rule aggregate", "comm"]
    finally:
        for p in procs:
            p.kill()
            p.wait()


LOCKED_SNAKEFILE = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {scripts!r})

    rule all:
        input: expand("o/{{i}}", i=range(3))

    rule one:
        output: "o/{{i}}"
        shell: "sleep 1; touch {{output}}"

    def signal_inside_the_lock(frame, event, arg):  # SIGTERM while the scheduler holds its lock
        if event == "call" and frame.f_code.co_name == "_finish_jobs" and not os.path.exists("sent"):
            open("sent", "w").close()
            os.kill(os.getpid(), signal.SIGTERM)

    onstart:
        if {with_stop}:
            from benchcast.core import stop
            stop.watch(then=signal.getsignal(signal.SIGTERM))
        sys.setprofile(signal_inside_the_lock)
""")


@pytest.mark.workflow
@pytest.mark.parametrize("with_stop", [False, True])
def test_sigterm_while_the_scheduler_holds_its_lock(tmp_path, with_stop):
    """The reported hang, made to happen: a SIGTERM that Python hands to Snakemake's handler while
    the main thread is inside the scheduler's lock (here: post-processing a finished job). Snakemake's
    own handler waits for that lock for ever (the cause); with benchcast.core.stop the run ends."""
    (tmp_path / "Snakefile").write_text(LOCKED_SNAKEFILE.format(scripts=SCRIPTS, with_stop=with_stop))
    p = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=30 if with_stop else 15)
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
        assert not with_stop, out[-2000:]
        assert (tmp_path / "sent").exists()  # Snakemake hung on its own lock, as reported
        return
    assert with_stop and (tmp_path / "sent").exists() and p.returncode != 0, out[-2000:]


# --- the real workflow -------------------------------------------------------------------------------

def _study(case: dict):
    """A study of two devices: `ram` (a tmpfs with one short fio run, done first and left up) and the
    case's device with one long measuring job of the case's kind."""

    def mutate(cfg):
        local = cfg["studies"]["local"]
        local["devices"] = {"ram": {"kind": "tmpfs", "size": "64M"}, "dev": case["device"]}
        local["sources"] = {
            "quick": {"type": "fio", "rw": ["randread"], "block_sizes": ["4K"], "repeats": 1, "ioengine": "psync",
                      "size": "4M", "runtime": 1, "ramp_time": 0, "direct": False, "devices": ["ram"]},
            "long": {**case["source"], "devices": ["dev"]},
        }
        local["features"]["block_sizes"] = ["4K"]
        local["features"]["workloads"] = ["randread"]
        local["targets"] = {"Optane-P4800X": {**local["targets"]["Optane-P4800X"], "figures": [
            f for f in local["targets"]["Optane-P4800X"]["figures"]
            if (f["workload"], f["block_size"]) == ("randread", "4K")]}}
        local.pop("report", None)
        local["screen"] = {"min_devices": 2}  # two devices: the analysis is not what is tested
        cfg["studies"] = {"local": local}
        cfg.pop("run", None)

    return mutate


TMPFS = {"kind": "tmpfs", "size": "128M"}
LOOP = {"kind": "loop", "size": "160M", "backing_dir": ".", "fstype": "ext4"}
DELAYED = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "128M"}, "read_delay_us": 100,
           "write_delay_us": 50, "sync_delay_us": 100}
FIO = {"type": "fio", "rw": ["randwrite"], "block_sizes": ["4K"], "repeats": 1, "ioengine": "psync", "size": "8M",
       "runtime": 60, "ramp_time": 0, "direct": False}


def _ycsb(engine):
    return {"type": "ycsb", "engines": [engine], "workloads": ["write-only", "read-only"], "data_sizes": ["2MB"],
            "maxexecutiontime": 60, "threads": 1, "repeats": 1}


def _ooc(mode):
    return {"type": "ooc", "programs": ["stream"], "modes": [mode], "working_sets": ["48M"], "memory_limit": "16M",
            "passes": 50, "repeats": 1}


CASES = {  # kind: (device, source, records of the long source, log folder of its job, who gets the signal)
    "fio": dict(device=TMPFS, source=FIO, records="fio", logs="fio/long", to="snakemake"),
    "fio-sigint": dict(device=TMPFS, source=FIO, records="fio", logs="fio/long", to="benchcast.sh", sig=signal.SIGINT),
    # started as a script's `./benchcast.sh run &` starts it: with SIGINT ignored, which bash cannot trap
    "fio-sigint-ignored": dict(device=TMPFS, source=FIO, records="fio", logs="fio/long", to="benchcast.sh",
                               sig=signal.SIGINT, sigint_ignored=True),
    "ycsb-rocksdb": dict(device=TMPFS, source=_ycsb("rocksdb"), records="ycsb", logs="ycsb/long", to="benchcast.sh"),
    "ycsb-mariadb": dict(device=TMPFS, source=_ycsb("mariadb"), records="ycsb", logs="ycsb/long", to="snakemake"),
    "ooc-swap": dict(device=LOOP, source=_ooc("swap"), records="ooc", logs="ooc/long", to="benchcast.sh"),
    "ooc-mmap": dict(device=LOOP, source=_ooc("mmap"), records="ooc", logs="ooc/long", to="snakemake"),
    "delayed-mariadb": dict(device=DELAYED, source=_ycsb("mariadb"), records="ycsb", logs="ycsb/long",
                            to="benchcast.sh"),
}


def _skip_reason(kind: str) -> str | None:
    case = CASES[kind]
    if case["device"]["kind"] == "loop" and not HAS_LOOP:
        return "needs the loop driver"
    if case["device"]["kind"] == "delayed" and not HAS_FUSE:
        return "needs FUSE, cc and libfuse3-dev"
    if kind.startswith("ooc"):
        if memlimit.version() is None:
            return "needs a memory cgroup controller"
        if kind == "ooc-swap" and swap.active():
            return "swap benchcast did not make is active here"
    return None


def _start(wd: Path, to: str, targets: list[str], sigint_ignored: bool = False) -> subprocess.Popen:
    """Start the run; SIGINT's action in it is the default, or ignored (as a script's `cmd &` starts
    a command), whatever it is in this test process (ignored too when the tests were started so)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if to == "benchcast.sh":
        cmd = ["bash", str(wd / "benchcast.sh"), "run", "--cores", "2", *targets]
    else:
        cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *targets]
    sigint = signal.SIG_IGN if sigint_ignored else signal.SIG_DFL
    return subprocess.Popen(cmd, cwd=wd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))


def _wait_for(pred, timeout: float, what: str, proc: subprocess.Popen):
    deadline = time.monotonic() + timeout
    while not pred():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended ({proc.returncode}) before {what}:\n{proc.stdout.read()[-3000:]}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _stop_late(proc: subprocess.Popen) -> str:
    """A run that did not stop when it should have: SIGTERM it (SIGKILL to ./benchcast.sh would leave
    Snakemake running), SIGKILL after 90 s; its output."""
    proc.terminate()
    try:
        return proc.communicate(timeout=90)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0]


def _tree(tmp_path: Path, kind: str, jar: Path | None) -> Path:
    wd = copy_workflow(tmp_path / "wf")
    for part in ("benchcast.sh", "requirements.txt"):
        shutil.copy2(ROOT / part, wd / part)
    (wd / ".venv").symlink_to(Path(sys.prefix))  # the script runs the venv's snakemake
    edit_config(wd, _study(CASES[kind]))
    if jar is None:
        return wd
    target = wd / "results" / "ycsb" / "benchcast-ycsb.jar"
    target.parent.mkdir(parents=True)
    shutil.copy2(jar, target)
    os.utime(target)
    return wd


@pytest.mark.workflow
@needs_root
@pytest.mark.parametrize("kind", list(CASES))
def test_a_signal_during_a_measuring_job_stops_the_run_within_a_minute(tmp_path, kind, ycsb_jar):
    case = CASES[kind]
    if why := _skip_reason(kind):
        pytest.skip(why)
    if "mariadb" in kind:
        need_mariadb()
    wd = _tree(tmp_path, kind, ycsb_jar)
    try:
        _stop_during(wd, kind)
    finally:  # whatever a failing test left: servers, then devices
        from benchcast import devices
        from benchcast.sources.run import mariadb

        mariadb.teardown_all(wd / "results/local")
        if (wd / "results/local/devices/state").is_dir():
            devices.teardown_all(wd / "results/local/devices/state")


def _stop_during(wd: Path, kind: str) -> None:
    case = CASES[kind]
    # the quick run's JSON, not its records (which wait for its device's teardown): ram stays up
    plan = snakemake(wd, "-n", "results/local/records/fio/quick.csv").stdout
    quick_run = re.search(r"results/local/fio/quick/ram/[^/\s,]+/run0\.json", plan).group(0)
    targets = [quick_run, f"results/local/records/{case['records']}/long.csv"]
    proc = _start(wd, case["to"], [*targets, "--prioritize", targets[0]], case.get("sigint_ignored", False))
    try:
        logs = wd / "logs" / "local" / case["logs"]
        _wait_for(lambda: logs.is_dir() and any(p.is_file() for p in logs.rglob("*.log")), 240, "the long job", proc)
        state = wd / "results/local/devices/state/dev.json"
        if "mariadb" in kind:  # its server is up
            _wait_for(lambda: stop.servers([wd / "results/local"]) > 0, 120, "the MariaDB server", proc)
        elif kind.startswith("ooc"):  # its programs run in the memory cgroup
            _wait_for(lambda: "memcg" in json.loads(state.read_text()).get("created", {}), 120, "the memory cgroup", proc)
        time.sleep(3)
        held = json.loads(state.read_text()).get("created", {})
        sig = case.get("sig", signal.SIGTERM)
        t0 = time.monotonic()
        proc.send_signal(sig)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end within 60 s of {sig.name}:\n{_stop_late(proc)[-3000:]}")
        took = time.monotonic() - t0
        assert proc.returncode != 0, out[-3000:]
        stopped = [ln for ln in out.splitlines() if ln.startswith("benchcast: run stopped by")]
        assert len(stopped) == 1, out[-3000:]
        assert "1 job(s) stopped" in stopped[0] and " dev" in stopped[0] and "ram" in stopped[0], stopped[0]
        assert ("MariaDB server(s) stopped" in stopped[0]) == ("mariadb" in kind), stopped[0]
        assert "NOT cleaned" not in stopped[0] and "benchcast: report in" not in out, out[-2000:]
        print(f"{kind}: {sig.name} to {case['to']}: ended in {took:.1f} s; {stopped[0]}")
        # nothing of this tree is left: mounts, loop devices, swap, cgroups, servers, daemons, programs
        assert mounts_under(wd) == []
        assert str(wd) not in losetup_all()
        assert not [s for s in swap.active() if s["filename"].startswith(str(wd))]
        for name in ("memcg", "cgroup"):
            assert name not in held or not Path(held[name]).exists(), f"{name} {held[name]} left"
        deadline = time.monotonic() + 10
        while processes_under(wd) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_under(wd) == []
        assert stop.live_devices([state.parent]) == {}
        # no partial output passes as a result (a .partial name, removed by the next run); a resume
        # plans the long job again and nothing finished
        long_runs = [p for p in (wd / "results/local" / case["records"] / "long").rglob("run0*")
                     if ".partial" not in p.name]
        assert long_runs == [], long_runs
        quick = checksums(wd / "results/local/fio/quick")
        assert quick, "the quick fio run finished first"
        plan = planned_jobs(wd, *targets)
        assert plan.get(f"{case['records']}_run") == 1 and plan.get("fio_run", 0) == (case["records"] == "fio"), plan
        if kind == "delayed-mariadb":  # the reported hang: resume it for real, shorter, and it completes
            edit_config(wd, lambda c: c["studies"]["local"]["sources"]["long"].update(maxexecutiontime=2))
            snakemake(wd, *targets, *[f"results/local/devices/{d}/torn_down.json" for d in ("ram", "dev")])
            assert checksums(wd / "results/local/fio/quick") == quick
            assert (wd / "results/local/records/ycsb/long.csv").is_file()
            assert mounts_under(wd) == []
    finally:  # a failing test: stop the run first
        terminate(proc, 90)


@pytest.mark.workflow
@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_before_snakemake_starts_stops_the_run_there(tmp_path, sig):
    """A signal to ./benchcast.sh while it checks the command line (python -m benchcast.config.configfiles,
    a foreground child the signal does not reach): bash runs its trap only once that child has
    returned, and it used to go on and start Snakemake, which measured with the SIGINT lost. The
    run stops there, non-zero, with one line; Snakemake never starts."""
    wd = _tree(tmp_path, "fio", None)
    proc = _start(wd, "benchcast.sh", ["results/local/records/fio/long.csv"])
    try:
        deadline = time.monotonic() + 60
        while "benchcast.config.configfiles" not in [stop.job_name(p, "") for p in stop.children(proc.pid)]:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the command line check was not seen running:\n{proc.communicate()[0][-3000:]}")
            time.sleep(0.002)
        proc.send_signal(sig)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end within 30 s of {sig.name}:\n{_stop_late(proc)[-3000:]}")
    finally:
        terminate(proc, 90)
    stopped = [ln for ln in out.splitlines() if ln.startswith("benchcast: run stopped by")]
    assert stopped == [f"benchcast: run stopped by {sig.name} before Snakemake started"], out[-3000:]
    assert proc.returncode == 128 + sig, out[-3000:]
    assert not (wd / ".snakemake").exists() and not (wd / "results/local").exists(), out[-3000:]
    assert processes_under(wd) == [] and mounts_under(wd) == []
