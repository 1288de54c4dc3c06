"""How planning scales with the size of a fio grid: benchcast's dry run beside a trivial workflow.

Builds studies of D ``dir`` devices (1 and 10) x 2 patterns x B block sizes x R repeats (otherwise
the local study's fio settings) in a scratch copy of the workflow, times ``snakemake -n --quiet``
for each with the default profile and with the Slurm profile (``--profile profiles/slurm
--workflow-profile none``, as docs/guide/slurm.md says; a dry run submits nothing),
and, in the same run, a trivial Snakefile with the same number of jobs (one rule, one output per
job). Prints the wall and CPU times and each profile's ratio to the trivial one (d/t, s/t; goal:
<= 3); on a machine shared with other work the CPU ratios are the steadier ones.

    .venv/bin/python benchmarks/planning_scale.py                  # 1,000 / 10,000 / 50,000 cells
    .venv/bin/python benchmarks/planning_scale.py --cells 1000 2000 --devices 1
    .venv/bin/python benchmarks/planning_scale.py --profile 2000   # cProfile of benchcast's dry run
    .venv/bin/python benchmarks/planning_scale.py --profile 2000 --slurm
"""

from __future__ import annotations

import argparse
import resource
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

PATTERNS = ["randread", "randwrite"]
TRIVIAL = """\
N = int(config["jobs"])


rule all:
    input:
        expand("out/{i}.txt", i=range(N)),


rule one:
    output:
        "out/{i}.txt",
    shell:
        "touch {output}"
"""


PROFILES = {
    "default": [],
    "slurm": ["--profile", "profiles/slurm", "--workflow-profile", "none"],
}


def shape(cells: int, devices: int) -> tuple[int, int]:
    """Block sizes and repeats giving ``cells`` = devices x patterns x sizes x repeats."""
    per = cells // (devices * len(PATTERNS))
    if per * devices * len(PATTERNS) != cells:
        raise SystemExit(f"{cells} cells: not a multiple of {devices * len(PATTERNS)}")
    sizes = min(per, 10) if per <= 100 else 50
    if per % sizes:
        raise SystemExit(f"{cells} cells: {per} per device and pattern is not sizes x repeats")
    return sizes, per // sizes


def scale_config(work: Path, cells: int, devices: int) -> None:
    cfg_path = work / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    sizes, repeats = shape(cells, devices)
    fio = dict(cfg["studies"]["local"]["sources"]["fio"])
    fio.pop("exclude", None)  # names cells of the local grid, not of this one
    fio.update(rw=PATTERNS, block_sizes=[f"{4 * (i + 1)}K" for i in range(sizes)], repeats=repeats)
    devs = {}
    for i in range(devices):
        path = work / "devs" / f"d{i}"
        path.mkdir(parents=True, exist_ok=True)
        devs[f"d{i}"] = {"kind": "dir", "path": str(path)}
    study = {**cfg["studies"]["local"], "description": f"{cells} fio cells", "devices": devs, "sources": {"fio": fio}}
    study.pop("report", None)  # its focus names an application series: this study has none
    cfg["studies"] = {"scale": study}
    cfg.pop("run", None)
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))


def timed(cmd, cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and its children) of one command: on a
    shared, loaded machine the CPU time is the steadier figure."""
    t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    took, c1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return took, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)


def planned(work: Path, profile: list[str]) -> int:
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", *profile], cwd=work, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("fio_run"):
            return int(line.split()[-1])
    return 0


def dry_run(profile: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-n", "--quiet", *PROFILES[profile]]


def measure(base: Path, cells: int, devices: int) -> str:
    """One row: each profile's dry run and the trivial workflow's, and the ratios."""
    work = copy_workflow(base / f"c{cells}d{devices}")
    scale_config(work, cells, devices)
    if cells <= 2000:
        for args in PROFILES.values():
            assert planned(work, args) == cells, "the study does not plan the cells it should"
    trivial = base / f"t{cells}d{devices}"
    trivial.mkdir()
    (trivial / "Snakefile").write_text(TRIVIAL)
    times = {p: timed(dry_run(p), work) for p in PROFILES}
    times["trivial"] = timed([sys.executable, "-m", "snakemake", "-n", "--quiet", "--cores", "1",
                              "--config", f"jobs={cells}"], trivial)
    cols = [f"{cells:>7} {devices:>7}"]
    for i in (0, 1):  # wall, CPU
        t = {k: v[i] for k, v in times.items()}
        cols.append(f"{t['default']:>8.1f}s {t['slurm']:>8.1f}s {t['trivial']:>8.1f}s "
                    f"{t['default'] / t['trivial']:>6.2f} {t['slurm'] / t['trivial']:>6.2f}")
    return " | ".join(cols)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--devices", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--profile", type=int, metavar="CELLS", help="cProfile one dry run, print the top")
    ap.add_argument("--slurm", action="store_true", help="with --profile: the Slurm profile's dry run")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="benchcast-planning-"))
    try:
        if args.profile:
            work = copy_workflow(base / "profile")
            scale_config(work, args.profile, args.devices[0])
            out = base / "profile.pstats"
            cmd = dry_run("slurm" if args.slurm else "default")
            subprocess.run([cmd[0], "-m", "cProfile", "-o", str(out), *cmd[1:]], cwd=work, check=True,
                           capture_output=True)
            import pstats

            pstats.Stats(str(out)).sort_stats("cumulative").print_stats(40)
            return 0
        head = f"{'default':>9} {'slurm':>9} {'trivial':>9} {'d/t':>6} {'s/t':>6}"
        print(f"{'':>15} | {'wall':^45} | {'CPU':^45}")
        print(f"{'cells':>7} {'devices':>7} | {head} | {head}")
        for devices in args.devices:
            for cells in args.cells:
                print(measure(base, cells, devices), flush=True)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
