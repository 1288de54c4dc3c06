"""The workflow through a real Slurm: a single-node cluster on this machine (tests/slurm_util.py),
the project's profiles/slurm, and the same results as a local run.

Needs root and `.ci/install-slurm.sh` (apt: slurm-wlm, munge); skipped otherwise.
Run: .venv/bin/python -m pytest tests/test_slurm.py -s   (-s shows the measured wall times)
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import slurm_util
from workflow_util import ROOT, copy_workflow, edit_config, snakemake
from ycsb_util import ycsb_jar  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.root,
    pytest.mark.skipif(slurm_util.skip_reason() is not None, reason=str(slurm_util.skip_reason())),
]

# Plugin options the test cluster needs on top of profiles/slurm:
#  - no accounting here, so sacct fails ("Slurm accounting storage is disabled") and the plugin
#    would never see a job end: query squeue instead (MinJobAge=3600 keeps finished jobs visible);
#  - the first status check after 2 s instead of 40 s keeps the test short.
TEST_CLUSTER_ARGS = [
    # profiles/default (cores: 2, benchmark_slots=1) is the workstation's; on a cluster it would
    # cap the whole run at 2 cores, so it is switched off, as docs/cluster.md says.
    "--workflow-profile", "none",
    "--slurm-status-command", "squeue",
    "--slurm-init-seconds-before-status-checks", "2",
    "--jobs", "4",
]
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    with slurm_util.single_node_cluster(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster
    left = cluster.leftovers()
    assert not left, f"Slurm/munge processes left after stop: {left}"


def run_slurm(cluster, workdir: Path, *args, timeout=900):
    """snakemake --profile profiles/slurm in workdir, clients pointed at the test cluster; the
    venv's bin first on PATH so the job (sbatch --export=ALL) finds the same python."""
    env = dict(cluster.env)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", *TEST_CLUSTER_ARGS, *args]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        logs = "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in (workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-6000:]}\n{logs}\n{cluster.logs()}")
    return proc, wall


def slurm_job_ids(workdir: Path) -> list[str]:
    ids = []
    for log in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log")):
        ids += SUBMITTED.findall(log.read_text())
    return ids


def tables(workdir: Path) -> dict[str, pd.DataFrame]:
    return {str(p.relative_to(workdir)): pd.read_csv(p) for p in sorted((workdir / "results").rglob("*.csv"))}


#: Tables whose row count depends on the measured values, not only on the design: which model is
#: selected decides whether a spec card has its figures (else the target is skipped), and a design
#: may be rank-deficient in one run and not in another. Only their columns must agree.
# Tables whose row count follows the measured values: the validation's candidate figures come from
# the device I/O each run recorded (validate.candidates: profile), so its folds and model lists too.
DATA_DEPENDENT = ("target_predictions.csv", "target_skipped.csv", "validity_target_intervals.csv",
                  "multiple_refusals.csv", "validity_refusals.csv", "simple_folds.csv", "simple_summary.csv",
                  "multiple_folds.csv", "multiple_summary.csv", "chosen_folds.csv", "noise.csv")


def assert_same_shape(local: Path, slurm: Path):
    a, b = tables(local), tables(slurm)
    assert a, "the local run wrote no tables"
    assert sorted(a) == sorted(b)
    for name in a:
        assert list(a[name].columns) == list(b[name].columns), name
        if not name.endswith(DATA_DEPENDENT):
            assert len(a[name]) == len(b[name]), name
    charts = lambda wd: sorted(str(p.relative_to(wd)) for p in (wd / "results").rglob("*.svg"))  # noqa: E731
    assert charts(local) == charts(slurm)


def assert_went_through_slurm(cluster, workdir: Path, proc) -> list[str]:
    ids = slurm_job_ids(workdir)
    assert ids, proc.stderr[-3000:]
    assert len(set(ids)) == len(ids)
    logs = {p.stem for p in (workdir / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert set(ids) <= logs, (ids, logs)
    # the controller knows them, all COMPLETED (finished jobs stay listed for MinJobAge=3600 s: the
    # measured run through Slurm takes minutes, and a job that ended before them must still be there)
    q = cluster.run("squeue", "--states=all", "--noheader", "--format=%i|%T", "--jobs", ",".join(ids))
    states = dict(line.split("|") for line in q.stdout.split())
    assert states == {i: "COMPLETED" for i in ids}
    return ids


@pytest.fixture(scope="module")
def paper_runs(slurm_cluster, tmp_path_factory, paper_only):
    local = copy_workflow(tmp_path_factory.mktemp("paper_local"))
    edit_config(local, paper_only)
    snakemake(local)
    wd = copy_workflow(tmp_path_factory.mktemp("paper_slurm"))
    edit_config(wd, paper_only)
    proc, wall = run_slurm(slurm_cluster, wd)
    print(f"\n[slurm] paper study through Slurm: {wall:.1f} s wall, {len(slurm_job_ids(wd))} Slurm jobs")
    return local, wd, proc


def test_paper_jobs_went_through_slurm(slurm_cluster, paper_runs):
    _local, wd, proc = paper_runs
    ids = assert_went_through_slurm(slurm_cluster, wd, proc)
    # every job but the target rule `all` (run locally by Snakemake) was a Slurm job
    jobs = re.findall(r"^localrule all:|^rule (\w+):", proc.stderr, flags=re.M)
    assert len(ids) == len([j for j in jobs if j]) > 5


def test_paper_results_same_shape_as_local(paper_runs):
    local, wd, _proc = paper_runs
    assert_same_shape(local, wd)


def test_paper_nothing_to_do_after_slurm_run(slurm_cluster, paper_runs):
    _local, wd, _proc = paper_runs
    proc, _ = run_slurm(slurm_cluster, wd, "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr


# --- a measured study (conftest.mini_local_study): real fio and YCSB, grouped per device ----------

FIO_RULES = ROOT / "rules" / "fio.smk"


def measured_copy(tmp_path_factory, name, jar, mini):
    wd = copy_workflow(tmp_path_factory.mktemp(name))
    edit_config(wd, mini)
    dest = wd / "results" / "ycsb" / "benchcast-ycsb.jar"
    dest.parent.mkdir(parents=True)
    shutil.copy2(jar, dest)
    os.utime(dest)  # newer than the sources: reused, not rebuilt
    return wd


def mounted_under(wd: Path) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout
    return [m for m in out.split() if m.startswith(str(wd))]


@pytest.fixture(scope="module")
def measured_runs(slurm_cluster, tmp_path_factory, ycsb_jar, mini_study):
    if not FIO_RULES.exists():
        pytest.skip("rules/fio.smk not in the tree yet")
    local = measured_copy(tmp_path_factory, "measured_local", ycsb_jar, mini_study)
    wd = measured_copy(tmp_path_factory, "measured_slurm", ycsb_jar, mini_study)
    try:
        start = time.monotonic()
        snakemake(local)
        local_wall = time.monotonic() - start
        proc, wall = run_slurm(slurm_cluster, wd)
        print(f"\n[slurm] measured study: local {local_wall:.1f} s, through Slurm {wall:.1f} s wall, "
              f"{len(slurm_job_ids(wd))} Slurm jobs")
        yield local, wd, proc
    finally:
        for d in (local, wd):  # whatever a failed run left provisioned
            subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "teardown"], cwd=d, capture_output=True)


def test_measured_jobs_went_through_slurm_one_group_per_device(slurm_cluster, measured_runs):
    _local, wd, proc = measured_runs
    assert_went_through_slurm(slurm_cluster, wd, proc)
    groups = [p for p in (wd / ".snakemake" / "slurm_logs").iterdir() if p.name.startswith("group_")]
    # provisioning, the fio cells, the YCSB runs and teardown of one device: one Slurm job
    group_logs = [log for g in groups for log in g.rglob("*.log")]
    assert len(group_logs) == 4, group_logs
    for log in group_logs:
        text = log.read_text()
        assert "rule provision_device:" in text and "rule teardown_device:" in text and "rule fio_run:" in text
    assert not any((wd / ".snakemake" / "slurm_logs").glob("rule_fio_run*"))


def test_measured_results_same_shape_as_local(measured_runs):
    local, wd, _proc = measured_runs
    assert_same_shape(local, wd)
    assert (wd / "results" / "local" / "tables" / "table12_predictions.csv").exists()
    fio_json = lambda d: sorted(str(p.relative_to(d)) for p in (d / "results" / "local" / "fio").rglob("*.json"))  # noqa: E731
    assert fio_json(local) == fio_json(wd) and len(fio_json(wd)) == 4 * 2 * 2 * 2


def test_measured_left_no_device_behind(measured_runs):
    local, wd, _proc = measured_runs
    assert mounted_under(local) == [] and mounted_under(wd) == []


def test_cluster_stops_cleanly(slurm_cluster):
    """Last: stop the cluster (the fixture's own teardown is then a no-op) and check that no daemon
    or job step this test started is left."""
    slurm_cluster.stop()
    assert slurm_cluster.leftovers() == []
