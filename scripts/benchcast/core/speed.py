"""The machine's speed at the time of a run: a short fixed CPU-bound and memory-bound probe.

The same machine is not equally fast from one hour to the next (a virtual machine shares its host;
two idle default runs two hours apart differed by 18 % on tmpfs), and every figure whose requests are
CPU work moves with it. Around each measured run (:mod:`benchcast.sources.run.quality`) the job times two fixed
pieces of work in its own process, in the benchmark's CPU cgroup and at its weight, so that the
probe sees what the run saw:

- ``cpu``: zlib (level 1) compresses a fixed 256 KiB text :data:`CPU_ROUNDS` times (integer,
  branchy work, as a compressed RAM device's or a file system's request path is), about 8 ms here;
- ``mem``: a 16 MiB buffer copied to another and back :data:`MEM_ROUNDS` times (memory bandwidth
  beyond the core's own caches, as large requests on a RAM-backed device move data), about 9 ms.

Each probe is a time in milliseconds. A run's own speed (:func:`speed`) is the geometric mean, over
the probes the schema names (``run.speed.probes``: both by default) taken before and
after the run, of the reference machine's time (``run.speed.reference``) over the time taken: 1.0 is
the reference machine, 0.9 a machine 10 % slower. On two probe studies an hour apart the memory
probe explained more of the change between them than the CPU probe or both; on four idle default
runs (six pairs, up to four hours apart) both together did (docs/method.md, "The machine's speed").
One probe is noisy (on a busy machine 10 % from one to the next), the
machine's speed moves over minutes: the speed a run's records are corrected with is the median of the
own speeds of the study's runs that started within ``run.speed.window`` seconds of it
(:func:`smoothed`). Beside
them the share of the probes' wall time the job's thread was on a CPU (``on_cpu_before``,
``on_cpu_after``: its CPU time over its wall time, :func:`availability`): below 1 where other work
took turns on the CPU (a neighbour at the benchmark's weight), so that a CPU time measured in the run
(fio's ``usr_cpu``, a cgroup's) can be taken back to the wall time it cost
(:mod:`benchcast.records.correction`). The buffers are made once per job (:func:`prepare`, at the job's
start, before it enters a memory cgroup, so that they are never charged to a limited one) and
reused by every probe.
"""

from __future__ import annotations

import math
import time
import zlib

#: Times zlib compresses the fixed text in one CPU probe.
CPU_ROUNDS = 8
#: Bytes of the fixed text (256 KiB: beyond the first-level caches, within the second).
CPU_BYTES = 1 << 18
#: Bytes of each of the memory probe's two buffers (16 MiB).
MEM_BYTES = 1 << 24
#: Times the memory probe copies one buffer to the other and back.
MEM_ROUNDS = 2
#: The probe figures of an interference record, in this order.
FIGURES = ["cpu_ms_before", "mem_ms_before", "on_cpu_before", "cpu_ms_after", "mem_ms_after", "on_cpu_after"]

_BUFFERS: dict = {}


def _text() -> bytes:
    """The fixed text the CPU probe compresses: numbered lines, compressible as a log is."""
    lines = b"".join(b"%08d benchcast speed probe %05d\n" % (i, i * 7919 % 10007) for i in range(CPU_BYTES // 32 + 1))
    return lines[:CPU_BYTES]


def prepare() -> None:
    """Make the probe's buffers (once per process) and touch every page of them, so that no probe
    times the kernel handing out memory."""
    if not _BUFFERS:  # bytearray(n) writes its n zero bytes: every page is the process's from here
        _BUFFERS.update(text=_text(), src=bytearray(MEM_BYTES), dst=bytearray(MEM_BYTES))


def cpu_ms() -> tuple[float, float]:
    """Milliseconds the CPU probe takes now: wall time, and this thread's CPU time in it."""
    prepare()
    text = _BUFFERS["text"]
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(CPU_ROUNDS):
        zlib.compress(text, 1)
    return (time.perf_counter() - t0) * 1e3, (time.thread_time() - c0) * 1e3


def mem_ms() -> tuple[float, float]:
    """Milliseconds the memory probe takes now: wall time, and this thread's CPU time in it."""
    prepare()
    src, dst = _BUFFERS["src"], _BUFFERS["dst"]
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(MEM_ROUNDS):
        dst[:] = src
        src[:] = dst
    return (time.perf_counter() - t0) * 1e3, (time.thread_time() - c0) * 1e3


def probe(when: str) -> dict[str, float]:
    """Both probes now, as the record's figures of ``when`` (``before`` or ``after`` the run): their
    wall times (ms) and the share of them this thread was on a CPU."""
    (cpu, cpu_on), (mem, mem_on) = cpu_ms(), mem_ms()
    return {f"cpu_ms_{when}": round(cpu, 4), f"mem_ms_{when}": round(mem, 4),
            f"on_cpu_{when}": round(min((cpu_on + mem_on) / (cpu + mem), 1.0), 4)}


def speed(rec, reference: dict, probes) -> float:
    """The own speed of the run whose interference record is ``rec`` (a dict or a table's row with
    the probe :data:`FIGURES`): the geometric mean, over the ``probes`` (``cpu``, ``mem``) taken
    before and after it, of the reference time over the time taken (``reference``: ``cpu_ms``,
    ``mem_ms`` of the reference machine); NaN where the run has no probe (measured before the
    probe existed)."""
    ratios = []
    for kind in probes:
        for when in ("before", "after"):
            ms = _number(rec, f"{kind}_ms_{when}")
            if ms > 0:
                ratios.append(math.log(float(reference[f"{kind}_ms"]) / ms))
    return math.exp(sum(ratios) / len(ratios)) if ratios else math.nan


def smoothed(started, speeds, window: float) -> list[float]:
    """For each run (its start time in ``started``, its own speed in ``speeds``), the median of the
    own speeds of the runs that started within ``window`` seconds of it; NaN where none has one (a
    run without a start time keeps its own speed)."""
    pairs = [(float(t), float(v)) for t, v in zip(started, speeds)]
    out = []
    for t, v in pairs:
        if not math.isfinite(t):
            out.append(v)
            continue
        near = sorted(s for u, s in pairs if math.isfinite(u) and abs(u - t) <= window and math.isfinite(s))
        n = len(near)
        out.append(math.nan if not n else near[n // 2] if n % 2 else (near[n // 2 - 1] + near[n // 2]) / 2)
    return out


def availability(rec) -> float:
    """The share of the probes' wall time the job's thread was on a CPU (the mean of the record's
    ``on_cpu_before`` and ``on_cpu_after``): how much of a CPU the run's processes could have at
    their weight; NaN where the record has neither."""
    on = [v for v in (_number(rec, "on_cpu_before"), _number(rec, "on_cpu_after")) if v > 0]
    return sum(on) / len(on) if on else math.nan


def _number(rec, key: str) -> float:
    try:
        v = float(rec.get(key, math.nan))
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan
