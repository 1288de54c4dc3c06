"""What the machine did while a benchmark ran: one interference record per measured run.

Around each fio, YCSB and out-of-core run, :func:`sample` reads, at its start and its end,

- the pressure stall information (``/proc/pressure/{cpu,io,memory}``, ``some`` and ``full``
  totals): the share of the run's wall time in which some (all) non-idle tasks were stalled;
- ``/proc/stat``'s CPU line: the share of CPU time stolen by the hypervisor (``steal``), and the
  busy CPU time of the whole machine;
- the CPU time of the run's own processes, from the benchmark's CPU cgroup
  (:mod:`benchcast.devices.benchcg`): ``other_cpu`` = busy CPU of the machine minus that, in CPUs
  (1.0: one core busy all the run long with work that is not the benchmark's).

- other work on the measured device (:mod:`benchcast.sources.run.otherio`): ``other_iops`` and ``other_mbps``,
  the requests and bytes of the device's counters the benchmark did not send, and ``io_counters``,
  which device was counted or why none was (a tmpfs, a FUSE file system);
- the machine's speed (:mod:`benchcast.core.speed`): the probe's times just before and just after the
  run, in the job's process (``cpu_ms_before`` ... ``mem_ms_after``).

The record is a small JSON file beside the run's output (:func:`sidecar`), written when the run
succeeded; it is never a measurement record, so it never enters the aggregate, features or series.
:func:`collect` reads them back into a table (one row per run) for the quality report and the
re-measure decision; runs measured before these records existed have none and count as clean.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path

from . import otherio
from ...core import speed

PRESSURE = Path("/proc/pressure")
STAT = Path("/proc/stat")
RESOURCES = ("cpu", "io", "memory")
#: The interference record of run output ``run3.json`` is ``quality-run3.json`` beside it.
PREFIX = "quality-"
#: The figures of one interference record, in this order.
FIGURES = [f"{r}_{k}" for r in RESOURCES for k in ("some", "full")] + ["steal", "other_cpu", "niced_cpu",
                                                                   "bench_cpu", "waited_s", *otherio.FIGURES]
#: What else a record holds, as the quality table's columns: the probe's times, what was counted.
RECORDED = [*speed.FIGURES, "io_counters"]


def pressure_totals() -> dict[str, float]:
    """Stall totals (microseconds) per ``{resource}_{some,full}``; NaN where the kernel has none."""
    out = {}
    for res in RESOURCES:
        try:
            lines = (PRESSURE / res).read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            kind, *fields = line.split()
            out[f"{res}_{kind}"] = float(dict(f.split("=") for f in fields)["total"])
    return {f"{r}_{k}": out.get(f"{r}_{k}", math.nan) for r in RESOURCES for k in ("some", "full")}


def cpu_times() -> dict[str, float]:
    """The machine's CPU seconds so far (all CPUs): ``busy`` (user, system, irq, softirq: work at
    nice 0 or below), ``niced`` (user time at a positive nice value: work that yields the CPU to
    the benchmark), ``steal`` and ``total``."""
    fields = [int(x) for x in STAT.read_text().splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return {"busy": (user + system + irq + softirq) / hz, "niced": nice / hz, "steal": steal / hz,
            "total": (user + nice + system + idle + iowait + irq + softirq + steal) / hz}


def snapshot(cgroup=None) -> dict:
    """Everything :func:`figures` compares, now."""
    from ...devices import benchcg

    usage = benchcg.usage_ns(cgroup) if cgroup else None
    return {"time": time.monotonic(), "pressure": pressure_totals(), "cpu": cpu_times(),
            "bench_ns": math.nan if usage is None else float(usage)}


def figures(start: dict, end: dict) -> dict:
    """The interference record of the interval between two snapshots (see the module's doc)."""
    wall = max(end["time"] - start["time"], 1e-9)
    out = {"wall_s": wall}
    for key, total in end["pressure"].items():  # the kernel's totals lag a little: at most 1
        out[key] = min((total - start["pressure"][key]) / 1e6 / wall, 1.0)
    d = {k: end["cpu"][k] - start["cpu"][k] for k in end["cpu"]}
    out["steal"] = d["steal"] / d["total"] if d["total"] > 0 else math.nan
    bench = (end["bench_ns"] - start["bench_ns"]) / 1e9
    out["bench_cpu"] = bench / wall
    out["other_cpu"], out["niced_cpu"] = others(d, bench, wall)
    return out


def others(d: dict, own: float, wall: float) -> tuple[float, float]:
    """CPUs the rest of the machine used over ``wall`` seconds, at nice 0 or below and at a positive
    nice value: ``d`` is the difference of two :func:`cpu_times`, and ``own`` the CPU seconds of
    our own work in it (NaN: unknown, which makes that bucket unknown). Our own time is taken from
    the bucket this process's nice value puts it in."""
    rest = {k: d[k] for k in ("busy", "niced")}
    bucket = "niced" if os.getpriority(os.PRIO_PROCESS, 0) > 0 else "busy"
    rest[bucket] = max(rest[bucket] - own, 0.0) if not math.isnan(own) else math.nan
    return rest["busy"] / wall, rest["niced"] / wall


def sidecar(output) -> Path:
    """The interference record of the run whose output is ``output`` (a fio JSON, a job's records
    CSV): ``run3.json`` -> ``quality-run3.json`` (a name no ``run*`` pattern of the outputs takes)."""
    p = Path(output)
    return p.with_name(PREFIX + p.name.split(".")[0] + ".json")


@contextlib.contextmanager
def sample(output, cgroup=None, keys: dict | None = None, state: dict | None = None):
    """Around one measured run: the speed probe and a snapshot before, and after a run that
    succeeded a snapshot and the probe again, then its record (:func:`figures`, other work on the
    device of ``state`` (:mod:`benchcast.sources.run.otherio`), the probe's times, plus ``keys``, e.g. study,
    device, cell, run) to :func:`sidecar` of ``output`` (under a temporary name, renamed when
    whole). A failed run writes nothing."""
    from ...core import protect

    path = sidecar(output)
    protect.clear_partial(path)
    waited = wait_before_run()
    before = speed.probe("before")
    started = time.time()  # when it ran: the runs of a tree in the order the machine saw them
    start, io_start = snapshot(cgroup), otherio.snapshot(state)
    yield path
    end, io_end = snapshot(cgroup), otherio.snapshot(state)
    after = speed.probe("after")
    shield = ",".join(f"{k}={v}" for k, v in sorted(guard()["shield"].items()))
    figs = figures(start, end)
    rec = {**(keys or {}), **figs, **otherio.figures(io_start, io_end, figs["wall_s"]), **before, **after,
           "waited_s": waited, "shield": shield, "started": round(started, 3)}
    part = protect.atomic_path(path)
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_text(json.dumps(rec, sort_keys=True) + "\n")
    os.replace(part, path)


#: The environment variable that carries :func:`guard` to the measuring jobs: how a run is protected
#: is not what it measures, so these settings are no params of the measuring rules (a change of
#: them never plans a measurement again); each interference record says what the run had.
GUARD_ENV = "BENCHCAST_GUARD"
#: How long one look at the machine before a run lasts (seconds).
LOOK_S = 0.2


def guard_settings(run_config: dict) -> dict:
    """What the measuring jobs of a run get from ``run`` of the validated config: the shield (only
    the settings that are set), the wait for a quiet machine before each run (``wait_run``
    seconds at most, quiet: other CPU below ``other_cpu``) and the benchmark processes' deadlines
    (:mod:`benchcast.sources.run.deadline`; none given: the schema's)."""
    inter = run_config.get("interference") or {}
    return {"shield": {k: v for k, v in (run_config.get("shield") or {}).items() if v is not None},
            "wait_run": inter.get("wait_run") or 0, "other_cpu": inter.get("other_cpu"),
            "deadline": run_config.get("deadline")}


def guard() -> dict:
    """:func:`guard_settings` as the workflow handed them to this job (nothing set: as before)."""
    got = os.environ.get(GUARD_ENV)
    return json.loads(got) if got else guard_settings({})


#: Where the first look of this process began (:func:`start_look`); None: no look under way.
_LOOK_START: dict | None = None


def _look_mark() -> dict:
    """The machine's CPU seconds now and this process's own (its finished children included)."""
    own = os.times()
    return {"time": time.monotonic(), "cpu": cpu_times(),
            "own": own.user + own.system + own.children_user + own.children_system}


def start_look() -> None:
    """Begin the first look at the machine now, as a measuring job starts: its own start-up (imports,
    ensuring the device) is then the look's time, rather than a pause of :data:`LOOK_S` before the
    run (about a minute over a default run's 330 measured runs)."""
    global _LOOK_START
    speed.prepare()  # the probe's buffers, before the job enters any memory cgroup
    _LOOK_START = _look_mark()


def look(start: dict | None = None) -> float:
    """CPUs other work (at nice 0 or below, not this process or its children) used over one look:
    from ``start`` (a :func:`_look_mark`) or from now, lasting at least :data:`LOOK_S`."""
    start = start or _look_mark()
    left = LOOK_S - (time.monotonic() - start["time"])
    if left > 0:
        time.sleep(left)
    end = _look_mark()
    d = {k: end["cpu"][k] - start["cpu"][k] for k in end["cpu"]}
    return others(d, end["own"] - start["own"], max(end["time"] - start["time"], 1e-9))[0]


def wait_before_run(settings: dict | None = None) -> float:
    """Before one measured run: while other work (at nice 0 or below, outside this job) uses more
    than ``other_cpu`` CPUs, wait, at most ``wait_run`` seconds in all; the seconds waited (0.0 when
    the machine was quiet at once or no wait is set). A burst of the neighbours then ends before
    the run starts instead of spoiling it. The first look spans the job's start-up where
    :func:`start_look` began one."""
    global _LOOK_START
    first, _LOOK_START = _LOOK_START, None
    g = guard() if settings is None else settings
    limit, threshold = float(g.get("wait_run") or 0), g.get("other_cpu")
    if not limit or threshold is None:
        return 0.0
    t0, waited = time.monotonic(), 0.0
    while look(first) >= threshold and (waited := time.monotonic() - t0) < limit:
        first = None
    return round(waited, 3)


def collect(outputs) -> "pd.DataFrame":
    """One row per run output in ``outputs`` that has an interference record (columns: ``output``,
    the record's keys and :data:`FIGURES`); runs without one are left out."""
    import pandas as pd

    rows = []
    for out in outputs:
        path = sidecar(out)
        if path.exists():
            rows.append({"output": str(out), **json.loads(path.read_text())})
    return pd.DataFrame(rows, columns=None if rows else ["output", "wall_s", *FIGURES])


# --------------------------------------------------------------------------- spoiled runs


def spoiled(rec: dict, thresholds: dict) -> str | None:
    """Why the run of interference record ``rec`` is spoiled (each figure over its threshold, e.g.
    ``other_cpu 0.82 > 0.5``), or None; thresholds that are None and figures that are NaN (not
    measured here) never spoil."""
    over = [f"{k} {rec[k]:.3g} > {v:g}" for k, v in thresholds.items()
            if v is not None and rec.get(k) is not None and not math.isnan(rec[k]) and rec[k] > v]
    return "; ".join(over) or None


def severity(rec: dict, thresholds: dict) -> float:
    """How far over its thresholds a run went: the largest figure / threshold (0 without record)."""
    ratios = [rec[k] / v for k, v in thresholds.items()
              if v and rec.get(k) is not None and not math.isnan(rec[k])]
    return max(ratios, default=0.0)


def read(output) -> dict | None:
    """The interference record of the run whose output is ``output``, None when it has none (a run
    measured before these records existed, or a skip note)."""
    path = sidecar(output)
    return json.loads(path.read_text()) if path.exists() else None


def extra_run_not_needed(previous, thresholds: dict, extra: int) -> str | None:
    """Measure again what interference spoiled: extra run number ``extra`` (0-based) of a cell or
    job is needed while more of the earlier runs (their outputs, ``previous``, extra runs included)
    were spoiled than ``extra``; why it is not needed, or None. Past the planned extra runs
    (``run.interference.extra_runs``) nothing more is measured (:func:`select` flags the cell)."""
    n = sum(1 for out in previous if (rec := read(out)) is not None and spoiled(rec, thresholds))
    if n > extra:
        return None
    return f"clean: {n} of {len(previous)} earlier runs spoiled by interference, {extra} measured again"


def select(runs: "pd.DataFrame", thresholds: dict, repeats: int) -> "pd.DataFrame":
    """Which runs the records keep. ``runs`` has one row per run output (``output``, ``group``: the
    cell or job, ``run``); adds ``spoiled`` (why, "" when clean), ``severity``, ``used`` and
    ``flagged``. A group uses its clean runs; when fewer than ``repeats`` of its measured runs are
    clean (the extra runs are used up), it also uses its least spoiled runs up to ``repeats`` and is
    flagged. A run without an interference record counts as clean."""
    import pandas as pd

    recs = [read(out) for out in runs["output"]]
    out = runs.copy()
    out["measured"] = [r is not None or n < repeats for r, n in zip(recs, runs["run"])]
    out["spoiled"] = [(spoiled(r, thresholds) or "") if r else "" for r in recs]
    out["severity"] = [severity(r, thresholds) if r else 0.0 for r in recs]
    out["used"] = out["spoiled"] == ""
    out["flagged"] = False
    for _, g in out.groupby("group", sort=False):
        short = repeats - int((g["used"] & g["measured"]).sum())
        bad = g[g["spoiled"] != ""].sort_values(["severity", "run"])
        if short > 0 and not bad.empty:
            out.loc[bad.index[:short], "used"] = True
            out.loc[g.index, "flagged"] = True
    return out if len(out) else pd.DataFrame(columns=[*runs.columns, "measured", "spoiled", "severity",
                                                      "used", "flagged"])


def table(outputs, thresholds: dict, repeats: int) -> "pd.DataFrame":
    """The quality table of a source's runs (one row per run output, grouped by the folder of the
    cell or job; run number from ``run<N>``): :func:`select`'s columns and the interference figures
    (NaN for runs without a record)."""
    import pandas as pd

    runs = pd.DataFrame({"output": [str(o) for o in outputs]})
    runs["group"] = [str(Path(o).parent) for o in runs["output"]]
    runs["run"] = [int(Path(o).name.split(".")[0].removeprefix("run")) for o in runs["output"]]
    sel = select(runs, thresholds, repeats)
    figs = pd.DataFrame([read(o) or {} for o in sel["output"]], index=sel.index)
    for col in ["wall_s", *FIGURES, *RECORDED]:
        sel[col] = figs[col] if col in figs else math.nan
    return sel


def used_outputs(tab: "pd.DataFrame") -> set[str]:
    return set(tab.loc[tab["used"].astype(bool), "output"])


# --------------------------------------------------------------------------- the report's section

#: A run output's path: results/<study>/<type>/<source>/<device>/...
RUN_PATH = __import__("re").compile(r"(?:^|/)(?P<type>fio|ycsb|ooc)/(?P<source>[^/]+)/(?P<device>[^/]+)/")
SUMMARY_COLUMNS = ["device", "benchmark", "runs", "recorded", "spoiled", "measured_again", "flagged_cells",
                   "why", "other_cpu_median", "other_cpu_max", "cpu_some_median", "io_some_median",
                   "memory_some_max", "steal_max", "io_counters", "other_mbps_median", "other_mbps_max",
                   "cpu_ms_median", "mem_ms_median"]


def summary(tables: "pd.DataFrame") -> "pd.DataFrame":
    """Per device and benchmark, from the sources' quality tables (:func:`table`, concatenated):
    runs, runs with an interference record, spoiled runs, those measured again (left out: enough
    clean runs replaced them), flagged cells or jobs, why (each figure over its threshold and how
    often), and the interference seen (median / largest figures over the recorded runs)."""
    import pandas as pd

    if tables.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    where = tables["output"].str.extract(RUN_PATH)
    t = tables.assign(device=where["device"], benchmark=where["type"])
    rows = []
    for (dev, bench), g in t.groupby(["device", "benchmark"], sort=True):
        spoiled = g["spoiled"].fillna("").astype(str) != ""
        used = g["used"].astype(bool)
        figs = pd.Series([r.split(" ")[0] for why in g.loc[spoiled, "spoiled"] for r in why.split("; ")])
        counts = figs.value_counts()
        rows.append({
            "device": dev, "benchmark": bench, "runs": len(g), "recorded": int(g["wall_s"].notna().sum()),
            "spoiled": int(spoiled.sum()), "measured_again": int((spoiled & ~used).sum()),
            "flagged_cells": int(g.loc[g["flagged"].astype(bool), "group"].nunique()),
            "why": ", ".join(f"{k} x{v}" for k, v in counts.sort_index().items()),
            "other_cpu_median": g["other_cpu"].median(), "other_cpu_max": g["other_cpu"].max(),
            "cpu_some_median": g["cpu_some"].median(), "io_some_median": g["io_some"].median(),
            "memory_some_max": g["memory_some"].max(), "steal_max": g["steal"].max(),
            **_io_and_speed(g),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _io_and_speed(g: "pd.DataFrame") -> dict:
    """A device's runs: what its other I/O was counted on (or why it was not: a tmpfs, FUSE), the
    other I/O seen (MB/s), and the speed probe's median times (ms, before and after each run)."""
    import pandas as pd

    col = lambda c: pd.to_numeric(g[c], errors="coerce") if c in g else pd.Series(math.nan, index=g.index)  # noqa: E731
    counted = g["io_counters"].dropna().astype(str) if "io_counters" in g else pd.Series(dtype=str)
    return {"io_counters": counted.mode().iloc[0] if len(counted) else "",
            "other_mbps_median": col("other_mbps").median(), "other_mbps_max": col("other_mbps").max(),
            "cpu_ms_median": pd.concat([col("cpu_ms_before"), col("cpu_ms_after")]).median(),
            "mem_ms_median": pd.concat([col("mem_ms_before"), col("mem_ms_after")]).median()}


def floor_line(verdicts: "pd.DataFrame", tolerance: float) -> str:
    """The study's noise floor against its validation tolerance, in one line: the median over the
    series of the interior MAPE a perfect model would have from the results' own scatter
    (``interior_floor_mape`` of the verdicts table). A plain warning when it is above the tolerance."""
    col = verdicts["interior_floor_mape"] if "interior_floor_mape" in verdicts else None
    if col is None or col.dropna().empty:
        return "noise floor: unknown (no series with repeated runs on interior tiers)"
    floor = float(col.median())
    if floor > tolerance:
        return (f"this machine was too busy for {tolerance:g} % predictions: "
                f"a perfect model would miss by {floor:.0f} % here (noise floor, median over series)")
    return f"noise floor {floor:.1f} % (median over series) is within the {tolerance:g} % tolerance"


# --------------------------------------------------------------------------- before measuring


def process_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of every process: pid -> (command name, seconds)."""
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            head, tail = (d / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue
        f = tail.split()
        out[int(d.name)] = (head.split("(", 1)[1], (int(f[11]) + int(f[12])) / hz)
    return out


def machine_now(seconds: float = 1.0, exclude=(), top: int = 3) -> dict:
    """What the machine does over ``seconds``: load average, pressure (``some`` shares of the
    interval), CPUs busy with other work than the processes ``exclude`` (``busy``), and the ``top`` consumers (name, CPUs, pid) other than the pids in ``exclude``."""
    p0, c0, s0 = pressure_totals(), cpu_times(), process_cpu()
    t0 = time.monotonic()
    time.sleep(seconds)
    p1, c1, s1 = pressure_totals(), cpu_times(), process_cpu()
    wall = time.monotonic() - t0
    procs = sorted(((s1[p][1] - s0[p][1]) / wall, s1[p][0], p) for p in s1 if p in s0 and p not in exclude)
    own = sum(s1[p][1] - s0[p][1] for p in exclude if p in s0 and p in s1)
    busy, niced = others({k: c1[k] - c0[k] for k in c1}, own, wall)
    return {"load": os.getloadavg()[0], "busy": busy, "niced": niced,
            **{k: min((p1[k] - p0[k]) / 1e6 / wall, 1.0) for k in ("cpu_some", "io_some", "memory_some")},
            "top": [(name, cpu, pid) for cpu, name, pid in reversed(procs[-top:] if top else []) if cpu >= 0.01]}


def machine_line(now: dict) -> str:
    """:func:`machine_now` in one line."""
    top = ", ".join(f"{name} {cpu:.2f}" for name, cpu, _pid in now["top"]) or "none"
    return (f"machine before measuring: load {now['load']:.2f}, other CPU {now['busy']:.2f} CPUs "
            f"(and {now['niced']:.2f} at a positive nice value), pressure "
            f"cpu {now['cpu_some']:.0%} io {now['io_some']:.0%} memory {now['memory_some']:.0%}; "
            f"top: {top} (CPUs)")


def is_quiet(now: dict, other_cpu: float | None, io_some: float | None = None) -> bool:
    """Quiet enough to start measuring: other CPU below ``other_cpu`` and io ``some`` pressure below
    ``io_some`` (None: not checked)."""
    return ((other_cpu is None or now["busy"] < other_cpu)
            and (io_some is None or not now["io_some"] >= io_some))


def wait_for_quiet(wait: float, other_cpu: float | None, say, sample: float = 5.0, exclude=(),
                   io_some: float | None = None) -> bool:
    """Print what else uses the machine (``say``, one line); with ``wait`` seconds, sample again
    until it is quiet (:func:`is_quiet`) or the time is up. True when it was quiet at the end."""
    deadline = time.monotonic() + wait
    now = machine_now(min(1.0, sample) if not wait else sample, exclude)
    say(machine_line(now))
    while wait and not is_quiet(now, other_cpu, io_some) and time.monotonic() < deadline:
        now = machine_now(min(sample, max(deadline - time.monotonic(), 0.5)), exclude)
    quiet = is_quiet(now, other_cpu, io_some)
    if wait:
        say("machine quiet: measuring" if quiet else
            f"machine still busy after {wait:g} s: measuring anyway ({machine_line(now)})")
    return quiet
