"""Does a measurement hold on a busy machine? Issue 37's benchmark (a script that prints).

Runs the default study twice from fresh clones of this repository (``git clone``, so each run is a
new user's first run): once on the idle machine, once beside ``busy-neighbour`` (a nice-19 spinner
all the time, and every 60 s a 15 s burst of two nice-0 spinners and a 64 MiB write/fsync/read-back
in the clone), then prints side by side:

* wall time of ``./benchcast.sh run``;
* the median |busy/idle - 1| of the fio and of the YCSB trimmed means (``aggregated.csv``, every
  cell both runs measured);
* per family (engine x read/write) the interior nested-choice MAPE and the noise floor of each run
  (``validation/verdicts.csv``), and over all YCSB series;
* the series whose verdict differs;
* the runs spoiled by interference and measured again, per kind (``tables/quality.csv``), and
  those of them other work on the measured device spoiled (``other_mbps``, ``other_iops``);
* per tier (device), the median |busy/idle - 1| of the fio and YCSB trimmed means, raw and stated at
  the reference speed (``corrected``, issue 50), and their signed medians;
* with ``--crossrun``: the cross-run table (:mod:`benchcast.prediction.crossrun`): a model fitted in the first
  tree predicts each device of the second from that tree's figures, raw and corrected, beside the
  same procedure within the first tree (interior MAPE per family).

    sudo .venv/bin/python benchmarks/busy_machine.py [--work /var/tmp/busy] [--neighbour PATH]
    .venv/bin/python benchmarks/busy_machine.py --compare IDLE_TREE BUSY_TREE   # two finished trees
    .venv/bin/python benchmarks/busy_machine.py --compare A B --crossrun        # and the cross-run table

A default run takes about 22 minutes idle: the whole comparison about 55 minutes. Needs root, like the
default study; run it on an otherwise idle machine (``benchcast.sources.run.quality.machine_now`` is printed
first). ``--compare`` takes two results/<study> folders (or clones) and prints the same tables.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchcast import config, records
from benchcast.config import configfiles
from benchcast.prediction import crossrun
from benchcast.sources.run import quality  # noqa: E402

STUDY = "local"
NEIGHBOUR = ROOT.parent / "shared" / "tools" / "busy-neighbour"
READ_OPS = ("read", "scan")
#: busy-neighbour runs this much longer than the idle run took, so it covers the busy run
NEIGHBOUR_MARGIN = 2.0
#: busy-neighbour's time limit when the busy half runs alone (--one busy): longer than any run
BUSY_SECONDS = 2 * 3600


def tree_of(path: Path) -> Path:
    """A results/<study> folder, from itself or from a clone."""
    path = Path(path)
    return path if (path / "aggregated.csv").exists() else path / "results" / STUDY


def read_csv(tree: Path, name: str) -> pd.DataFrame:
    p = tree / name
    return pd.read_csv(p, keep_default_na=False, na_values=[""]) if p.exists() else pd.DataFrame()


def ratios(idle: pd.DataFrame, busy: pd.DataFrame, benchmark: str, column: str = "value") -> pd.Series:
    """busy / idle of the trimmed means (``column``: ``value`` raw, ``corrected`` at the reference
    speed) of ``benchmark``, per cell both trees have (index: the record keys less study and source)."""
    keys = records.KEY_COLUMNS[2:]  # not study, source (the same in both trees)
    a, b = (pd.to_numeric(t[t["benchmark"] == benchmark].set_index(keys)[column], errors="coerce")
            if column in t else pd.Series(dtype=float) for t in (idle, busy))
    both = pd.concat([a.rename("idle"), b.rename("busy")], axis=1, join="inner").dropna()
    both = both[both["idle"] > 0]
    return (both["busy"] / both["idle"]).rename("ratio")


def mean_shift(idle: pd.DataFrame, busy: pd.DataFrame, benchmark: str, column: str = "value") -> tuple[float, int]:
    """Median |busy/idle - 1| (percent) of the trimmed means of ``benchmark`` over the cells both
    trees have, and how many cells."""
    r = ratios(idle, busy, benchmark, column)
    if r.empty:
        return float("nan"), 0
    return float(np.median(np.abs(r - 1)) * 100), len(r)


def tier_shifts(idle: pd.DataFrame, busy: pd.DataFrame) -> pd.DataFrame:
    """Per tier (device) and over all (``all``): for fio and YCSB, raw and corrected, the median
    |busy/idle - 1| and the signed median of busy/idle - 1 (percent) of the cells both trees have."""
    cols = {}
    for bench in ("fio", "ycsb"):
        for column, label in (("value", "raw"), ("corrected", "corrected")):
            r = ratios(idle, busy, bench, column) - 1
            per = pd.DataFrame({"device": r.index.get_level_values("device") if len(r) else [], "r": r.to_numpy()})
            per = pd.concat([per, per.assign(device="all")], ignore_index=True)
            g = per.groupby("device")["r"]
            cols[(bench, label, "median |b/a-1| %")] = g.apply(lambda x: float(np.median(np.abs(x))) * 100)
            cols[(bench, label, "signed median %")] = g.median() * 100
    return pd.DataFrame(cols)


def family(verdicts: pd.DataFrame) -> pd.Series:
    """engine x read/write of each series."""
    rw = np.where(verdicts["op"].isin(READ_OPS), "read", "write")
    return verdicts["engine"].astype(str) + " " + rw


def families(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per family: mean interior nested-choice MAPE and noise floor over its series; a row ``all
    YCSB`` over every YCSB series."""
    cols = {"interior_mape": "mape", "interior_floor_mape": "floor"}
    if verdicts.empty:  # a study of device figures alone
        return pd.DataFrame(columns=list(cols.values()))
    v = verdicts[verdicts["benchmark"] == "ycsb"].assign(family=lambda d: family(d))
    per = v.groupby("family")[list(cols)].mean().rename(columns=cols)
    per.loc["all YCSB"] = v[list(cols)].mean().rename(cols)
    return per


def verdict_changes(idle: pd.DataFrame, busy: pd.DataFrame) -> pd.DataFrame:
    if idle.empty or busy.empty:
        return pd.DataFrame(columns=["verdict_idle", "verdict_busy"])
    both = idle[["series", "verdict"]].merge(busy[["series", "verdict"]], on="series", suffixes=("_idle", "_busy"))
    return both[both["verdict_idle"] != both["verdict_busy"]].set_index("series")


#: The interference figures of other work on the measured device (benchcast.sources.run.otherio).
OTHER_IO = ("other_mbps", "other_iops")
REMEASURED = ["runs", "spoiled", "other_io", "measured_again", "flagged_cells"]


def other_io_spoiled(why) -> int:
    """Runs a quality summary's ``why`` (``other_cpu x3, other_mbps x2``) says other I/O spoiled."""
    counts = [part.strip().rsplit(" x", 1) for part in str(why or "").split(",") if " x" in part]
    return sum(int(n) for fig, n in counts if fig.strip() in OTHER_IO)


def remeasured(summary: pd.DataFrame) -> pd.DataFrame:
    """Runs spoiled, those spoiled by other I/O on the measured device (a run over two thresholds
    counts once in ``spoiled``, in each figure's count of ``why``), and those measured again, per
    kind (fio, ycsb, ooc), from tables/quality.csv."""
    if summary.empty:
        return pd.DataFrame(columns=REMEASURED)
    summary = summary.assign(other_io=[other_io_spoiled(w) for w in summary.get("why", [""] * len(summary))])
    return summary.groupby("benchmark")[REMEASURED].sum()


def probe_cost(tree: Path) -> dict:
    """The speed probe's cost in a finished tree: runs with a probe, the seconds the probes took
    (before and after each run), and the span from the first run's start to the last's (s)."""
    import json

    recs = [json.loads(p.read_text()) for p in Path(tree).glob("*/*/*/**/quality-run*.json")]
    recs = [r for r in recs if "cpu_ms_before" in r]
    secs = sum(sum(float(r.get(k) or 0) for k in ("cpu_ms_before", "mem_ms_before", "cpu_ms_after",
                                                     "mem_ms_after")) for r in recs) / 1e3
    started = [float(r["started"]) for r in recs if r.get("started")]
    return {"runs": len(recs), "probe_s": secs, "span_s": max(started) - min(started) if started else float("nan")}


def study_of(config_path: Path, study: str = STUDY) -> dict:
    """The study's settings (features, series, validate) from a config file, the schema's defaults in."""
    return config.validate(configfiles.read_file(config_path))["studies"][study]


def cross_run(a_tree: Path, b_tree: Path, study: dict) -> pd.DataFrame:
    """The cross-run table (:func:`benchcast.prediction.crossrun.table`): a model fitted in tree A predicts the
    devices of tree B from B's figures, beside the same procedure within A; raw and corrected."""
    a, b = (crossrun.Tree(records.fill_settings(read_csv(t, "aggregated.csv")),
                          read_csv(t, "validation/nested_selection.csv"), read_csv(t, "validation/tiers.csv"))
            for t in (tree_of(a_tree), tree_of(b_tree)))
    errs = pd.concat([crossrun.errors(a, b, study, value) for value in ("raw", "corrected")], ignore_index=True)
    return crossrun.table(errs)


def compare(idle_tree: Path, busy_tree: Path, walls: dict | None = None) -> dict:
    """Everything the benchmark prints, as tables and numbers (``walls``: seconds per side)."""
    idle_tree, busy_tree = tree_of(idle_tree), tree_of(busy_tree)
    agg = {k: records.fill_settings(read_csv(t, "aggregated.csv")) for k, t in (("idle", idle_tree), ("busy", busy_tree))}
    ver = {k: read_csv(t, "validation/verdicts.csv") for k, t in (("idle", idle_tree), ("busy", busy_tree))}
    fam = pd.concat({k: families(v) for k, v in ver.items()}, axis=1)
    changed = verdict_changes(ver["idle"], ver["busy"])
    n_series = len(set(ver["idle"].get("series", [])) & set(ver["busy"].get("series", [])))
    return {
        "walls": walls or {},
        "fio": mean_shift(agg["idle"], agg["busy"], "fio"),
        "ycsb": mean_shift(agg["idle"], agg["busy"], "ycsb"),
        "families": fam,
        "changed": changed,
        "same_verdict": 1 - len(changed) / n_series if n_series else float("nan"),
        "remeasured": pd.concat({k: remeasured(read_csv(t, "tables/quality.csv"))
                                 for k, t in (("idle", idle_tree), ("busy", busy_tree))}, axis=1),
        "fio_corrected": mean_shift(agg["idle"], agg["busy"], "fio", "corrected"),
        "ycsb_corrected": mean_shift(agg["idle"], agg["busy"], "ycsb", "corrected"),
        "tiers": tier_shifts(agg["idle"], agg["busy"]),
        "probe": {k: probe_cost(t) for k, t in (("idle", idle_tree), ("busy", busy_tree))},
    }


def report(c: dict) -> str:
    lines = []
    if c["walls"]:
        w = c["walls"]
        lines.append(f"wall time: idle {w['idle'] / 60:.1f} min, busy {w['busy'] / 60:.1f} min "
                     f"(x{w['busy'] / w['idle']:.2f}; limit x1.8)")
    for kind, limit in (("fio", 5), ("ycsb", 10)):
        shift, n = c[kind]
        lines.append(f"{kind} trimmed means: median |busy/idle - 1| = {shift:.1f} % over {n} cells (limit {limit} %)")
        shift, n = c.get(f"{kind}_corrected", (float("nan"), 0))
        lines.append(f"{kind} at the reference speed (corrected): median |busy/idle - 1| = {shift:.1f} % over "
                     f"{n} cells (limits: two idle runs fio 3 %, YCSB 5 %; busy 5 %)")
    if "tiers" in c and not c["tiers"].empty:
        lines.append("per tier, trimmed means b/a - 1 (%), raw and corrected:")
        lines.append(c["tiers"].round(1).to_string())
    fam = c["families"]
    if "all YCSB" in fam.index:
        lines.append("interior nested-choice MAPE and noise floor (%), per family:")
        lines.append(fam.round(1).to_string())
        idle, busy = fam.loc["all YCSB", ("idle", "mape")], fam.loc["all YCSB", ("busy", "mape")]
        if idle > 0:
            lines.append(f"all YCSB series: busy/idle MAPE x{busy / idle:.2f} (limit x1.3)")
    lines.append(f"same verdict: {c['same_verdict'] * 100:.0f} % of series (limit 90 %)")
    if len(c["changed"]):
        lines.append("series whose verdict differs:")
        lines.append(c["changed"].to_string())
    lines.append("runs spoiled by interference (other_io: by other work on the measured device) and measured "
                 "again, per kind:")
    lines.append(c["remeasured"].to_string() if not c["remeasured"].empty else "  (no interference records)")
    for side, cost in c.get("probe", {}).items():
        if cost["runs"]:
            wall = (c["walls"] or {}).get(side) or cost["span_s"]
            lines.append(f"speed probe ({side}): {cost['probe_s']:.1f} s over {cost['runs']} runs, "
                         f"{cost['probe_s'] / wall * 100:.2f} % of {wall / 60:.1f} min (limit 3 %)")
    if c.get("crossrun") is not None:
        lines.append("cross-run validation (a model fitted in the first tree predicts the second's devices from "
                     "their figures), interior MAPE %, limit: corrected cross-run at most 1.2 x same-run per YCSB family:")
        lines.append(c["crossrun"].round(2).to_string(index=False) if len(c["crossrun"]) else "  (nothing to compare)")
    return "\n".join(lines)


def clone_and_run(work: Path, name: str, neighbour_seconds: float | None, neighbour: Path) -> float:
    """A fresh clone of this repository under ``work``, ``./benchcast.sh run`` in it (beside
    busy-neighbour when ``neighbour_seconds``); its wall time in seconds."""
    dest = work / name
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(dest)], check=True)
    nb = None
    if neighbour_seconds:  # a session of its own: its spinners are stopped with it (stop_neighbour)
        nb = subprocess.Popen([sys.executable, str(neighbour), "--seconds", str(int(neighbour_seconds)),
                               "--dir", str(dest), "--log", str(work / f"{name}-neighbour.log")],
                              start_new_session=True)
    t0 = time.monotonic()
    try:
        subprocess.run(["./benchcast.sh", "run"], cwd=dest, check=True)
    finally:
        if nb is not None:
            stop_neighbour(nb)
    return time.monotonic() - t0


def stop_neighbour(nb: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop busy-neighbour and every process it forked: SIGTERM to its process group, SIGKILL after
    ``grace`` seconds (its spinners inherit its SIGTERM handler and would spin on to --seconds)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(nb.pid, signal.SIGTERM)
    try:
        nb.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(nb.pid, signal.SIGKILL)
    nb.wait()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, default=Path("/var/tmp/benchcast-busy"), help="where the clones go")
    p.add_argument("--neighbour", type=Path, default=NEIGHBOUR, help="the busy-neighbour script")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("IDLE", "BUSY"), help="only compare two trees")
    p.add_argument("--one", choices=("idle", "busy"), help="run one half only (into --work/NAME)")
    p.add_argument("--name", help="the clone's folder name for --one (default: idle or busy)")
    p.add_argument("--walls", nargs=2, type=float, metavar=("IDLE_S", "BUSY_S"),
                   help="with --compare: the wall times of the two runs, printed beside the rest")
    p.add_argument("--crossrun", action="store_true",
                   help="with --compare: the cross-run table too (a model of the first tree, the second's devices)")
    p.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml",
                   help="the config whose study (--study) the cross-run table reads its settings from")
    p.add_argument("--study", default=STUDY)
    args = p.parse_args(argv)
    if args.compare:
        walls = {"idle": args.walls[0], "busy": args.walls[1]} if args.walls else None
        c = compare(*args.compare, walls)
        if args.crossrun:
            c["crossrun"] = cross_run(*args.compare, study_of(args.config, args.study))
        print(report(c))
        return 0
    print(quality.machine_line(quality.machine_now(5.0)))
    args.work.mkdir(parents=True, exist_ok=args.one is not None)
    if args.one:  # one half of a pair (e.g. a second idle run): its wall time, to compare later
        wall = clone_and_run(args.work, args.name or args.one, BUSY_SECONDS if args.one == "busy" else None,
                             args.neighbour)
        print(f"{args.name or args.one}: wall time {wall:.0f} s")
        return 0
    idle = clone_and_run(args.work, "idle", None, args.neighbour)
    busy = clone_and_run(args.work, "busy", NEIGHBOUR_MARGIN * idle, args.neighbour)
    print(report(compare(args.work / "idle", args.work / "busy", {"idle": idle, "busy": busy})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
