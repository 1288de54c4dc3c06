"""Tests of benchcast.core.smk: the glue of the rule scripts (log file, one-line errors, exit status)."""
import logging
from types import SimpleNamespace

import pytest

from benchcast import BenchcastError
from benchcast.core import smk


def fake(tmp_path):
    return SimpleNamespace(log=[str(tmp_path / "rule.log")])


def test_main_runs_and_logs_to_the_rules_log(tmp_path):
    smk.run(lambda sm: logging.getLogger("benchcast").info("did %s", "it"), fake(tmp_path))
    assert "did it" in (tmp_path / "rule.log").read_text()


def test_benchcast_error_is_one_line_and_exit_1(tmp_path, capsys):
    def bad(sm):
        raise BenchcastError("config: studies.x: unknown key 'y'")

    with pytest.raises(SystemExit) as info:
        smk.run(bad, fake(tmp_path))
    assert info.value.code == 1
    log = (tmp_path / "rule.log").read_text()
    assert "benchcast: config: studies.x: unknown key 'y'" in log and "Traceback" not in log


def test_other_errors_keep_their_traceback(tmp_path):
    with pytest.raises(ZeroDivisionError):
        smk.run(lambda sm: 1 / 0, fake(tmp_path))
    assert "Traceback" in (tmp_path / "rule.log").read_text()


def test_runs_here_finds_another_snakemake_in_this_folder_only(tmp_path):
    import subprocess
    import sys

    from benchcast.core.smk import runs_here

    fake = tmp_path / "snakemake"  # a process whose command is snakemake, started in tmp_path
    fake.write_text("import time\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(fake)], cwd=tmp_path)
    try:
        import time

        time.sleep(0.3)
        assert runs_here(str(tmp_path)) == [proc.pid]
        assert proc.pid not in runs_here(str(tmp_path.parent))
    finally:
        proc.kill()
        proc.wait()
    assert runs_here(str(tmp_path)) == []


def test_stale_lock_only_where_no_snakemake_runs_and_the_command_locks(tmp_path):
    """A lock in .snakemake/locks with no Snakemake of the folder alive is what a killed run left;
    a dry run, --unlock or --report does not lock, so for them it is none."""
    import subprocess
    import sys
    import time

    assert not smk.stale_lock(["snakemake", "--cores", "2"], str(tmp_path))
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("results/x.csv\n")
    assert smk.stale_lock(["snakemake", "--cores", "2"], str(tmp_path))
    for argv in (["snakemake", "-n"], ["snakemake", "-pn"], ["snakemake", "--unlock"],
                 ["snakemake", "--report", "r.html"], ["snakemake", "--nolock", "--cores", "1"],
                 ["snakemake", "--cores", "1", "teardown"]):
        assert not smk.stale_lock(argv, str(tmp_path)), argv
    fake = tmp_path / "snakemake"  # a run in progress holds the lock: not stale
    fake.write_text("import time\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(fake)], cwd=tmp_path)
    try:
        time.sleep(0.3)
        assert not smk.stale_lock(["snakemake", "--cores", "2"], str(tmp_path))
    finally:
        proc.kill()
        proc.wait()


SPIN_SNAKEFILE = '''
import os, sys, threading
sys.path.insert(0, os.environ["BENCHCAST_SCRIPTS"])
if os.environ.get("COALESCE") == "1":
    from benchcast.core import smk
    smk.coalesce_reevaluations()
_Timer = threading.Timer
STARTED = [0]
class Counting(_Timer):
    def start(self):
        STARTED[0] += 1
        super().start()
threading.Timer = Counting

rule all:
    input: expand("out/{i}.txt", i=range(30))

rule one:
    output: "out/{i}.txt"
    resources: slot=1
    shell: "sleep 0.2; touch {output}"

onsuccess:
    open("timers.txt", "w").write(str(STARTED[0]))
'''


@pytest.mark.workflow
def test_the_scheduler_keeps_one_wakeup_timer(tmp_path):
    """30 jobs that wait in turn for one resource, as benchmarks wait for the machine: Snakemake
    alone starts a wake-up timer on every pass and each timer runs another pass (the passes
    multiply and the main process spins a CPU); with :func:`smk.coalesce_reevaluations` it keeps
    one pending timer at a time, a few per finished job."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    counts = {}
    for coalesce in ("0", "1"):
        wd = tmp_path / coalesce
        wd.mkdir()
        (wd / "Snakefile").write_text(SPIN_SNAKEFILE)
        env = {**os.environ, "COALESCE": coalesce,
               "BENCHCAST_SCRIPTS": str(Path(__file__).resolve().parents[1] / "scripts")}
        subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "slot=1", "--quiet",
                        "all"], cwd=wd, env=env, check=True, capture_output=True, timeout=300)
        counts[coalesce] = int((wd / "timers.txt").read_text())
    assert counts["1"] <= 3 * 30 + 10, counts
    assert counts["0"] > 2 * counts["1"], counts  # the control: without it the timers multiply


def test_builds_results_but_for_the_cure_and_the_comparison():
    """teardown, --unlock and compare read no study's inputs: a bad imported file must not stop them."""
    from benchcast.core.smk import builds_results

    assert builds_results(["snakemake"]) and builds_results(["snakemake", "-n", "--config", "compare={}"])
    assert builds_results(["snakemake", "results/paper/aggregated.csv"])
    for args in (["teardown"], ["--unlock"], ["compare", "--config", "compare={a: {a: x, b: y}}"]):
        assert not builds_results(["snakemake", *args])
