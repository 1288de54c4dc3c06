"""Tests of benchcast.core.smk: the glue of the rule scripts (log file, one-line errors, exit status)."""
import logging
from types import SimpleNamespace

import pytest

from benchcast import BenchcastError
from benchcast.core import smk

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing


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


# --- the adapter: every use of Snakemake beyond its documented API (benchcast.core.smk's docstring) ---
# Each fails when the installed Snakemake no longer has the name, or the signature or behaviour relied on.


def _params(fn) -> list[str]:
    import inspect

    return list(inspect.signature(fn).parameters)


def test_snakemake_is_the_pinned_version():
    """The uses below were checked against this Snakemake: a new one, check them (and the docstring)."""
    import snakemake

    assert snakemake.__version__ == "9.27.1"


def test_the_dag_gives_planned_jobs_their_reasons_and_dependencies():
    import snakemake.api  # noqa: F401 (Snakemake's modules import in this order)
    from snakemake.dag import DAG
    from snakemake.jobs import Reason

    assert _params(DAG.needrun_jobs) == ["self", "exclude_finished"]
    assert _params(DAG.reason) == ["self", "job"]
    assert isinstance(DAG.dependencies, property)
    assert "updated_input" in vars(Reason)  # a lazy property of the reason


def test_the_persistence_gives_an_outputs_end_time_and_the_checksums_its_job_read():
    from snakemake.persistence import MetadataRecord, PersistenceBase

    assert _params(PersistenceBase.metadata) == ["self", "target"]
    assert _params(PersistenceBase.input_checksums) == ["self", "job", "input_path"]
    assert "endtime" in MetadataRecord.model_fields and "input_checksums" in MetadataRecord.model_fields


def test_the_settings_name_forced_rules_target_jobs_and_keep_incomplete():
    import dataclasses

    from snakemake.settings.types import DAGSettings, ExecutionSettings
    from snakemake.target_jobs import TargetSpec, parse_target_jobs_cli_args

    assert {"forcerun", "target_jobs"} <= {f.name for f in dataclasses.fields(DAGSettings)}
    assert "keep_incomplete" in {f.name for f in dataclasses.fields(ExecutionSettings)}
    assert parse_target_jobs_cli_args(["fio_run:study=s,device=d"]) == [
        TargetSpec("fio_run", {"study": "s", "device": "d"})]
    assert TargetSpec._fields == ("rulename", "wildcards_dict")


def test_the_workflow_says_how_it_runs_and_its_scheduler_which_jobs_failed():
    import dataclasses
    import inspect

    import snakemake.api  # noqa: F401
    from snakemake.jobs import GroupJob, Job
    from snakemake.scheduling.job_scheduler import JobScheduler
    from snakemake.workflow import Workflow

    for name in ("dag", "persistence", "scheduler", "touch", "local_exec", "remote_exec", "subprocess_exec",
                 "executor_plugin"):
        assert isinstance(vars(Workflow)[name], property), name
    assert {"dag_settings", "execution_settings"} <= {f.name for f in dataclasses.fields(Workflow)}
    assert "self.failed = set()" in inspect.getsource(JobScheduler.__init__)
    assert isinstance(GroupJob.jobs, property) and callable(GroupJob.is_group) and callable(Job.is_group)


def test_the_scheduler_schedules_its_wakeups_in_one_method():
    """:func:`smk.coalesce_reevaluations` replaces it; its behaviour: test_the_scheduler_keeps_one_wakeup_timer."""
    import inspect

    from snakemake.scheduling.job_scheduler import JobScheduler

    smk.coalesce_reevaluations()
    assert getattr(JobScheduler._schedule_reevalutation, "benchcast", False)
    assert _params(JobScheduler._schedule_reevalutation) == ["self", "delay"]
    source = inspect.getsource(JobScheduler)
    assert "self._schedule_reevalutation(" in source and "self._open_jobs" in source


def test_aside_renames_a_scripts_named_outputs(tmp_path):
    """A script's ``snakemake.output`` (Snakemake's OutputFiles): its names follow the items."""
    from snakemake.iocontainers import OutputFiles

    output = OutputFiles([str(tmp_path / "a.csv"), str(tmp_path / "b.svg")])
    output._set_name("table", 0)
    output._set_name("chart", 1)
    pairs = smk.aside(output)
    assert [output.table, output.chart] == [tmp for tmp, _ in pairs] == list(output)
    assert [final for _, final in pairs] == [str(tmp_path / "a.csv"), str(tmp_path / "b.svg")]


def test_strip_wildcard_constraints_is_snakemakes():
    assert smk.strip_wildcard_constraints("r/{study}/{n,[0-9]+}.csv") == "r/{study}/{n}.csv"


def test_snakemakes_command_line_is_read_as_the_adapter_reads_it():
    """read_command_line's two calls, and the options dry_run_requested and stale_lock read from sys.argv."""
    from snakemake import cli

    assert _params(cli.parse_args) == ["argv"] and _params(cli.args_to_api) == ["args", "parser"]
    parser = cli.get_argument_parser()
    for dry in (["-n"], ["--dry-run"], ["--dryrun"], ["-pn"]):
        assert parser.parse_args(dry).dryrun and smk.dry_run_requested(["snakemake", *dry]), dry
    known = {o for action in parser._actions for o in action.option_strings}
    assert set(smk.NO_LOCK_OPTIONS) <= known, set(smk.NO_LOCK_OPTIONS) - known


ADAPTER_SNAKEFILE = '''
import json, os, sys
sys.path.insert(0, os.environ["BENCHCAST_SCRIPTS"])
from benchcast.core import smk

rule all:
    input: "c.txt"

rule a:
    output: "a.txt"
    shell: "echo a > {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}"

rule c:
    input: "b.txt"
    output: "c.txt"
    shell: "cat {input} > {output}"

rule w:
    output: "w/{x}.txt"
    shell: "touch {output}"

rule fail:
    output: "f.txt"
    shell: "echo partial > {output}; exit 1"

onstart:
    wf = workflow
    jobs = {j.rule: j for j in smk.needrun_jobs(wf)}
    seen = {"needrun": sorted(jobs), "forced": sorted(smk.forced(wf)), "touch": smk.touch_run(wf),
            "local": smk.runs_jobs_here(wf), "in_a_job": smk.in_a_job(wf), "executor": smk.executor_name(wf),
            "keep": smk.keeps_incomplete(wf), "targets": smk.target_jobs(wf)}
    if "b" in jobs:
        deps = smk.dependencies(wf, jobs["b"])
        seen.update(updated=sorted(smk.updated_inputs(wf, jobs["b"])), deps=[d.rule for d in deps],
                    b=[list(jobs["b"].input), list(jobs["b"].output)], end=smk.output_end_time(wf, deps[0], "a.txt"),
                    read=sorted(smk.recorded_checksums(wf, jobs["b"], "a.txt")))
    if "w" in jobs:
        seen.update(wildcards=jobs["w"].wildcards)
    json.dump(seen, open(os.environ["SEEN"], "w"))

onerror:
    json.dump([[j.rule, list(j.output)] for j in smk.failed_jobs(workflow)], open("failed.json", "w"))
'''


@pytest.mark.workflow
def test_the_adapter_reads_a_real_run(tmp_path):
    """A real Snakemake run (a -> b -> c, a wildcard rule, a failing rule) as the hooks read it."""
    import hashlib
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "Snakefile").write_text(ADAPTER_SNAKEFILE)

    def run(name, *args, check=True):
        env = {**os.environ, "SEEN": str(tmp_path / f"{name}.json"),
               "BENCHCAST_SCRIPTS": str(Path(__file__).resolve().parents[1] / "scripts")}
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert (proc.returncode == 0) == check, proc.stderr[-2000:]
        return json.loads((tmp_path / f"{name}.json").read_text())

    first = run("first")
    assert first["needrun"] == ["a", "all", "b", "c"] and first["updated"] == [] and first["deps"] == ["a"]
    assert first["b"] == [["a.txt"], ["b.txt"]] and first["end"] is None and first["read"] == []
    assert (first["local"], first["in_a_job"], first["executor"], first["touch"], first["keep"]) == (
        True, False, "local", False, False)
    assert first["forced"] == [] and first["targets"] == []
    end_a = os.path.getmtime(tmp_path / "a.txt")
    (tmp_path / "a.txt").write_text("changed\n")  # newer than b.txt
    second = run("second", "--forcerun", "c")
    assert second["needrun"] == ["all", "b", "c"] and second["updated"] == ["a.txt"] and second["deps"] == ["a"]
    assert abs(second["end"] - end_a) < 2  # job a's end, as recorded in the first run
    assert second["read"] == ["sha256:" + hashlib.sha256(b"a\n").hexdigest()]  # what b read then
    assert second["forced"] == ["c"]
    (tmp_path / "a.txt").write_text("again\n")
    assert run("touch", "--touch")["touch"]
    targeted = run("targeted", "--target-jobs", "w:x=1")
    assert targeted["targets"] == [["w", {"x": "1"}]] and targeted["wildcards"] == {"x": "1"}
    assert run("failing", "--keep-incomplete", "f.txt", check=False)["keep"]
    assert json.loads((tmp_path / "failed.json").read_text()) == [["fail", ["f.txt"]]]


#: Snakemake beyond its documented API: no file of the workflow but benchcast/core/smk.py names it.
PRIVATE = [
    r"\bworkflow\.(dag|persistence|scheduler|dag_settings|execution_settings|touch|local_exec|remote_exec"
    r"|subprocess_exec|executor_plugin)\b",
    r"\bdag_settings\b", r"\bdag\.(needrun_jobs|reason|dependencies)\b", r"\bpersistence\.(metadata|input_checksums)\b",
    r"_schedule_reevalutation",
    r"\b_set_name\b", r"\b_get_names\b",
    r"\bsnakemake\.(io|iocontainers|cli|api|scheduling|dag|persistence|jobs|settings|target_jobs|executors"
    r"|workflow|common|logging|exceptions|parser|rules|script)\b",
    # an import of Snakemake's, but the documented min_version (the Snakefile's first line)
    r"^\s*(from snakemake(\.\w+)* import (?!min_version$)|import snakemake)",
]


def private_uses(text: str) -> list[str]:
    import re

    return [f"line {n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
            if any(re.search(p, line) for p in PRIVATE)]


def test_only_the_adapter_touches_snakemakes_internals():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    adapter = root / "scripts" / "benchcast" / "core" / "smk.py"
    files = [*(root / "scripts").rglob("*.py"), *(root / "rules").rglob("*.smk"), *root.glob("*.smk"),
             root / "Snakefile"]
    found = {str(f.relative_to(root)): uses for f in files if f != adapter and (uses := private_uses(f.read_text()))}
    assert not found, found
    assert private_uses(adapter.read_text())  # the check finds them where they are


def test_the_private_names_check_finds_each_kind():
    for line in ("x = workflow.dag.needrun_jobs()", "workflow.persistence.metadata(f)", "workflow.scheduler.failed",
                 "set(workflow.dag_settings.forcerun)", "if workflow.touch:", "from snakemake.io import expand",
                 "import snakemake", "cls._schedule_reevalutation = f", "output._set_name(n, 0)",
                 "from snakemake import cli", "snakemake.io.strip_wildcard_constraints(p)",
                 "dag = workflow.dag; dag.reason(job)", "self.persistence.metadata(f)"):
        assert private_uses(line), line
    for line in ("from snakemake.utils import min_version", "snakemake.output[0]", "log=snakemake.log[0]",
                 "workflow.basedir", "bc_smk.needrun_jobs_of(wf)"):
        assert not private_uses(line), line
