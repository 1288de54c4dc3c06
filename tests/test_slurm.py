"""The workflow through a real Slurm: a single-node cluster on this machine (tests/slurm_util.py),
the project's profiles/slurm, and the same results as a local run. Two runs share the cluster at
once: a measured study (a round cancelled, then resumed) and the paper study through the Slurm
recipe (most of a Slurm run is waiting for the plugin's status checks).

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
from benchcast.records import correction
from workflow_util import ROOT, copy_workflow, edit_config, snakemake, terminate
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
    # cap the whole run at 2 cores, so it is switched off, as docs/guide/slurm.md says.
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


def assert_went_through_slurm(cluster, workdir: Path, proc, cancelled=frozenset()) -> list[str]:
    ids = slurm_job_ids(workdir)
    assert ids, proc.stderr[-3000:]
    assert len(set(ids)) == len(ids)
    logs = {p.stem for p in (workdir / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert set(ids) <= logs, (ids, logs)
    # the controller knows them, all COMPLETED (finished jobs stay listed for MinJobAge=3600 s: the
    # measured run through Slurm takes minutes, and a job that ended before them must still be there)
    q = cluster.run("squeue", "--states=all", "--noheader", "--format=%i|%T", "--jobs", ",".join(ids))
    states = dict(line.split("|") for line in q.stdout.split())
    assert states == {i: "CANCELLED" if i in cancelled else "COMPLETED" for i in ids}
    return ids


# --- a measured fio grid, in rounds per device ------------------------------------------------------
# Through Slurm, one device's round job is cancelled part-way (scancel: SIGTERM, then SIGKILL after
# KillWait) while the other device goes on (--keep-going); the resumed run measures only what that
# job left unfinished, on the device's node, and the results have the rows of a local run.

FIO_RULES = ROOT / "rules" / "fio.smk"
CANCELLED = "dram"  # the device whose round job is cancelled: a tmpfs, so a leftover is a mount
ROUND = "1"  # its last round: no later job of the device provisions it again in the first run
# the plugin's log folder of a group job: group_<group id>_<its rules>
ROUND_LOG = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S*/group_round_local_(\w+?)_r(\d+)_fio_run/\S*)\)")


DEVICES = ["disk", "dram"]
CELLS = 4  # per device and round: randread/randwrite x 4K/64K (conftest.mini_local_study), 2 rounds


def fio_grid(mini, node=None):
    """conftest.mini_local_study cut to its fio grid on a tmpfs and a directory (a short run on a
    machine shared with other tests), every device on ``node`` if given."""

    def edit(cfg):
        mini(cfg)
        local = cfg["studies"]["local"]
        local["devices"] = {d: local["devices"][d] for d in DEVICES}
        local["sources"] = {"fio": local["sources"]["fio"]}
        local.pop("report")  # its focus names the YCSB series
        for spec in local["devices"].values():
            if node:
                spec["node"] = node

    return edit


def measured_copy(tmp_path_factory, name, jar, edit):
    wd = copy_workflow(tmp_path_factory.mktemp(name))
    edit_config(wd, edit)
    dest = wd / "results" / "ycsb" / "benchcast-ycsb.jar"
    dest.parent.mkdir(parents=True)
    shutil.copy2(jar, dest)
    os.utime(dest)  # newer than the sources: reused, not rebuilt
    return wd


def mounted_under(wd: Path) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout
    return [m for m in out.split() if m.startswith(str(wd))]


def device_state(wd: Path, device: str) -> dict:
    import json

    path = wd / "results" / "local" / "devices" / "state" / f"{device}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def measurements(wd: Path) -> dict[str, int]:
    """Raw measurement outputs (fio JSON, YCSB run records) -> mtime in ns."""
    root = wd / "results" / "local"
    found = list((root / "fio").rglob("run*.json")) + list((root / "ycsb").rglob("run*.csv"))
    return {str(p.relative_to(wd)): p.stat().st_mtime_ns for p in found}


def cancel_round_part_way(cluster, wd: Path, log: Path, proc, device: str, timeout=900) -> tuple[str, list[str]]:
    """Wait until the Slurm job of ``device``'s round :data:`ROUND` runs and has measured at least
    one of its cells, cancel it (scancel) and return its Slurm job id and the cells it had measured."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before {device}'s round was cancelled:\n{log.read_text()[-4000:]}"
        rounds = [m for m in ROUND_LOG.finditer(log.read_text()) if m.group(3) == device and m.group(4) == ROUND]
        if rounds:
            jobid = rounds[0].group(1)
            done = [p for p in measurements(wd) if f"/{device}/" in p and p.endswith(f"run{ROUND}.json")]
            q = cluster.run("squeue", "-h", "-j", jobid, "-o", "%T", check=False).stdout.strip()
            if done and q == "RUNNING":
                cluster.run("scancel", jobid)
                return jobid, done
            assert q in ("PENDING", "CONFIGURING", "RUNNING", ""), f"{device}'s round job ended ({q}) before the cancel"
        time.sleep(0.2)
    raise AssertionError(f"{device}'s round {ROUND} never ran with a cell done:\n{log.read_text()[-4000:]}")


def node_clean_while_run_goes_on(wd: Path, proc, device: str, within=60) -> float:
    """After the cancel, the job itself tears its device down on its node (its state record says
    torn down, its mount is gone) while the run goes on with the other devices: not the main
    process's onerror teardown at the end. Returns the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < within:
        state = device_state(wd, device)
        if state.get("status") == "torn_down" and not [m for m in mounted_under(wd) if m.endswith(f"/mnt/{device}")]:
            assert proc.poll() is None, "the run ended first: the cleanup may be its onerror teardown"
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"{device} still provisioned {within} s after its job was cancelled: "
                         f"{device_state(wd, device)}, mounts {mounted_under(wd)}")


@pytest.fixture(scope="module")
def measured_runs(slurm_cluster, recipe, tmp_path_factory, ycsb_jar, mini_study):
    """The measured study run locally, then through Slurm with a round cancelled and resumed, while
    the paper study's recipe (:func:`recipe`, started first) goes through the same cluster."""
    if not FIO_RULES.exists():
        pytest.skip("rules/fio.smk not in the tree yet")
    node = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%N").stdout.strip()
    local = measured_copy(tmp_path_factory, "measured_local", ycsb_jar, fio_grid(mini_study))
    wd = measured_copy(tmp_path_factory, "measured_slurm", ycsb_jar, fio_grid(mini_study, node))
    try:
        start = time.monotonic()
        snakemake(local, timeout=1800)
        local_wall = time.monotonic() - start
        env = dict(slurm_cluster.env)
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
        log = wd / "first-run.log"
        with open(log, "w") as out:
            first = subprocess.Popen([sys.executable, "-m", "snakemake", "--profile", "profiles/slurm",
                                      *TEST_CLUSTER_ARGS, "--keep-going"], cwd=wd, env=env, stdout=out,
                                     stderr=subprocess.STDOUT)
        try:
            cancelled, measured = cancel_round_part_way(slurm_cluster, wd, log, first, CANCELLED)
            clean_after = node_clean_while_run_goes_on(wd, first, CANCELLED)
            assert first.wait(timeout=1800) != 0, "the run with a cancelled job must fail"
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        before = measurements(wd)
        missing = run_slurm(slurm_cluster, wd, "-n")[0]
        proc, wall = run_slurm(slurm_cluster, wd, timeout=1800)
        print(f"\n[slurm] measured study: local {local_wall:.1f} s, through Slurm {wall:.1f} s wall (resumed), "
              f"{len(slurm_job_ids(wd))} Slurm jobs; job {cancelled} cancelled, its device clean "
              f"{clean_after:.1f} s later")
        yield {"local": local, "wd": wd, "proc": proc, "cancelled": cancelled, "node": node,
               "before": before, "measured_when_cancelled": measured,
               "dry_resume": missing.stdout + missing.stderr}
    finally:
        for d in (local, wd):  # whatever a failed run left provisioned
            subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "teardown"], cwd=d, capture_output=True)


def test_measured_jobs_went_through_slurm_in_rounds(slurm_cluster, measured_runs):
    wd, proc = measured_runs["wd"], measured_runs["proc"]
    assert_went_through_slurm(slurm_cluster, wd, proc, cancelled={measured_runs["cancelled"]})
    logs = wd / ".snakemake" / "slurm_logs"
    # a device's benchmarks of one repeat form one Slurm job (at most 25 jobs each): here its 4 fio
    # cells; provisioning and teardown are a job each
    rounds = sorted(p.name for p in logs.iterdir() if p.name.startswith("group_"))
    assert rounds == [f"group_round_local_{d}_r{r}_fio_run" for d in DEVICES for r in (0, 1)]
    for name in rounds:
        texts = {log.stem: log.read_text() for log in (logs / name).rglob("*.log")}
        assert all("rule provision_device:" not in t and "rule teardown_device:" not in t for t in texts.values())
        cells = {c for t in texts.values() for c in re.findall(r"wildcards: (study=\S+ source=\S+ device=\S+ cell=\S+ repeat=\d+)", t)}
        assert len(cells) == CELLS, (name, cells)
        # the device stays up through the round and is released once, when the job ends
        assert all(t.count("benchcast: released") == 1 for i, t in texts.items() if i != measured_runs["cancelled"]), name
    assert len(list((logs / "rule_provision_device").rglob("*.log"))) == len(DEVICES)
    assert not any(logs.glob("rule_fio_run*"))


def test_measured_cancelled_round_resumes_only_unfinished(measured_runs):
    wd, before = measured_runs["wd"], measured_runs["before"]
    # what the cancelled job had measured outlived its failure (Snakemake removes a failed group's
    # outputs unless keep-incomplete)
    assert set(measured_runs["measured_when_cancelled"]) <= set(before)
    after = measurements(wd)
    assert len(after) == len(DEVICES) * CELLS * 2
    kept = {p: t for p, t in after.items() if p in before}
    assert kept == before, "a finished measurement was run again"
    redone = sorted(set(after) - set(before))
    assert redone and all(f"/{CANCELLED}/" in p for p in redone), redone
    # the resume's dry run planned exactly those measurements
    stats = measured_runs["dry_resume"].split("Job stats:")[1].split("total")[0]  # printed once per stream
    planned = dict(re.findall(r"^(\w+)\s+(\d+)$", stats, flags=re.M))
    assert int(planned.get("fio_run", 0)) == len(redone), (planned, redone)
    assert "provision_device" not in planned


def test_measured_jobs_ran_on_the_device_node(slurm_cluster, measured_runs):
    wd, node = measured_runs["wd"], measured_runs["node"]
    ids = slurm_job_ids(wd)
    q = slurm_cluster.run("squeue", "--states=all", "--noheader", "--format=%i|%k|%N|%n", "--jobs", ",".join(ids))
    rows = [line.split("|") for line in q.stdout.splitlines()]
    measuring = [r for r in rows if re.search(r"provision_device|teardown_device|round_local", r[1])]
    assert len(measuring) >= len(DEVICES) * 4, rows  # provision + teardown + 2 rounds per device
    # requested (--nodelist from the device's node: key) and allocated
    assert all(r[2] == node and r[3] == node for r in measuring), measuring


def key_rows(df: pd.DataFrame, drop) -> list[tuple]:
    return sorted(map(tuple, df.drop(columns=list(drop)).astype(str).itertuples(index=False)))


def test_measured_results_same_as_local(measured_runs):
    local, wd = measured_runs["local"], measured_runs["wd"]
    assert_same_shape(local, wd)
    fio_json = lambda d: sorted(str(p.relative_to(d)) for p in (d / "results" / "local" / "fio").rglob("run*.json"))  # noqa: E731
    assert fio_json(local) == fio_json(wd) and len(fio_json(wd)) == len(DEVICES) * CELLS * 2
    # the same records and aggregate, row for row, but for the measured values and the figures of
    # the run itself (its CPU share, the machine's speed around it, the value stated at a reference
    # speed: benchcast.records.correction)
    run_figures = [*correction.COLUMNS, "speed_run"]
    for rel, values in [("records/fio/fio.csv", ["value"]),
                        ("aggregated.csv", ["value", "mean", "std", "cv", "min", "max"])]:
        a, b = (pd.read_csv(d / "results" / "local" / rel) for d in (local, wd))
        drop = [*values, *(c for c in a.columns if c in run_figures or c.startswith("corrected"))]
        assert key_rows(a, drop) == key_rows(b, drop), rel


def test_measured_left_no_device_behind(measured_runs):
    local, wd = measured_runs["local"], measured_runs["wd"]
    assert mounted_under(local) == [] and mounted_under(wd) == []


# --- the paper study through the Slurm recipe (started with the measured study above) --------------


@pytest.fixture(scope="module")
def recipe(slurm_cluster, tmp_path_factory, paper_only):
    """docs/recipes/slurm.sh (./benchcast.sh slurm) on the paper study, as the guide gives it, with the
    test cluster's options after it, started: it goes on (its jobs mostly wait for the plugin's status
    checks) while the measured study below goes through the same cluster, and :func:`paper_runs`
    waits for it. Stopped at the module's end if it still runs."""
    wd = copy_workflow(tmp_path_factory.mktemp("paper_slurm"))
    edit_config(wd, paper_only)
    shutil.copy2(ROOT / "benchcast.sh", wd / "benchcast.sh")
    shutil.copy2(ROOT / "requirements.txt", wd / "requirements.txt")
    shutil.copytree(ROOT / "docs" / "recipes", wd / "docs" / "recipes")
    env = dict(slurm_cluster.env)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["BENCHCAST_VENV"] = str(Path(sys.executable).parent.parent)  # this venv: nothing installed again
    cmd = ["bash", "docs/recipes/slurm.sh", *TEST_CLUSTER_ARGS]
    out, err = (open(wd.parent / f"recipe.{name}", "w+") for name in ("stdout", "stderr"))
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=wd, env=env, stdout=out, stderr=err, text=True)
    try:
        yield {"wd": wd, "cmd": cmd, "proc": proc, "start": start, "out": out, "err": err}
    finally:
        terminate(proc, 60)  # bash passes SIGTERM on to Snakemake, which cancels its jobs
        out.close()
        err.close()


@pytest.fixture(scope="module")
def paper_runs(slurm_cluster, recipe, paper_tree):
    """The paper study run locally (conftest.paper_tree) and through Slurm by the recipe, waited for:
    the run, the report and the answers, one Slurm run for the tests below."""
    wd, cmd = recipe["wd"], recipe["cmd"]
    code = recipe["proc"].wait(timeout=1200)
    wall = time.monotonic() - recipe["start"]
    recipe["out"].seek(0)
    recipe["err"].seek(0)
    proc = subprocess.CompletedProcess(cmd, code, recipe["out"].read(), recipe["err"].read())
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-6000:]}\n{slurm_cluster.logs()}")
    print(f"\n[slurm] paper study through Slurm (the recipe): {wall:.1f} s wall from its start, "
          f"{len(slurm_job_ids(wd))} Slurm jobs")
    return paper_tree, wd, proc


def run_log(workdir: Path) -> str:
    """The log of the run that submitted the jobs (the recipe's report step writes one of its own)."""
    logs = [p.read_text() for p in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))]
    return next(text for text in logs if SUBMITTED.search(text))


def test_the_slurm_recipe_ends_in_the_report_and_the_answers(paper_runs):
    """docs/recipes/slurm.sh on the paper study: its jobs go through Slurm, and it ends as a local run
    does, with results/report.html and one line per spec card."""
    _local, wd, proc = paper_runs
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert slurm_job_ids(wd) and (wd / "results" / "report.html").is_file()
    assert re.search(r"^benchcast: paper: S-SCM: 42 of 42 series answered", out, flags=re.M), out[-3000:]


def test_paper_jobs_went_through_slurm(slurm_cluster, paper_runs):
    _local, wd, proc = paper_runs
    ids = assert_went_through_slurm(slurm_cluster, wd, proc)
    # every job but the target rule `all` (run locally by Snakemake) was a Slurm job
    jobs = re.findall(r"^localrule all:|^rule (\w+):", run_log(wd), flags=re.M)
    assert len(ids) == len([j for j in jobs if j]) > 5


def test_paper_results_same_shape_as_local(paper_runs):
    local, wd, _proc = paper_runs
    assert_same_shape(local, wd)


def test_paper_nothing_to_do_after_slurm_run(slurm_cluster, paper_runs):
    _local, wd, _proc = paper_runs
    proc, _ = run_slurm(slurm_cluster, wd, "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_cluster_stops_cleanly(slurm_cluster):
    """Last: stop the cluster (the fixture's own teardown is then a no-op) and check that no daemon
    or job step this test started is left."""
    slurm_cluster.stop()
    assert slurm_cluster.leftovers() == []
