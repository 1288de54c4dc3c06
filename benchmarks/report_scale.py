"""How the analysis and the report scale: a synthetic study of 10,000 cells and 1,000,000 records.

Builds the records of 20 devices (fio: 2 patterns x 10 block sizes x 5 queue depths x 7 metrics,
12 repeats; YCSB: 2 engines x 4 workloads x 50 data sizes, 3 ops x mean/p95/p99 latency and
throughput and run time, 13 repeats), pushes them through aggregate (trimmed mean) and screening (every series
on every device figure) as rules/analysis.smk does, then builds the report's tables and charts from
those results as the rules of rules/report.smk do (the same package calls, SVG + interactive HTML),
and a Snakemake report of them (a tiny workflow declaring them with report()), and a comparison of
the study with a perturbed copy of itself (the compare target's table and chart). Prints each
stage's time, the peak memory (ru_maxrss) and the size of the chart pages and of the report
(goal: under a minute and 2 GB; report under 20 MB).

    .venv/bin/python benchmarks/report_scale.py [--keep DIR] [--no-report]
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

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from benchcast import aggregate, features, records
from benchcast.report import app_charts, charts, device_charts, paper_charts, spread_charts, tables
from benchcast.screening import screen

DEVICES = [f"dev{i:02d}" for i in range(20)]
FIO = dict(workloads=["randread", "randwrite"], block_sizes=[1024 << i for i in range(10)], qd=[1, 2, 4, 16, 64],
           metrics={"lat_mean": "us", "clat_mean": "us", "clat_p50": "us", "clat_p99": "us", "clat_p99.9": "us",
                    "bw": "B/s", "iops": "ops/s"}, repeats=12)
YCSB = dict(engines=["rocksdb", "mariadb"], workloads=["read-only", "read-heavy", "write-heavy", "write-only"],
            sizes=[int(4e6 * 1.1 ** i) for i in range(50)], ops=["read", "update", "overall"], repeats=13)
TRIM = 1


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def grid(**axes) -> pd.DataFrame:
    """The cartesian product of the axes (name -> values) as a table."""
    names = list(axes)
    mesh = np.meshgrid(*[np.asarray(axes[n], dtype=object) for n in names], indexing="ij")
    return pd.DataFrame({n: m.ravel() for n, m in zip(names, mesh)})


def synthetic_records(rng) -> tuple[pd.DataFrame, int]:
    """The study's records (record columns) and its number of cells (grid points: device x
    benchmark x engine x workload x block size x queue depth x data size)."""
    speed = dict(zip(DEVICES, np.logspace(0, 3, len(DEVICES))))  # device i is 10^(3 i / 19) x slower
    f = grid(device=DEVICES, workload=FIO["workloads"], block_size=FIO["block_sizes"], threads=FIO["qd"],
             metric=list(FIO["metrics"]), run=range(FIO["repeats"]))
    lat = (f["device"].map(speed) * (5 + f["block_size"].astype(float) / 4096) * f["threads"].astype(float) ** 0.5)
    lat = lat.astype(float)
    iops = f["threads"].astype(float) * 1e6 / lat
    mult = f["metric"].map({"lat_mean": 1.0, "clat_mean": 0.95, "clat_p50": 0.9, "clat_p99": 3.0, "clat_p99.9": 8.0})
    f["value"] = np.where(f["metric"] == "iops", iops,
                          np.where(f["metric"] == "bw", iops * f["block_size"].astype(float), lat * mult))
    f = f.assign(benchmark="fio", engine="libaio", data_size=0, op=np.where(f["workload"] == "randread", "read", "write"),
                 unit=f["metric"].map(FIO["metrics"]), source="fio")
    fio_cells = len(DEVICES) * len(FIO["workloads"]) * len(FIO["block_sizes"]) * len(FIO["qd"])

    metric_rows = [(op, m, "us") for op in ("read", "update") for m in ("lat_mean", "lat_p95", "lat_p99")]
    metric_rows += [("overall", "throughput", "ops/s"), ("overall", "runtime", "ms")]
    y = grid(device=DEVICES, engine=YCSB["engines"], workload=YCSB["workloads"], data_size=YCSB["sizes"],
             m=range(len(metric_rows)), run=range(YCSB["repeats"]))
    mr = pd.DataFrame(metric_rows, columns=["op", "metric", "unit"])
    y = pd.concat([y.drop(columns="m"), mr.iloc[y["m"].astype(int)].reset_index(drop=True)], axis=1)
    base = y["device"].map(speed).astype(float) * 3 + 50 * np.log(y["data_size"].astype(float) / 1e6)
    tail = y["metric"].map({"lat_mean": 1.0, "lat_p95": 2.5, "lat_p99": 6.0, "throughput": 1.0, "runtime": 20.0})
    y["value"] = np.where(y["metric"] == "throughput", 1e6 / base, base * tail)
    y = y.assign(benchmark="ycsb", block_size=0, threads=1, source="ycsb")
    ycsb_cells = len(DEVICES) * len(YCSB["engines"]) * len(YCSB["workloads"]) * len(YCSB["sizes"])

    recs = pd.concat([f, y], ignore_index=True)
    noise = rng.lognormal(0.0, 0.03, len(recs))
    noisy = rng.random(len(recs)) < 0.003  # a few runs disturbed: some cells spread above the CV threshold
    noise[noisy] *= rng.lognormal(0.0, 0.5, int(noisy.sum()))
    recs["value"] = recs["value"].to_numpy(float) * noise
    recs["study"] = "scale"
    for c in records.INT_COLUMNS:
        recs[c] = recs[c].astype("int64")
    return recs[records.COLUMNS].reset_index(drop=True), fio_cells + ycsb_cells


SNAKEFILE = """
report: "workflow.rst"

FILES = {files!r}


rule all:
    input:
        expand("results/{{f}}", f=FILES),


rule one:
    input:
        "made/{{f}}",
    output:
        report("results/{{f}}", caption="caption.rst", category="scale", subcategory="{{f}}"),
    shell:
        "cp {{input}} {{output}}"
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    ap.add_argument("--no-report", action="store_true", help="skip the Snakemake report")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="report_scale."))
    made = work / "made"
    made.mkdir(parents=True, exist_ok=True)
    times = {}
    t_all = time.perf_counter()

    def stage(name, t0):
        times[name] = time.perf_counter() - t0
        print(f"{name:<28} {times[name]:7.2f} s   peak RSS {rss_mb():7.0f} MB", flush=True)

    t0 = time.perf_counter()
    recs, cells = synthetic_records(np.random.default_rng(7))
    stage("synthetic records", t0)
    print(f"  {cells:,} cells, {len(recs):,} records")

    t0 = time.perf_counter()
    agg = aggregate.aggregate(recs, trim=TRIM)
    stage("aggregate", t0)
    print(f"  {len(agg):,} trimmed means")
    del recs

    t0 = time.perf_counter()
    feats_cfg = {"benchmark": "fio", "workloads": FIO["workloads"], "metrics": ["lat_mean", "bw"],
                 "block_sizes": [records.size_label(b) for b in FIO["block_sizes"]]}
    series_cfg = {"metrics": ["lat_mean"]}
    pairing = [{"when": {"op": "read"}, "workloads": ["randread"]},
               {"when": {"op": "update"}, "workloads": ["randwrite"]}]
    feature_table = features.feature_table(agg, feats_cfg)
    screened = screen.screen(agg, feats_cfg, series_cfg, pairing, 3)
    best = screen.best(screened)
    stage("screen", t0)
    print(f"  {feature_table['feature'].nunique():,} features x {len(best):,} series: {len(screened):,} fits")

    t0 = time.perf_counter()
    focus = tables.default_focus(best, None)
    tables.table08(screened, focus, None).to_csv(made / "table08.csv", index=False)
    tables.table09_10(best).to_csv(made / "table09_10.csv", index=False)
    tables.table11(best).to_csv(made / "table11.csv", index=False)
    figures = device_charts.device_figures_table(agg)
    tables.write_report_table(figures, made / "device_figures.csv")
    noisy = tables.noisy_cells(agg, 0.1)
    tables.write_report_table(noisy, made / "noise.csv")
    overview = tables.app_overview(agg)
    tables.write_report_table(overview, made / "app_overview.csv")
    stage("report tables", t0)

    for name, make in (
        ("device_figures", lambda: device_charts.device_figures(figures)),
        ("noise", lambda: spread_charts.noise(noisy, 0.1, int((agg["n"] >= 2).sum()))),
        ("app_overview", lambda: app_charts.app_overview(overview)),
        ("heatmap_best_r2", lambda: paper_charts.heatmap_best_r2(best)),
    ):
        t0 = time.perf_counter()
        charts.save(make(), made / f"{name}.svg", made / f"{name}.html")
        stage(f"chart {name}", t0)
    t0 = time.perf_counter()
    other = agg.assign(value=agg["value"] * np.random.default_rng(8).lognormal(0.0, 0.05, len(agg)))
    cells_ab = tables.compare_cells(agg, other)
    compared = work / "compare"
    compared.mkdir(exist_ok=True)
    tables.write_report_table(cells_ab, compared / "ratios.csv")
    ratios = spread_charts.compare(cells_ab, ("a", "b"), max_cells=100)
    charts.save(ratios, compared / "ratios.svg", compared / "ratios.html")
    stage("compare (not in the report)", t0)
    print(f"  {len(cells_ab):,} cells compared: ratios.csv {(compared / 'ratios.csv').stat().st_size / 1e6:.1f} MB, "
          f"ratios.html {(compared / 'ratios.html').stat().st_size / 1e6:.1f} MB")
    pages = sorted(made.glob("*.html"))
    csvs = sorted(made.glob("*.csv"))
    mb = lambda paths: sum(p.stat().st_size for p in paths) / 1e6  # noqa: E731
    print(f"  chart pages: {len(pages)} HTML, {mb(pages):.1f} MB; SVG {mb(made.glob('*.svg')):.1f} MB; "
          f"tables {len(csvs)} CSV, {mb(csvs):.1f} MB")

    if not args.no_report:
        t0 = time.perf_counter()
        files = [p.name for p in pages + csvs]
        (work / "Snakefile").write_text(SNAKEFILE.format(files=files))
        (work / "workflow.rst").write_text("The 10,000-cell synthetic study (benchmarks/report_scale.py).\n")
        (work / "caption.rst").write_text("A report output of the synthetic study.\n")
        for extra in ([], ["--report", "report.html"]):
            subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all", *extra], cwd=work,
                           check=True, capture_output=True)
        stage("snakemake run + --report", t0)
        print(f"  report.html: {(work / 'report.html').stat().st_size / 1e6:.1f} MB")
    total = time.perf_counter() - t_all
    print(f"total {total:.1f} s, peak RSS of this process {rss_mb():.0f} MB (goal: < 60 s, < 2048 MB)")
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
