"""How a cell's scatter falls with its length: what longer runs would buy.

One long run per (directory, engine) of YCSB's read-only and write-only workloads (the default
study's YCSB source: its record shape, RocksDB and MariaDB settings, the 8 MB data size) and one
long fio run per directory (the default grid's 4K random read, psync, QD1, direct), each second's
mean latency kept (YCSB's HdrHistogram interval logs with ``status.interval=1``; fio's JSON status
every second, differenced). It prints, per series, the coefficient of variation of the means of
k-second windows (k = 1, 2, 4, 8, 16): with independent seconds it falls as 1 / sqrt(k); where it
falls slower, the scatter is slow drift that a longer run does not average away. The last lines say
how long a window each series needs for ``--target`` percent, where the longest window reaches it.

    .venv/bin/python benchmarks/cell_noise.py --dir dram=/dev/shm/bc-noise --dir disk=/var/tmp/bc-noise

Each directory must be scratch space of yours (files are made and removed in it). About
``2 x seconds x engines + seconds`` per directory (10 minutes for two directories at 60 s).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from hdrh.log import HistogramLogReader  # noqa: E402

from benchcast.config import settings  # noqa: E402
from benchcast.sources.run import ycsb  # noqa: E402

WINDOWS = (1, 2, 4, 8, 16)
WORKLOADS = {"read-only": "READ", "write-only": "UPDATE"}


def per_second_ycsb(log: Path) -> np.ndarray:
    """Each full second's mean latency (us) of a YCSB histogram log: the first interval (the run's
    start, up to the status thread's first tick) and intervals of few operations left out."""
    reader, means = HistogramLogReader(str(log), None), []
    while (h := reader.get_next_interval_histogram()) is not None:
        means.append((h.get_mean_value(), h.get_total_count()))
    return np.array([m for m, n in means[1:] if n >= 50])


def per_second_fio(text: str) -> np.ndarray:
    """Each second's mean completion latency (us) from fio's JSON status reports (cumulative: the
    difference of two reports' totals is that second's)."""
    dec, pos, totals = json.JSONDecoder(), 0, []
    while (start := text.find("{", pos)) >= 0:
        obj, pos = dec.raw_decode(text, start)
        job = obj["jobs"][0]["read"]
        totals.append((job["clat_ns"]["mean"] * job["total_ios"], job["total_ios"]))
    out = []
    for (s0, n0), (s1, n1) in zip(totals, totals[1:]):
        if n1 - n0 >= 50:
            out.append((s1 - s0) / (n1 - n0) / 1000)
    return np.array(out)


def window_cv(seconds: np.ndarray) -> dict[int, float]:
    """CV (%) of the means of consecutive k-second windows, for each k with at least 3 windows."""
    out = {}
    for k in WINDOWS:
        n = len(seconds) // k
        if n >= 3:
            w = seconds[: n * k].reshape(n, k).mean(axis=1)
            out[k] = 100 * w.std(ddof=1) / w.mean()
    return out


def run_ycsb(name: str, path: Path, engine: str, secs: int, work: Path) -> dict[str, np.ndarray]:
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    source = dict(cfg["studies"]["local"]["sources"]["ycsb"], workloads=list(WORKLOADS), maxexecutiontime=secs,
                  properties={**cfg["studies"]["local"]["sources"]["ycsb"].get("properties", {}),
                              "status.interval": 1})
    if name == "dram" or path.is_relative_to("/dev/shm"):  # a tmpfs: no O_DIRECT
        source["properties"]["rocksdb.directio"] = False
    s = settings.ycsb(source, "ycsb")
    out = work / name / engine
    at = ycsb.Place(device_dir=path, jar=ycsb.build_jar(), out_dir=out, study="noise", device=name,
                    timeout=secs * 10 + 300)
    ycsb.run_ycsb(engine, 8_000_000, s, at)
    return {f"ycsb {engine} {op.lower()}": per_second_ycsb(out / "r0" / f"{i:02d}-{w}.{op}.hdr")
            for i, (w, op) in enumerate(WORKLOADS.items(), start=1)}


def run_fio(path: Path, secs: int) -> dict[str, np.ndarray]:
    target = path / "bc-noise.fio"
    cmd = ["fio", "--name=noise", f"--filename={target}", "--rw=randread", "--bs=4k", "--size=64M",
           "--ioengine=psync", "--iodepth=1", f"--direct={0 if path.is_relative_to('/dev/shm') else 1}",
           "--time_based", f"--runtime={secs}", "--output-format=json", "--status-interval=1"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=secs * 3 + 120, check=True)
    finally:
        target.unlink(missing_ok=True)
    return {"fio randread 4K": per_second_fio(res.stdout)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", action="append", required=True, metavar="NAME=PATH",
                    help="a scratch directory on the device to measure (repeatable)")
    ap.add_argument("--seconds", type=int, default=60, help="length of each run (default 60)")
    ap.add_argument("--engines", default="rocksdb,mariadb")
    ap.add_argument("--target", type=float, default=4.0, help="CV (%%) to reach (default 4)")
    ap.add_argument("--work", type=Path, default=Path("/var/tmp/bc-cell-noise"), help="raw files")
    a = ap.parse_args(argv)
    rows = []
    for item in a.dir:
        name, _, p = item.partition("=")
        path = Path(p)
        path.mkdir(parents=True, exist_ok=True)
        series = run_fio(path, a.seconds)
        for engine in a.engines.split(","):
            series |= run_ycsb(name, path, engine, a.seconds, a.work)
        for what, sec in series.items():
            for k, cv in window_cv(sec).items():
                rows.append({"device": name, "series": what, "k": k, "cv": cv, "mean_us": sec.mean()})
        shutil.rmtree(a.work / name, ignore_errors=True)
    df = pd.DataFrame(rows)
    table = df.pivot_table(index=["device", "series"], columns="k", values="cv")
    print(f"CV (%) of the means of k-second windows ({a.seconds} s runs; independent seconds: CV(k) = CV(1) / sqrt(k))")
    print(table.round(1).to_string())
    print("\nmedian over series:", table.median().round(1).to_dict())
    print("ratio CV(1) / CV(k) against sqrt(k):",
          {k: (round(float((table[1] / table[k]).median()), 2), round(k ** 0.5, 2)) for k in table.columns})
    reach = {i: next((f"{k} s" for k in table.columns if r[k] <= a.target), "none of these")
             for i, r in table.iterrows()}
    print(f"\nshortest window at or below {a.target} %:", reach)
    return 0


if __name__ == "__main__":
    sys.exit(main())
