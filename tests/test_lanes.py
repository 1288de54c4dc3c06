"""The two lanes of `./benchcast.sh test` (tests/conftest.py LANE): the workflow on imported results
alone at nice 19 beside the rest, its tests kept from starting a device or benchmark tool."""
import re
import subprocess

import conftest
from workflow_util import ROOT


def run_stand_in(folder, prog, *args):
    """The stand-in run through sh (the fast tier starts no device tool, not even a stand-in's name)."""
    return subprocess.run(["sh", str(folder / prog), *args], capture_output=True, text=True)


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
    """benchcast.sh selects the lane with conftest.LANE and the rest with its negation."""
    script = (ROOT / "benchcast.sh").read_text()
    assert f'-m "{conftest.LANE}"' in script and f'-m "not ({conftest.LANE})"' in script
    assert re.search(rf"{conftest.LANE_ENV}=imported nice -n 19 ", script)


def test_every_test_of_the_lane_runs_the_workflow():
    """What the lane holds, collected: workflow tests (the marker check in conftest refuses an
    `imported` one without it), none of them root or bench."""
    proc = subprocess.run(["bash", "-c", f'"$0" -m pytest -m "{conftest.LANE}" --collect-only -q -p no:cacheprovider',
                           conftest.sys.executable], cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [ln for ln in proc.stdout.splitlines() if "::" in ln]
    assert proc.returncode == 0 and len(ids) > 100, proc.stdout[-2000:]
    modules = {i.split("::")[0] for i in ids}
    assert {"tests/test_consistency.py", "tests/test_stored_local.py", "tests/test_workflow.py"} <= modules
    assert "tests/test_consistency.py::test_full_disk_during_the_analysis_then_the_same_command" not in ids
