"""cli: a measuring entry point's output goes to its log; a failure's one line also to stderr."""
import subprocess
import sys
from pathlib import Path
import pytest

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

SCRIPTS = str(Path(__file__).resolve().parents[1] / "scripts")

PROGRAM = """
import subprocess, sys
sys.path.insert(0, {scripts!r})
from benchcast import BenchcastError
from benchcast.core.cli import run_logged

def job():
    print("from python")
    subprocess.run(["echo", "from a child"])
    if {fail!r}:
        raise BenchcastError("device x: something is wrong")

sys.exit(run_logged(job, {log!r}))
"""


def run(tmp_path, fail):
    log = tmp_path / "job.log"
    code = PROGRAM.format(scripts=SCRIPTS, fail=fail, log=str(log))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True), log


def test_success_writes_everything_to_the_log_and_nothing_to_stderr(tmp_path):
    proc, log = run(tmp_path, fail=False)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert "from python" in log.read_text() and "from a child" in log.read_text()


def test_failure_puts_its_one_line_in_the_log_and_on_stderr(tmp_path):
    proc, log = run(tmp_path, fail=True)
    assert proc.returncode == 1
    assert proc.stderr == "benchcast: device x: something is wrong\n"
    assert log.read_text().rstrip().endswith("benchcast: device x: something is wrong")


STOPPED = """
import signal, sys, time
sys.path.insert(0, {scripts!r})
from benchcast import devices
from benchcast.core.cli import run_logged

def job():
    with devices.signals_raise():  # as a measuring job's device session does
        open({log!r} + ".ready", "w").close()
        time.sleep(30)

sys.exit(run_logged(job, {log!r}))
"""


def test_a_job_told_to_stop_says_so_in_the_log_and_on_stderr(tmp_path):
    import signal

    log = tmp_path / "job.log"
    p = subprocess.Popen([sys.executable, "-c", STOPPED.format(scripts=SCRIPTS, log=str(log))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time

    deadline = time.monotonic() + 20
    while not (tmp_path / "job.log.ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + signal.SIGTERM
    assert err == "benchcast: stopped by SIGTERM\n" and log.read_text().endswith("benchcast: stopped by SIGTERM\n")
