"""The two lanes of `./benchcast.sh test` (tests/conftest.py in_lane): the workflow on imported results
alone at nice 19 beside the rest, its tests kept from starting a device or benchmark tool."""
import functools
import os
import re
import subprocess
import sys

import conftest
from workflow_util import ROOT


def run_stand_in(folder, prog, *args):
    """The stand-in run through bash (the fast tier starts no device tool, not even a stand-in's name)."""
    return subprocess.run(["bash", str(folder / prog), *args], capture_output=True, text=True)


def test_a_stand_in_refuses_and_records_what_the_lane_started(tmp_path):
    started = conftest.lane_guard(tmp_path)
    proc = run_stand_in(tmp_path, "fio", "--name=x", "--filename=/dev/null")
    assert proc.returncode == 97 and "the test lane imported started fio" in proc.stderr
    proc = run_stand_in(tmp_path, "mount", "-t", "tmpfs", "x", str(tmp_path / "mnt"))
    assert proc.returncode == 97
    assert started.read_text().splitlines() == ["fio --name=x --filename=/dev/null",
                                                f"mount -t tmpfs x {tmp_path / 'mnt'}"]


def test_a_stand_in_lets_a_question_through(tmp_path):
    started = conftest.lane_guard(tmp_path)
    proc = run_stand_in(tmp_path, "losetup", "-J", "-l")
    assert proc.returncode == 0 and not started.exists(), proc.stderr
    assert {p.name for p in tmp_path.iterdir()} == set(conftest.GUARDED) - {"snakemake"}


def test_the_script_runs_the_lanes_conftest_names():
    """benchcast.sh names each lane to pytest (conftest.in_lane chooses its tests), every tier
    selected (`-m ""`), the lane `imported` at nice 19."""
    script = (ROOT / "benchcast.sh").read_text()
    runs = re.findall(rf'{conftest.LANE_ENV}=(\w+) (nice -n 19 )?"\$VENV/bin/python" -m pytest -m "" ', script)
    assert sorted(runs) == [("imported", "nice -n 19 "), ("rest", "")], runs


def test_a_lane_not_known_is_a_usage_error():
    proc = run_pytest("--collect-only", lane="nowhere")
    assert proc.returncode == 4 and "BENCHCAST_TEST_LANE='nowhere': a lane is one of imported, rest" in proc.stderr


#: What a test that times something or reads the machine's load uses: its module carries `timing`.
TIMES = re.compile(r"monotonic\(|time\.time\(|perf_counter|sleep\(|os\.nice|getloadavg|machine_now|getpriority|"
                   r"setaffinity|timeout=[0-9]{1,2}[,)]")


def run_pytest(*args, lane: str | None = None) -> subprocess.CompletedProcess:
    """``pytest -m "" ARGS`` with BENCHCAST_TEST_LANE set to ``lane`` (unset without one)."""
    env = {k: v for k, v in os.environ.items() if k != conftest.LANE_ENV}
    if lane:
        env[conftest.LANE_ENV] = lane
    return subprocess.run([sys.executable, "-m", "pytest", "-m", "", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@functools.lru_cache
def collected(lane: str | None = None, *args) -> list[str]:
    """The test ids a run of ``lane`` (every test without one) with ``args`` collects, in their order."""
    proc = run_pytest("--collect-only", *args, lane=lane)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return [ln for ln in proc.stdout.splitlines() if "::" in ln]


def test_the_two_lanes_hold_every_test_once():
    imported, rest, every = collected("imported"), collected("rest"), collected()
    assert imported and rest and not set(imported) & set(rest)
    assert sorted(imported + rest) == sorted(every)


def test_the_lane_holds_the_imported_workflow_and_the_fast_tier_but_what_times_things():
    """Collected: the imported-results modules and fast-tier modules; no root, bench or timing test; a
    module whose tests time something or read the machine's load carries `timing` (so a new one that
    forgets stays out of the niced lane only once it is marked: this test names it)."""
    ids = collected("imported")
    modules = {i.split("::")[0] for i in ids}
    assert {"tests/test_consistency.py", "tests/test_stored_local.py", "tests/test_workflow.py",
            "tests/test_validation.py"} <= modules
    assert "tests/test_consistency.py::test_full_disk_during_the_analysis_then_the_same_command" not in ids
    assert not modules & {"tests/test_quality.py", "tests/test_stop.py", "tests/test_slurm.py", "tests/test_faults.py"}
    assert not set(ids) & set(collected(None, "-m", "root or bench or timing"))
    # (the imported-results modules only poll, with deadlines of minutes: they run in this lane)
    unmarked = sorted(m for m in modules if TIMES.search(text := (ROOT / m).read_text())
                      and "pytest.mark.timing" not in text and "pytest.mark.imported" not in text)
    assert unmarked == [], f"these time things or read the load: give them pytestmark = pytest.mark.timing: {unmarked}"


def test_what_needs_the_machine_to_itself_runs_last_in_the_other_lane():
    """`quiet` tests (no niced work beside them) come last in the lane beside the niced one."""
    ids = collected("rest")
    quiet = collected(None, "-m", "quiet")
    assert quiet and ids[-len(quiet):] == quiet
