"""The fault harness's invariants (benchmarks/faults.py), checked from the files alone: no raw
output complete before a run changed by it, no record from a partial output or counted twice, the
clean run's cells and run counts, nothing left on the machine, every fault's one line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import pandas as pd

from .fault_kinds import FILL
from .fault_tree import STUDY, Job, Tree, _read, _sh, mounts_under, tree_processes  # puts benchcast on the path

from benchcast.sources import plan as bc_plan  # noqa: E402



def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def raw_outputs(tree: Tree) -> dict[str, str]:
    """Every complete raw output of the study (fio JSON and job files, YCSB and out-of-core records
    and raw folders, quality sidecars): files under their final names. Path -> sha256."""
    out = {}
    for kind in bc_plan.MEASURED:
        base = tree.results / STUDY / kind
        for p in sorted(base.rglob("*")) if base.is_dir() else []:
            rel = p.relative_to(tree.path)
            if p.is_file() and not any(".partial" in part for part in rel.parts) \
                    and p.name != ".snakemake_timestamp":
                out[str(rel)] = sha256(p)
    return out


def lost(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"lost measurement: {p} {'removed' if p not in after else 'changed'}"
            for p, h in before.items() if after.get(p) != h]


def _complete(tree: Tree, run: bc_plan.Run) -> bool:
    """A run's raw output is whole. fio: its JSON (from the first line that opens an object to the
    last that closes one) parses, with jobs, each of which ran its whole runtime (fio reports a job
    whose process was killed with the time it had run), and fio said no job got a signal; YCSB and
    out-of-core: the records and the raw folder are both there."""
    main = tree.path / run.path()
    if not main.is_file():
        return False
    if run.type != "fio":
        return (tree.path / run.path("")).is_dir()
    text = main.read_text(errors="replace")
    if "got signal" in text:
        return False
    try:
        data = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError:
        return False
    if "benchcast_skipped" in data:
        return True
    jobs = data.get("jobs") or []
    return bool(jobs) and all(
        float(j.get("job_runtime", 0)) >= 900 * float(str(j["job options"].get("runtime", "0")).rstrip("s") or 0)
        for j in jobs)


def _tables(folder: Path) -> list[Path]:
    """The record tables of a study (not what a killed job left aside: .partial.*)."""
    return sorted(p for p in folder.glob("*/*.csv") if p.is_file() and not p.name.startswith(".partial"))


def check_records(tree: Tree) -> list[str]:
    """Every record from a complete raw output under its final name; no run counted twice."""
    bad = []
    for path in _tables(tree.results / STUDY / "records"):
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
        kind = path.parent.name
        keys = [c for c in ("study", "source", "device", "benchmark", "engine", "workload", "block_size",
                            "threads", "iodepth", "numjobs", "data_size", "op", "metric", "unit", "cell", "run")
                if c in df.columns]
        dup = df[df.duplicated(keys, keep=False)]
        if len(dup):
            bad.append(f"{path.relative_to(tree.path)}: {len(dup)} record(s) counted twice")
        for row in df.drop_duplicates(["source", "device", "engine", "cell", "data_size", "run"]).itertuples():
            source = str(row.source).split(":", 1)[-1]
            if kind == "fio":
                run = bc_plan.Run(STUDY, "fio", source, row.device, int(row.run), cell=row.cell)
            elif kind == "ycsb":
                run = bc_plan.Run(STUDY, "ycsb", source, row.device, int(row.run), engine=row.engine,
                                  size=int(row.data_size))
            else:
                run = bc_plan.Run(STUDY, "ooc", source, row.device, int(row.run), mode=row.engine)
            if not _complete(tree, run):
                bad.append(f"{path.relative_to(tree.path)}: records of {run.path()}, which is not a complete output")
            raw = getattr(row, "raw", None)
            if isinstance(raw, str) and (".partial" in raw or not (tree.path / raw).is_file()):
                bad.append(f"{path.relative_to(tree.path)}: a record names {raw}, not a complete raw file")
    return bad


def layout(tree: Path) -> dict:
    """What a clean run and a faulted one must share: per record table its key rows and runs, and
    the aggregate's cells with their run counts (n); measured values differ, these may not (the
    tree's own path, in provenance, is written TREE)."""
    out = {}
    for path in _tables(tree / "results" / STUDY / "records"):
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
        df = df.map(lambda v: v.replace(str(tree), "TREE") if isinstance(v, str) else v)
        out[str(path.relative_to(tree))] = (tuple(df.columns), df, _keys(df, ("value",)))
    agg = tree / "results" / STUDY / "aggregated.csv"
    if agg.exists():
        df = pd.read_csv(agg, keep_default_na=False, na_values=[""])
        out["aggregated.csv"] = (tuple(df.columns), df, _keys(df, ("value", "mean", "std", "cv", "min", "max")))
    return out


#: Record columns that a run measures or that say when (they differ between two clean runs): the
#: machine's speed with each run and the values corrected to the reference speed among them.
VOLATILE = {"ooc_bytes", "ooc_reps", "sync_s", "init_s", "wall_s", "hdr", "swap_size", "recordcount",
            "operationcount", "corrected", "cpu_share", "cpu_available", "speed", "speed_run"}


def _keys(df: pd.DataFrame, measured=()) -> list[str]:
    """The columns that place a row (its cell, device, run, provenance): not the measured ones, not
    :data:`VOLATILE` and no column of fractional numbers (a figure of the run)."""
    return [c for c in df.columns if c not in measured and c not in VOLATILE and not c.endswith("_s")
            and df[c].dtype.kind != "f"]


def compare_layout(ref: dict, got: dict) -> list[str]:
    bad = []
    for name in sorted(set(ref) | set(got)):
        if name not in got:
            bad.append(f"{name}: missing (the clean run has it)")
        elif name not in ref:
            bad.append(f"{name}: the clean run has none")
        elif ref[name][0] != got[name][0]:
            bad.append(f"{name}: columns differ from the clean run's")
        else:  # the columns that place a row in the clean run: provenance lost after a fault shows
            keys = ref[name][2]
            a, b = (frozenset(map(tuple, side[name][1][keys].astype(str).values)) for side in (ref, got))
            if a != b:
                extra, missing = b - a, a - b
                bad.append(f"{name}: {len(missing)} row(s) of the clean run missing, {len(extra)} not in it"
                           f" (e.g. {_nearest(sorted(missing or extra)[0], extra if missing else missing, keys)})")
    return bad


def _nearest(row: tuple, others: set, keys: list) -> str:
    """A row, and where the nearest row on the other side differs from it (key: this side / other)."""
    if not others:
        return str(row[:8])
    near = min(others, key=lambda o: sum(a != b for a, b in zip(row, o)))
    return f"{row[:8]}; nearest differs in " + ", ".join(
        f"{k}: {a!r} / {b!r}" for k, a, b in zip(keys, row, near) if a != b)[:300]


def leftovers(tree: Tree, scratch: bool) -> list[str]:
    """What the tree has left on the machine: processes, mounts, loop and zram devices, swap, cgroups,
    live state records; with ``scratch`` also temporary and partial files."""
    deadline = time.monotonic() + 10
    while tree_processes(tree.path) and time.monotonic() < deadline:
        time.sleep(0.2)
    tree.note_state()
    left = [f"process {pid}: {cmd[:160]}" for pid, cmd in tree_processes(tree.path).items()]
    left += [f"mount {m}" for m in mounts_under(tree.path) if m != str(tree.results)]
    loops = json.loads(_sh("losetup", "-J", "-l").stdout or '{"loopdevices": []}').get("loopdevices", [])
    left += [f"loop {lo['name']} on {lo['back-file']}" for lo in loops
             if str(lo.get("back-file") or "").startswith(str(tree.path))]
    for dev, ours in tree.zram_sizes.items():
        size = _read(f"/sys/block/{Path(dev).name}/disksize")
        if size and size.strip() == ours and ours not in ("", "0") and not _holders(dev):
            left.append(f"zram {dev} (disksize {size.strip()})")
    swaps = (_read("/proc/swaps") or "").splitlines()[1:]
    left += [f"swap {ln.split()[0]}" for ln in swaps if str(tree.path) in ln or any(
        ln.split()[0] == s for s in tree.seen.get("swapfile", ()))]
    for key in ("memcg", "cpucg", "cpucg_weight", "cgroup"):
        left += [f"cgroup {cg}" for cg in tree.seen.get(key, ()) if os.path.isdir(cg)]
    if scratch:  # a record a full file system kept from being rewritten lists what is gone until then
        left += [f"state record {name} still lists created resources" for name in tree.live_records()]
        for dirpath, dirs, files in os.walk(tree.results):  # not into a device's mount (a dead one errs)
            dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(dirpath, d))]
            for name in dirs + files:
                if ".partial" in name or name.endswith((".part", ".tmp")) or name in (FILL, "mariadbd.pid"):
                    left.append(f"scratch {Path(dirpath, name).relative_to(tree.path)}")
    return left


def _holders(dev: str) -> bool:
    """Whether ``dev`` is mounted anywhere (then not a leftover of ours: mounts are checked apart)."""
    return any(line.split(" - ")[1].split()[1] == dev for line in (_read("/proc/self/mountinfo") or "").splitlines()
               if " - " in line)


TRACEBACK = "Traceback (most recent call last)"


def job_words(job: Job) -> list[str]:
    """What a line must name to name the job: regular expressions, all of which it matches."""
    def word(w):
        return rf"(?<![\w-]){re.escape(w)}(?![\w-])"
    if job.run:
        what = {"fio": job.run.cell, "ycsb": job.run.engine, "ooc": job.run.mode}[job.run.type]
        return [word(job.run.device), word(what), rf"(repeat {job.run.repeat}\b|\brun{job.run.repeat}\b)"]
    if job.device:
        return [word(job.device)]
    return [word(job.rule) + "|" + re.escape("/".join(job.outputs[0].split("/")[-2:]))]


def reasons(output: str) -> list[str]:
    """The one-line reasons benchcast gave in ``output`` (``benchcast: ...``)."""
    return [ln for ln in output.splitlines() if re.match(r"\s*benchcast: ", ln)]


def names_job(output: str, job: Job) -> list[str]:
    """The lines of ``output`` by benchcast that name ``job``."""
    words = job_words(job)
    return [ln for ln in output.splitlines() if "benchcast" in ln and all(re.search(w, ln) for w in words)]
