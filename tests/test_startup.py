"""Tests of benchcast.core.startup: ./benchcast.sh run's reading of the workflow before Snakemake starts,
in a scratch copy of the workflow (real Snakemake, real config files). A refusal is the only line it
prints; a workflow that reads, or a command line Snakemake itself refuses, prints nothing (the run
says what Snakemake has to say)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workflow_util import copy_workflow, edit_config

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parents[1]
NAN_CARD = ("studies:\n  paper:\n    targets:\n      S-SCM:\n        figures:\n"
            "          - {workload: randwrite, block_size: 64K, metric: lat_mean, value: \"nan\"}\n")


@pytest.fixture(scope="module")
def wf(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("startup") / "wf")
    edit_config(wd, lambda c: c.update(run={"studies": ["paper"]}))
    (wd / "nan.yaml").write_text(NAN_CARD)
    return wd


def startup(wd: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(wd / "scripts")}
    return subprocess.run([sys.executable, "-m", "benchcast.core.startup", *args], cwd=wd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_workflow_that_reads_prints_nothing(wf):
    proc = startup(wf)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (wf / "results").exists()  # reading the workflow writes no result


@pytest.mark.workflow
def test_a_refusal_is_the_only_line(wf):
    """The same line a direct snakemake call prints last, after its own opening lines."""
    proc = startup(wf, "--configfile", "nan.yaml")
    line = "config: studies.paper.targets.S-SCM.figures[0].value: 'nan' is not a finite number above 0\n"
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", line)
    direct = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "nan.yaml"], cwd=wf,
                            capture_output=True, text=True, timeout=300)
    assert direct.returncode == 1 and direct.stderr.endswith(line), direct.stderr[-2000:]
    assert "WorkflowError" not in direct.stderr and 'File "' not in direct.stderr, direct.stderr[-2000:]


def test_the_checks_read_the_command_line_as_the_run_will(wf):
    """A results folder that is a file is refused for a run, not for a dry run (which writes nothing):
    the workflow's checks see the run's own arguments, not the reading's --list-rules."""
    (wf / "results").write_text("x\n")
    try:
        assert startup(wf, "-n").returncode == 0
        proc = startup(wf)
        assert proc.returncode == 1 and proc.stderr.startswith("benchcast: results: the results folder is a file here")
        assert proc.stderr.count("\n") == 1
    finally:
        (wf / "results").unlink()


def test_what_snakemake_refuses_is_left_to_snakemake(wf):
    """An option Snakemake does not know: nothing said here, exit 0; the run reports it in its words."""
    proc = startup(wf, "--no-such-option")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_a_killed_runs_lock_is_left_to_the_run(wf):
    """A lock no live run holds (the run before was killed): the reading before the run leaves it,
    and the marker of the job the dead run had started, to the run, whose start recovers from
    them and says so in its one line (before, the reading cleared them silently: the run then
    neither tore down what the dead run left nor said anything, issue 52)."""
    locks = wf / ".snakemake" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    lock = locks / "0.output.lock"
    lock.write_text(str(wf / "results" / "paper" / "aggregated.csv") + "\n")
    try:
        proc = startup(wf)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert lock.exists()
    finally:
        lock.unlink(missing_ok=True)
