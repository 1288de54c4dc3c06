"""Tests of benchcast.host: the machine's provenance."""
import os
import platform
import shutil
import signal
import subprocess
import sys

import pytest

from benchcast import BenchcastError, host


def test_machine_names_this_host():
    m = host.machine()
    assert m["hostname"] == platform.node() and m["kernel"] == platform.release()
    cpu = subprocess.run(["grep", "-m1", "model name", "/proc/cpuinfo"], capture_output=True, text=True).stdout
    if cpu:
        assert m["cpu_model"] == cpu.split(":", 1)[1].strip()


def test_fio_version_is_the_fio_on_path():
    v = host.fio_version()
    if shutil.which("fio"):
        assert v.startswith("fio-") and v == subprocess.run(["fio", "--version"], capture_output=True,
                                                             text=True).stdout.strip()
    else:
        assert v == ""


def test_cpu_latency_is_held_while_the_block_runs_and_released_after(tmp_path):
    if host.cpu_latency_now() is None:
        pytest.skip(f"{host.PM_QOS} cannot be read here (not root?)")
    before = host.cpu_latency_now()
    with host.cpu_latency(0) as held:
        assert held == 0 and host.cpu_latency_now() == 0
    assert host.cpu_latency_now() == before
    with host.cpu_latency(None) as held:  # null: nothing held
        assert held is None and host.cpu_latency_now() == before


def test_cpu_latency_is_released_when_the_holder_is_killed():
    if host.cpu_latency_now() is None:
        pytest.skip(f"{host.PM_QOS} cannot be read here (not root?)")
    before = host.cpu_latency_now()
    code = "import sys, time; from benchcast import host\nwith host.cpu_latency(0):\n    print('held', flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout.readline().strip() == "held"
        assert host.cpu_latency_now() == 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert host.cpu_latency_now() == before


def test_a_limit_that_cannot_be_held_is_one_line_naming_the_key(monkeypatch, tmp_path):
    monkeypatch.setattr(host, "PM_QOS", str(tmp_path / "no-such-qos-file"))
    with pytest.raises(BenchcastError) as exc:
        with host.cpu_latency(0, where="studies.local.sources.fio.cpu_latency_us"):
            pass
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("studies.local.sources.fio.cpu_latency_us: ") and "null" in msg


def test_measured_settings_leave_a_null_latency_limit_out_and_keep_a_set_one():
    src = {"engines": ["rocksdb"], "cpu_latency_us": None, "repeats": 3}
    assert host.measured_settings(src) == {"engines": ["rocksdb"], "repeats": 3}
    assert host.measured_settings({**src, "cpu_latency_us": 0})["cpu_latency_us"] == 0
    assert src["cpu_latency_us"] is None  # the source itself is not changed
