"""Run the real workflow in a scratch copy of the project."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness.scratch import PARTS, copy_workflow, edit_config, paper_study_only, quiet  # noqa: E402,F401 (the benchmarks' too)


def snakemake(workdir: Path, *args, check=True, timeout=900):
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
    # shell rules call `python`: the one running the tests (the venv), as `--sdm conda` would give its env's
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def planned_jobs(workdir: Path, *args) -> dict:
    """Rule -> job count of a dry run."""
    out = snakemake(workdir, "-n", *args).stdout
    jobs = {}
    if "Job stats:" not in out:
        return jobs
    block = out.split("Job stats:", 1)[1]
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not m:
            break
        if m.group(1) != "total":
            jobs[m.group(1)] = int(m.group(2))
    return jobs


def measured_tree(dest: Path, mutate, jar: Path) -> Path:
    """A scratch copy of the workflow with its config edited by ``mutate``, the YCSB bindings jar
    put in place (newer than its sources: reused, not rebuilt), run to completion."""
    wd = copy_workflow(dest)
    edit_config(wd, mutate)
    target = wd / "results" / "ycsb" / "benchcast-ycsb.jar"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(jar, target)
    os.utime(target)
    snakemake(wd)
    return wd


def checksums(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, by relative path."""
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def terminate(proc: subprocess.Popen, timeout: float) -> None:
    """Stop a process we started: SIGTERM, and SIGKILL when it has not ended within ``timeout`` s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
