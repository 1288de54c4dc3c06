"""Orchestration overhead of the local study's fio stage: wall time / sum of fio's own run times.

Runs the real workflow (devices provisioned, every fio cell and repeat as its own Snakemake job,
teardown, records) for the `local` study's fio source in a scratch copy, and prints

    wall time of the Snakemake run / sum of the fio processes' wall times   (goal <= 1.10)
    wall time of the Snakemake run / sum of fio's measured job runtimes      (runtime + ramp only)

    .venv/bin/python benchmarks/fio_overhead.py            # the local study's grid as configured
    .venv/bin/python benchmarks/fio_overhead.py --quick    # 2 block sizes, 2 repeats
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from harness.scratch import copy_workflow  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 block sizes x 2 repeats")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchcast-fio-overhead-"))
    try:
        copy_workflow(work)
        cfg_path = work / "config" / "config.yaml"
        cfg = yaml.safe_load(cfg_path.read_text())
        study = cfg["studies"]["local"]
        study["sources"] = {"fio": study["sources"]["fio"]}
        if args.quick:
            study["sources"]["fio"]["block_sizes"] = ["4K", "64K"]
            study["sources"]["fio"]["repeats"] = 2
        cfg["studies"] = {"local": study}
        cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", "results/local/records/fio/fio.csv"],
            cwd=work, capture_output=True, text=True,
            env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout[-3000:], proc.stderr[-3000:])
            return 1
        fio_wall = 0.0
        for log in (work / "logs" / "local" / "fio").rglob("run*.log"):
            m = re.search(r"fio wall time ([0-9.]+) s", log.read_text())
            fio_wall += float(m.group(1))
        runtime = 0.0
        runs = list((work / "results" / "local" / "fio").rglob("run*.json"))
        skipped = 0
        for path in runs:
            data = json.loads(path.read_text())
            if data.get("benchcast_skipped"):  # a cell the device cannot run (e.g. 1K direct on zram)
                skipped += 1
                continue
            job = data["jobs"][0]
            runtime += (job["job_runtime"] + 1000 * float(job["job options"].get("ramp_time", 0))) / 1000.0
        print(f"fio runs: {len(runs) - skipped} (+{skipped} cells the device cannot run, recorded as skipped)")
        print(f"wall time of the workflow (provision + runs + teardown + records): {wall:.1f} s")
        print(f"sum of fio process wall times: {fio_wall:.1f} s  -> overhead ratio {wall / fio_wall:.3f}")
        print(f"sum of fio job runtimes:       {runtime:.1f} s  -> ratio {wall / runtime:.3f}")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            subprocess.run([sys.executable, "-m", "snakemake", "teardown"], cwd=work, capture_output=True)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
