"""How much CPU does the analysis of a study cost, start to report?

The paper study (imported tables, nothing measured) run from scratch in a scratch copy of this
tree, ``--runs`` times; with ``--beside OTHER`` (another checkout, for instance a clean clone of an
earlier commit) the same in a copy of OTHER, the two taking turns so that both meet the same hours of
a machine whose speed drifts. Prints per run the wall time, the CPU seconds of the run and every
process it started (user + system), the jobs and CPU per job; then the medians and, with
``--beside``, this tree's CPU over OTHER's (below 1: this tree is cheaper). CPU, not wall time, is
what a machine busy with other work pays for. Charts reuse a JavaScript bundle kept in the user's
cache (benchcast.report.charts); ``--cold`` gives every run an empty cache of its own.

    .venv/bin/python benchmarks/analysis_cpu.py [--runs 3] [--beside ../earlier] [--cold]

About 30 s per run here.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.scratch import ROOT, copy_workflow, edit_config, paper_study_only  # noqa: E402


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(root: Path, scratch: Path, cold: bool) -> dict:
    wd = copy_workflow(scratch / "tree", root)
    edit_config(wd, paper_study_only)
    env = dict(os.environ)
    if cold:
        env["XDG_CACHE_HOME"] = str(scratch / "cache")
    cpu, start = children_cpu(), time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2"], cwd=wd, env=env,
                          capture_output=True, text=True, timeout=1800)
    wall, cpu = time.monotonic() - start, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"analysis_cpu: the run in {wd} failed:\n{proc.stderr[-3000:]}")
    jobs = sum(1 for line in proc.stderr.splitlines() if line.startswith(("rule ", "localrule ")))
    return {"wall": wall, "cpu": cpu, "jobs": jobs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--beside", type=Path, help="another checkout of the workflow, run in turns with this one")
    ap.add_argument("--cold", action="store_true", help="every run with an empty cache of its own")
    args = ap.parse_args()
    trees = {"this": ROOT} | ({"beside": args.beside.resolve()} if args.beside else {})
    runs = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="benchcast-analysis-cpu-") as tmp:
        for i in range(args.runs):
            for name, root in trees.items():
                r = one_run(root, Path(tmp) / f"{name}{i}", args.cold)
                runs[name].append(r)
                print(f"{name:6} run {i + 1}: wall {r['wall']:6.1f} s  CPU {r['cpu']:6.1f} s  {r['jobs']} jobs  "
                      f"{r['cpu'] / max(r['jobs'], 1):.2f} s CPU per job", flush=True)
    median = {name: statistics.median(r["cpu"] for r in rs) for name, rs in runs.items()}
    for name, m in median.items():
        print(f"{name:6} median CPU {m:.1f} s ({trees[name]})")
    if args.beside:
        print(f"CPU this / beside: {median['this'] / median['beside']:.2f}")


if __name__ == "__main__":
    main()
