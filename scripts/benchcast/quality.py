"""What the machine did while a benchmark ran: one interference record per measured run.

Around each fio, YCSB and out-of-core run, :func:`sample` reads, at its start and its end,

- the pressure stall information (``/proc/pressure/{cpu,io,memory}``, ``some`` and ``full``
  totals): the share of the run's wall time in which some (all) non-idle tasks were stalled;
- ``/proc/stat``'s CPU line: the share of CPU time stolen by the hypervisor (``steal``), and the
  busy CPU time of the whole machine;
- the CPU time of the run's own processes, from the benchmark's CPU cgroup
  (:mod:`benchcast.devices.benchcg`): ``other_cpu`` = busy CPU of the machine minus that, in CPUs
  (1.0: one core busy all the run long with work that is not the benchmark's).

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

PRESSURE = Path("/proc/pressure")
STAT = Path("/proc/stat")
RESOURCES = ("cpu", "io", "memory")
#: The figures of one interference record, in this order.
FIGURES = [f"{r}_{k}" for r in RESOURCES for k in ("some", "full")] + ["steal", "other_cpu", "bench_cpu"]


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
    """The machine's CPU seconds so far (all CPUs): ``busy`` (user, nice, system, irq, softirq),
    ``steal`` and ``total``."""
    fields = [int(x) for x in STAT.read_text().splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return {"busy": (user + nice + system + irq + softirq) / hz, "steal": steal / hz,
            "total": (user + nice + system + idle + iowait + irq + softirq + steal) / hz}


def snapshot(cgroup=None) -> dict:
    """Everything :func:`figures` compares, now."""
    from .devices import benchcg

    usage = benchcg.usage_ns(cgroup) if cgroup else None
    return {"time": time.monotonic(), "pressure": pressure_totals(), "cpu": cpu_times(),
            "bench_ns": math.nan if usage is None else float(usage)}


def figures(start: dict, end: dict) -> dict:
    """The interference record of the interval between two snapshots (see the module's doc)."""
    wall = max(end["time"] - start["time"], 1e-9)
    out = {"wall_s": wall}
    for key, total in end["pressure"].items():
        out[key] = (total - start["pressure"][key]) / 1e6 / wall
    d = {k: end["cpu"][k] - start["cpu"][k] for k in end["cpu"]}
    out["steal"] = d["steal"] / d["total"] if d["total"] > 0 else math.nan
    bench = (end["bench_ns"] - start["bench_ns"]) / 1e9
    out["bench_cpu"] = bench / wall
    out["other_cpu"] = max(d["busy"] - bench, 0.0) / wall if not math.isnan(bench) else math.nan
    return out


def sidecar(output) -> Path:
    """The interference record of the run whose output is ``output`` (a fio JSON, a job's records
    CSV): ``run3.json`` -> ``run3.quality.json``."""
    p = Path(output)
    return p.with_name(p.name.split(".")[0] + ".quality.json")


@contextlib.contextmanager
def sample(output, cgroup=None, keys: dict | None = None):
    """Around one measured run: snapshot before, and after a run that succeeded write its record
    (:func:`figures` plus ``keys``, e.g. study, device, cell, run) to :func:`sidecar` of ``output``
    (under a temporary name, renamed when whole). A failed run writes nothing."""
    from . import protect

    path = sidecar(output)
    protect.clear_partial(path)
    start = snapshot(cgroup)
    yield path
    rec = {**(keys or {}), **figures(start, snapshot(cgroup))}
    part = protect.atomic_path(path)
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_text(json.dumps(rec, sort_keys=True) + "\n")
    os.replace(part, path)


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
