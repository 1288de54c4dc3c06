"""Progress of a long run: one line per finished benchmark job, with the runs done out of those
planned and an estimate of the time left.

The estimate weighs every planned job by the time its configuration says it measures (fio:
``ramp_time + runtime``; YCSB: the workloads x ``maxexecutiontime``; out of core: the programs x
working sets x passes, a second each), and scales the weight left of each kind (fio, ycsb, ooc) by
the wall time that kind's finished jobs took per unit of weight (a job took the time since the job
before it finished: one benchmark at a time), or, for a kind none of whose jobs has finished, by
the whole run's: the overhead of provisioning, loading and starting programs is then counted in the
proportion this run shows. A job is done when all its outputs exist.

:func:`watch` polls in a background thread of the Snakemake process (``onstart``); it never
touches a measurement.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass
class Planned:
    """One planned benchmark job: its kind (fio, ycsb, ooc), outputs and weight in seconds."""

    kind: str
    outputs: tuple[str, ...]
    weight: float


@dataclass
class Progress:
    planned: list[Planned]
    start: float
    took: dict[int, float] = field(default_factory=dict)  # finished job -> seconds it took
    last: float | None = None

    @property
    def done(self) -> set[int]:
        return set(self.took)

    def poll(self, now: float, exists: Callable[[str], bool] = os.path.exists) -> list[str]:
        """Lines for the jobs that finished since the last poll (one per job, in plan order)."""
        lines = []
        for i, job in enumerate(self.planned):
            if i not in self.took and all(exists(p) for p in job.outputs):
                self.took[i] = now - (self.start if self.last is None else self.last)
                self.last = now
                lines.append(self.line(job, now))
        return lines

    def line(self, job: Planned, now: float) -> str:
        kinds = {}
        for i, p in enumerate(self.planned):
            d, t = kinds.get(p.kind, (0, 0))
            kinds[p.kind] = (d + (i in self.done), t + 1)
        per_kind = ", ".join(f"{k} {d}/{t}" for k, (d, t) in kinds.items())
        left = eta(self.planned, self.took, now - self.start)
        when = f"about {format_duration(left)} left" if left is not None else "time left unknown"
        return (f"benchcast: {job.kind} done: {len(self.done)}/{len(self.planned)} benchmark runs "
                f"({per_kind}), {when}")


def eta(planned: list[Planned], took: dict[int, float], elapsed: float) -> float | None:
    """Seconds left: per kind, the weight not yet done times the seconds per unit of weight its
    finished jobs took (``took``: job index -> seconds), or the whole run's (``elapsed`` over all
    weight done) for a kind with none finished; None before any weight is done."""
    w_done = sum(planned[i].weight for i in took)
    if w_done <= 0:
        return None
    overall = elapsed / w_done
    left = 0.0
    for kind in dict.fromkeys(p.kind for p in planned):
        mine = [i for i, p in enumerate(planned) if p.kind == kind]
        w_kind = sum(planned[i].weight for i in mine if i in took)
        rate = sum(took[i] for i in mine if i in took) / w_kind if w_kind > 0 else overall
        left += rate * sum(planned[i].weight for i in mine if i not in took)
    return left


def format_duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def fio_weight(source: dict) -> float:
    return float(source.get("ramp_time") or 0) + float(source.get("runtime") or 0)


def ycsb_weight(source: dict) -> float:
    return len(source.get("workloads") or []) * float(source.get("maxexecutiontime") or 1)


def ooc_weight(source: dict) -> float:
    programs = source.get("programs") or []
    return max(1, len(programs)) * len(source.get("working_sets") or []) * float(source.get("passes") or 1)


WEIGHTS = {"fio": fio_weight, "ycsb": ycsb_weight, "ooc": ooc_weight}


def watch(progress: Progress, emit: Callable[[str], None], interval: float = 2.0,
          clock: Callable[[], float] = time.monotonic) -> threading.Event:
    """Poll in a daemon thread until the returned event is set (or every job is done)."""
    stop = threading.Event()

    def loop():
        while not stop.is_set() and len(progress.took) < len(progress.planned):
            for line in progress.poll(clock()):
                emit(line)
            stop.wait(interval)

    threading.Thread(target=loop, name="benchcast-progress", daemon=True).start()
    return stop
