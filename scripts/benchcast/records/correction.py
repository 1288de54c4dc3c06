"""Figures and application results stated at a reference speed: the part of each measured value
that is CPU work scaled by the machine's speed at the time of its run, the rest left as measured.

A request's latency is its time on the CPU plus the time it waits (for the device, a delay, a cap).
A run records the share of its wall time its request path spent on the CPU (``cpu_share``: fio's
own ``usr_cpu + sys_cpu`` of the issuing job; for a YCSB workload the CPU time of the benchmark's
cgroup, client and engine, over the measured operations, per client thread; for an out-of-core
program its cgroup's CPUs over the run), and the machine's speed then (``speed``, from the probe
beside its interference record: :func:`benchcast.core.speed.speed`, 1.0 the reference machine). A CPU
share is CPU time over wall time; where other work took turns on the CPU, the path's CPU work cost
more wall time than that: the probe's own CPU time over its wall time (``cpu_available``,
:func:`benchcast.core.speed.availability`) takes it back, ``share = cpu_share / cpu_available`` (within
[0, 1]; ``cpu_available`` unknown: 1). At speed ``to`` the CPU part would have taken
``speed / to`` of its time, so

    latency at ``to``  = latency x (1 + share x (speed / to - 1))
    rate at ``to``     = rate / (1 + share x (speed / to - 1))

for latencies (unit us) and rates (B/s, ops/s); other records (counts, sizes, a YCSB run's fixed
runtime, a histogram) are the same at any speed. The records keep the raw ``value``; the corrected
one is the column ``corrected`` beside it, ``corrected_speed`` the speed it is stated at (NaN where
the run has no probe or no CPU share: measured before these existed, or imported).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Units of the records whose value is a time per request: scaled by the factor.
TIME_UNITS = ("us",)
#: Units of the records whose value is a rate: divided by the factor.
RATE_UNITS = ("B/s", "ops/s")
#: The columns :func:`correct` adds (``cpu_share`` and ``speed`` the run gave, the other two made).
COLUMNS = ["cpu_share", "cpu_available", "speed", "corrected", "corrected_speed"]


def factor(cpu_share, speed, to: float, cpu_available=1.0):
    """How much longer a request of a run at ``speed`` with ``cpu_share`` (CPU time over wall time)
    would take at speed ``to`` (arrays or numbers): 1 + share x (speed / to - 1), share =
    ``cpu_share / cpu_available`` within [0, 1] (``cpu_available`` NaN: 1)."""
    avail = np.asarray(cpu_available, dtype=float)
    avail = np.where(np.isfinite(avail) & (avail > 0), avail, 1.0)
    share = np.clip(np.asarray(cpu_share, dtype=float) / avail, 0.0, 1.0)
    return 1.0 + share * (np.asarray(speed, dtype=float) / float(to) - 1.0)


def correct(recs: pd.DataFrame, to: float = 1.0) -> pd.DataFrame:
    """``recs`` (with ``cpu_share``, ``speed`` and ``cpu_available`` per row, NaN where unknown) with ``corrected`` and
    ``corrected_speed``: latencies scaled and rates divided by :func:`factor`, other rows as they
    are; NaN where the share or the speed is unknown."""
    out = recs.copy()
    for col in ("cpu_share", "cpu_available", "speed"):
        out[col] = pd.to_numeric(out[col], errors="coerce") if col in out else np.nan
    f = factor(out["cpu_share"], out["speed"], to, out["cpu_available"])
    value = out["value"].to_numpy(dtype=float)
    unit = out["unit"].astype(str)
    corrected = np.where(unit.isin(TIME_UNITS), value * f, np.where(unit.isin(RATE_UNITS), value / f, value))
    known = np.isfinite(f) & (f > 0)
    out["corrected"] = np.where(known, corrected, np.nan)
    out["corrected_speed"] = np.where(known, float(to), np.nan)
    return out


def stated(recs: pd.DataFrame, value: str | None = None) -> pd.DataFrame:
    """The records the analysis takes: as measured (``value`` ``raw`` or None), or ``corrected``: each
    value replaced by its corrected one where the records have it (a record without, measured
    before the probe or imported, stays as measured)."""
    if value != "corrected" or "corrected" not in recs:
        return recs
    corrected = pd.to_numeric(recs["corrected"], errors="coerce")
    return recs.assign(value=corrected.where(corrected.notna(), recs["value"]))
