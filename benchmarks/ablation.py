"""Which lever makes held-out predictions trustworthy? An ablation over one measured study.

Reads the raw records of a finished study (default ``results/local``) and redoes the analysis with
one lever at a time switched off, printing the nested-choice held-out MAPE on interior tiers (the
device the model never saw, not even to choose its feature) per series family, the baseline beside
it, and the verdict counts:

* tiers: four devices (the first default: tmpfs, zram, disk, one throttled loop), every device but
  the delayed ones (rate caps alone), or all of them;
* figures: the paper's grid only (randread/randwrite, direct, QD1), with the commit-shaped
  figures (4K/16K writes in place with fdatasync: op ``sync``), and with appends too (workload
  ``append``: writes past the end of the file with fdatasync, as a write-ahead log);
* repeats: the trimmed mean of every repeat, or only the first repeat of every cell;
* candidates: the figures shaped like the application's recorded device I/O (``validate.candidates:
  profile``) or the pairing rules alone.

    .venv/bin/python benchmarks/ablation.py [results/local] [--config config/config.yaml]

Nothing is measured; the study's settings (features, series, pairing, validate) come from the config.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from benchcast import config, records, validation  # noqa: E402

FAMILIES = {
    "RocksDB write latency": lambda v: (v["engine"] == "rocksdb") & v["op"].isin(["update", "insert"]),
    "MariaDB write latency": lambda v: (v["engine"] == "mariadb") & v["op"].isin(["update", "insert"]),
    "read latency": lambda v: v["op"] == "read",
}


def analyse(recs: pd.DataFrame, study: dict, devices, workloads, candidates: str) -> pd.DataFrame:
    """The verdicts of the study's validation (:func:`benchcast.validation.run_study`: aggregate,
    screen, validate) on the records of ``devices``, with the figures of ``workloads`` and the
    candidates ``candidates``."""
    recs = recs[recs["device"].isin(devices)]
    feats = {**study["features"], "workloads": workloads}
    # appends explain what in-place writes may explain, when the lever uses them
    extra = ["append"] if "append" in workloads else []
    pairing = [{**r, "workloads": r["workloads"] + (extra if "write" in r["workloads"] else [])}
               for r in study["pairing"]]
    settings = {**study["validate"], "candidates": candidates}
    lever = {**study, "features": feats, "pairing": pairing, "validate": settings}
    return validation.run_study(validation.Study.of(lever), records=recs)["verdicts"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("tree", nargs="?", default="results/local")
    p.add_argument("--config", default="config/config.yaml")
    p.add_argument("--study", default="local")
    args = p.parse_args(argv)
    cfg = config.validate(yaml.safe_load(Path(args.config).read_text()))
    study = cfg["studies"][args.study]
    recs = records.read_many(sorted(Path(args.tree).glob("records/*/*.csv")))
    recs = recs[recs["benchmark"].isin(["fio", "ycsb"]) & (recs["workload"] != "load")]
    all_devs = [d for d in study["devices"] if d in set(recs["device"])]
    first = [d for d in ["dram", "zram", "disk", "slow"] if d in all_devs] or all_devs[:4]
    undelayed = [d for d in all_devs if study["devices"][d]["kind"] != "delayed"]
    wl = study["features"]["workloads"]
    grid = [w for w in wl if w in ("randread", "randwrite")]
    inplace = [w for w in wl if w != "append"]
    # appends are measured by a source of their own, not in the default: used wherever recorded
    appends = inplace + (["append"] if (recs["workload"] == "append").any() else [])
    n, u = len(all_devs), len(undelayed)
    levers = [
        ("4 tiers, paper grid", first, grid, False),
        ("4 tiers, + in-place commits", first, inplace, False),
    ]
    if u < n:  # the tiers that add latency per request, against rate caps alone
        levers += [
            (f"{u} tiers without delayed ones, paper grid", undelayed, grid, False),
            (f"{u} tiers without delayed ones, + in-place commits", undelayed, inplace, False),
        ]
    levers += [
        (f"{n} tiers, paper grid", all_devs, grid, False),
        (f"{n} tiers, + in-place commits", all_devs, inplace, False),
    ]
    if appends != inplace:
        levers.append((f"{n} tiers, + in-place commits and appends", all_devs, appends, False))
    levers.append((f"{n} tiers, + in-place commits, first repeat only", all_devs, inplace, True))
    chosen = study["validate"]["candidates"]
    levers = [(*lever, chosen) for lever in levers]
    other = "pairing" if chosen == "profile" else "profile"
    levers.append((f"{n} tiers, + in-place commits, candidates: {other}", all_devs, inplace, False, other))
    rows = []
    for name, devs, workloads, first_only, candidates in levers:
        r = recs[recs["run"] == recs["run"].min()] if first_only else recs
        v = analyse(r, study, devs, workloads, candidates)
        row = {"lever": name}
        for fam, sel in FAMILIES.items():
            f = v[sel(v)]
            row[f"{fam}: model"] = f["interior_mape"].mean()
            row[f"{fam}: baseline"] = f["interior_baseline_mape"].mean()
            row[f"{fam}: worst series"] = f["interior_mape"].max()
        for verdict, count in v["verdict"].value_counts().items():
            row[verdict] = count
        rows.append(row)
    out = pd.DataFrame(rows).set_index("lever").fillna(0)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    print("nested-choice held-out MAPE (%) on interior tiers, mean over the series of a family:")
    print(out.T.round(1).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
