"""The share of a run's request path that is CPU work, from the run itself: what
:mod:`benchcast.records.correction` scales by the machine's speed.

- fio: its own ``usr_cpu + sys_cpu`` of the job (:mod:`benchcast.sources.parse.fiojson`, column ``cpu_share``):
  at one request in flight, the share of the job's time its thread was on a CPU. A FUSE server's
  time is not in it: its delays run by the clock, sleeping or polling, whatever the speed.
- YCSB: the benchmark's CPU cgroup (the client JVM and the engine, RocksDB in it or the MariaDB
  server) is sampled every :data:`INTERVAL` seconds while the job runs (:class:`Sampler`); each
  workload's operations ran from the start of its histogram logs for its runtime
  (:func:`ycsb_shares`), and the cgroup's CPU time in that window per client thread and second is
  the workload's share (the JVM's start and the database's opening and closing left out).
- out-of-core programs: the cgroup's CPUs over the run (the record's ``bench_cpu``,
  :func:`run_share`).

:func:`run_speeds` and :func:`run_columns` give each run's records its speed and the CPU its probe
had, from the study's interference records.

Every share is taken within [0, 1].
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import time

#: Seconds between two readings of the cgroup's CPU time.
INTERVAL = 0.02
_START = re.compile(r"#\[StartTime: ([0-9.]+)")


class Sampler:
    """Readings (wall-clock time, CPU seconds) of a cgroup's CPU time, taken by a thread of this
    process every :data:`INTERVAL` seconds between :meth:`start` and :meth:`stop`."""

    def __init__(self, cgroup=None):
        self.cgroup = cgroup
        self.times: list[float] = []
        self.cpu: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="benchcast-cpu-sampler", daemon=True)

    def _read(self) -> None:
        from ...devices import benchcg

        ns = benchcg.usage_ns(self.cgroup)
        if ns is not None:
            self.times.append(time.time())
            self.cpu.append(ns / 1e9)

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            self._read()

    def start(self) -> "Sampler":
        if self.cgroup:
            self._read()
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()
            self._read()

    def cpu_at(self, t: float) -> float:
        """The cgroup's CPU seconds at wall-clock time ``t``, interpolated between the readings;
        NaN outside them."""
        if not self.times or not self.times[0] <= t <= self.times[-1]:
            return math.nan
        i = bisect.bisect_left(self.times, t)
        if self.times[i] == t or i == 0:
            return self.cpu[i]
        t0, t1 = self.times[i - 1], self.times[i]
        return self.cpu[i - 1] + (self.cpu[i] - self.cpu[i - 1]) * (t - t0) / (t1 - t0)

    def share(self, t0: float, seconds: float, threads: int) -> float:
        """CPU time in [``t0``, ``t0 + seconds``] per thread and second, within [0, 1]."""
        if seconds <= 0 or threads <= 0:
            return math.nan
        used = self.cpu_at(t0 + seconds) - self.cpu_at(t0)
        return min(max(used / seconds / threads, 0.0), 1.0) if math.isfinite(used) else math.nan


def log_start(path) -> float:
    """The wall-clock time a YCSB histogram log started (its ``#[StartTime: ...]``), NaN without."""
    try:
        with open(path, errors="replace") as fh:
            for _ in range(5):
                m = _START.match(fh.readline())
                if m:
                    return float(m.group(1))
    except OSError:
        pass
    return math.nan


def ycsb_shares(recs: "pd.DataFrame", sampler: Sampler) -> "pd.DataFrame":
    """``recs`` of one YCSB job (a ``raw`` measurement file per workload run) with ``cpu_share``:
    per run, the cgroup's CPU per client thread over its operations, from the earliest start of
    its operations' histogram logs (not CLEANUP) for its ``runtime`` (ms); NaN where the window is
    unknown or the sampler has no readings there."""
    from ..parse.ycsbout import histogram_logs

    recs = recs.copy()
    recs["cpu_share"] = math.nan
    if "raw" not in recs:
        return recs
    runtime = recs[(recs["op"] == "overall") & (recs["metric"] == "runtime")]
    for raw, ms in zip(runtime["raw"], runtime["value"]):
        starts = [log_start(p) for p in histogram_logs(raw) if not p.name.endswith(".CLEANUP.hdr")]
        starts = [s for s in starts if math.isfinite(s)]
        if not starts:
            continue
        rows = recs["raw"] == raw
        threads = int(recs.loc[rows, "threads"].iloc[0]) or 1
        recs.loc[rows, "cpu_share"] = sampler.share(min(starts), float(ms) / 1e3, threads)
    return recs


def run_share(rec: dict | None) -> float:
    """The CPU share of a run from its interference record: the benchmark cgroup's CPUs over the
    run (``bench_cpu``), within [0, 1]; NaN without a record."""
    v = (rec or {}).get("bench_cpu")
    try:
        v = float(v)
    except (TypeError, ValueError):
        return math.nan
    return min(max(v, 0.0), 1.0) if math.isfinite(v) else math.nan


def run_speeds(outputs, settings: dict) -> "pd.DataFrame":
    """What each run's records take from the interference records of the study's runs ``outputs``
    (index: the output), under the schema's ``run.speed`` ``settings``: ``speed_run`` its own speed
    (:func:`benchcast.core.speed.speed` of its ``probes`` against its ``reference``), ``speed`` the
    speed it is corrected with (:func:`benchcast.core.speed.smoothed` over its ``window`` seconds),
    ``cpu_available`` (:func:`benchcast.core.speed.availability`) and ``bench_cpu`` (its cgroup's CPUs,
    an out-of-core run's share: :func:`run_share`); runs without a record (measured before the
    probe, skip notes) are left out."""
    import pandas as pd

    from . import quality
    from ...core import speed

    rows = []
    for out in outputs:
        rec = quality.read(out)
        if rec:
            rows.append({"output": str(out), "started": rec.get("started", math.nan),
                         "speed_run": speed.speed(rec, settings["reference"], tuple(settings["probes"])),
                         "cpu_available": speed.availability(rec), "bench_cpu": run_share(rec)})
    table = pd.DataFrame(rows, columns=["output", "started", "speed_run", "cpu_available", "bench_cpu"])
    table["speed"] = speed.smoothed(pd.to_numeric(table["started"], errors="coerce"), table["speed_run"],
                                    settings["window"])
    return table.set_index("output")


def run_columns(output, speeds: "pd.DataFrame", kind: str) -> dict:
    """The columns the records of the run whose output is ``output`` get from :func:`run_speeds`'
    table: ``speed``, ``speed_run``, ``cpu_available``, and an out-of-core run's ``cpu_share``; NaN
    for a run that has no record."""
    row = speeds.loc[str(output)] if str(output) in speeds.index else None
    out = {k: (float(row[k]) if row is not None else math.nan) for k in ("speed", "speed_run", "cpu_available")}
    if kind == "ooc":
        out["cpu_share"] = float(row["bench_cpu"]) if row is not None else math.nan
    return out


def sampled(cgroup) -> Sampler:
    """A :class:`Sampler` of ``cgroup`` (None: one that reads nothing), started."""
    return Sampler(cgroup).start()

