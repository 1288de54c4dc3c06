"""A datasheet's figures, and the figures they fix by stated rules. Light: no pandas.

A spec card states what a datasheet states: a latency, IOPS at a queue depth, a bandwidth at a
block size, a sequential rate. The models want fio's figures (a 16K random read's mean latency at
queue depth 1, say). Three rules turn the one into the other where the physics fixes it; each
derived figure keeps the rule and the numbers it came from (:class:`Derived`), so that an answer
says how its figure was made:

* :data:`RATE`: a job's bandwidth is its IOPS times its block size (fio reports both from the one
  count of completed I/Os): ``bw = iops x bs``, ``iops = bw / bs``.
* :data:`LITTLE`: Little's law for a closed loop of ``iodepth x numjobs`` I/Os in flight: ``lat_mean
  = iodepth x numjobs / iops``. Only for random reads and writes, whose loop does nothing else (a
  commit job's writes wait for its syncs in between).
* :data:`TRANSFER`: a random read (write) of a larger block at queue depth 1 takes the smaller
  block's mean latency plus the extra bytes at the sequential read (write) rate: ``lat(bs2) =
  lat(bs1) + (bs2 - bs1) / rate``, from the nearest smaller block size known, the rate being the
  card's sequential ``read`` (``write``) bandwidth at its largest block size. Never to a smaller
  block (what a small block costs is not the large one's time less its bytes).

What no rule fixes (a median latency, a commit's latency) stays missing. A given figure is never
replaced. Values are in the records' canonical units (:data:`benchcast.core.units.CANONICAL`: us,
B/s, ops/s).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import workloads
from .units import size_label
from .workloads import rw_op

#: Rule names, as the provenance columns carry them.
GIVEN = "given"
RATE = "rate"
LITTLE = "little"
TRANSFER = "transfer"
RULES = {
    RATE: "bandwidth = IOPS x block size",
    LITTLE: "Little's law: mean latency = I/Os in flight / IOPS",
    TRANSFER: "a larger block's latency = a smaller block's + the extra bytes at the sequential rate",
}

#: The random workloads the rules derive latencies for, and the sequential workload whose rate
#: prices their extra bytes.
RANDOM = {"randread": "read", "randwrite": "write"}
#: The metrics the rules relate.
LAT, BW, IOPS = "lat_mean", "bw", "iops"


@dataclass(frozen=True)
class Figure:
    """What a figure is: fio's rw, block size in bytes, the op it measures, its metric, queue depth,
    jobs and (for a figure named with one) its ioengine."""
    workload: str
    block_size: int
    op: str
    metric: str
    iodepth: int
    numjobs: int
    engine: str = ""

    @property
    def name(self) -> str:
        """The feature's name (:func:`benchcast.core.workloads.feature_name`)."""
        return workloads.feature_name(self.workload, self.block_size, self.op, self.metric, self.iodepth,
                                      self.engine or None, self.numjobs)  # the one place a name is made

    def text(self) -> str:
        """As fio's terms name it: 'randread 16K lat_mean', 'randread 4K iops qd32'."""
        extra = "".join(f" {k}{v}" for k, v in (("qd", self.iodepth), ("j", self.numjobs)) if v > 1)
        op = "" if rw_op(self.workload) == self.op else f" {self.op}"
        return f"{self.workload} {size_label(self.block_size)}{op} {self.metric}{extra}"

    def words(self) -> str:
        """As a datasheet names it: '16K random-read median latency', '4K commit (write + fdatasync)
        mean latency', '4K random-read IOPS at queue depth 32'; fio's terms for what it has no words for."""
        what = {("randread", "read"): "random-read", ("randwrite", "write"): "random-write",
                ("read", "read"): "sequential-read", ("write", "write"): "sequential-write",
                ("write", "sync"): "commit (write + fdatasync)"}.get((self.workload, self.op))
        metric = {"lat_mean": "mean latency", "clat_mean": "mean completion latency", "clat_p50": "median latency",
                  "bw": "bandwidth", "iops": "IOPS"}.get(self.metric)
        if what is None or metric is None or self.engine:
            return self.text()
        depth = "".join(f" at {n} {v}" for n, v in (("queue depth", self.iodepth), ("jobs", self.numjobs)) if v > 1)
        return f"{size_label(self.block_size)} {what} {metric}{depth}"

    def at(self, **changes) -> Figure:
        return replace(self, **changes)


@dataclass(frozen=True)
class Derived:
    """A figure's value (canonical unit) and how it was had: ``rule`` (:data:`GIVEN` or a key of
    :data:`RULES`), ``text`` the rule with its numbers, ``inputs`` the figures it came from."""
    value: float
    rule: str = GIVEN
    text: str = ""
    inputs: tuple[str, ...] = ()


def _num(v: float, unit: str) -> str:
    if unit == "B/s":
        return f"{v / 1e6:.4g} MB/s"
    if unit == "ops/s":
        return f"{v:.4g} IOPS"
    return f"{v:.4g} us"


_UNIT = {LAT: "us", BW: "B/s", IOPS: "ops/s"}


def _pure(f: Figure) -> bool:
    """A figure the rate and Little's-law rules hold for: a random read or write measuring its own op."""
    return f.workload in RANDOM and f.op == rw_op(f.workload) and not f.engine


def _same_point(known: dict, f: Figure) -> Derived | None:
    """``f`` (lat_mean, bw or iops of a random workload) from another metric of the same job (same
    workload, block size, queue depth, jobs): the rate rule, or Little's law."""
    inflight = f.iodepth * f.numjobs
    bs = f.block_size
    have = {m: known.get(f.at(metric=m)) for m in (LAT, BW, IOPS)}
    iops_src = None
    if have[IOPS] is not None:
        iops_src = (have[IOPS].value, f.at(metric=IOPS), None)
    elif have[BW] is not None:
        iops_src = (have[BW].value / bs, f.at(metric=BW), RATE)
    if f.metric == BW and have[IOPS] is not None:
        v = have[IOPS].value * bs
        return Derived(v, RATE, f"{f.text()} = {_num(have[IOPS].value, 'ops/s')} x {size_label(bs)} = {_num(v, 'B/s')}",
                       (f.at(metric=IOPS).name,))
    if f.metric == IOPS and have[BW] is not None:
        v = have[BW].value / bs
        return Derived(v, RATE, f"{f.text()} = {_num(have[BW].value, 'B/s')} / {size_label(bs)} = {_num(v, 'ops/s')}",
                       (f.at(metric=BW).name,))
    if f.metric == LAT and iops_src is not None:
        iops, src, _ = iops_src
        v = inflight / iops * 1e6
        return Derived(v, LITTLE, f"{f.text()} = {inflight} in flight / {_num(iops, 'ops/s')} = {_num(v, 'us')} "
                       f"(from {src.text()})", (src.name,))
    if f.metric in (BW, IOPS) and have[LAT] is not None:
        iops = inflight / (have[LAT].value / 1e6)
        v = iops * bs if f.metric == BW else iops
        return Derived(v, LITTLE, f"{f.text()} = {inflight} in flight / {_num(have[LAT].value, 'us')}"
                       f"{f' x {size_label(bs)}' if f.metric == BW else ''} = {_num(v, _UNIT[f.metric])}",
                       (f.at(metric=LAT).name,))
    return None


def _rate(known: dict, direction: str) -> tuple[float, Figure] | None:
    """The sequential ``read`` or ``write`` rate (B/s) of the card: its bandwidth (or IOPS x block
    size) at the largest block size it gives one for."""
    best = None
    for f, d in known.items():
        if f.workload != direction or f.op != direction or f.engine or f.metric not in (BW, IOPS):
            continue
        v = d.value if f.metric == BW else d.value * f.block_size
        if best is None or f.block_size > best[1].block_size:
            best = (v, f)
    return best


def _transfer(known: dict, f: Figure) -> Derived | None:
    """``f`` (a random workload's lat_mean at queue depth 1) from the nearest smaller block's known
    latency and the sequential rate of its direction (:data:`TRANSFER`)."""
    if f.metric != LAT or f.iodepth != 1 or f.numjobs != 1:
        return None
    rate = _rate(known, RANDOM[f.workload])
    smaller = [g for g in known if g.workload == f.workload and g.op == f.op and g.metric == LAT and not g.engine
               and g.iodepth == 1 and g.numjobs == 1 and g.block_size < f.block_size]
    if rate is None or not smaller:
        return None
    # from a latency the card gives or its job fixes, where there is one (its provenance is one step)
    base = max(smaller, key=lambda g: (known[g].rule != TRANSFER, g.block_size))
    extra = f.block_size - base.block_size
    v = known[base].value + extra / rate[0] * 1e6
    text = (f"{f.text()} = {base.text()} {_num(known[base].value, 'us')} + {size_label(extra)} at "
            f"{_num(rate[0], 'B/s')} ({rate[1].text()}) = {_num(v, 'us')}")
    return Derived(v, TRANSFER, text, (base.name, rate[1].name))


def derive(given: dict[Figure, float], wanted) -> dict[Figure, Derived]:
    """Every figure of ``wanted`` (:class:`Figure` s) the card ``given`` (figure -> value in the
    canonical unit) states or fixes by the rules (:data:`RULES`), with how; the given figures
    themselves (rule :data:`GIVEN`) whether wanted or not. A figure the rules cannot fix is left out."""
    known: dict[Figure, Derived] = {f: Derived(float(v)) for f, v in given.items()}
    wanted = [w for w in dict.fromkeys(wanted) if _pure(w) and w.metric in (LAT, BW, IOPS)]
    # the points the rules may pass through: the wanted ones and, for each random job the card
    # gives, its three metrics (a latency derived there prices the larger blocks)
    points = list(dict.fromkeys(
        [*wanted, *(f.at(metric=m) for f in given if _pure(f) and f.metric in (LAT, BW, IOPS) for m in (LAT, BW, IOPS))]))
    changed = True
    while changed:  # to a fixed point: each pass fills what the previous one made possible
        changed = False
        for f in sorted(points, key=lambda g: (g.block_size, g.metric != LAT)):
            if f in known:
                continue
            got = _same_point(known, f) or _transfer(known, f)
            if got is not None:
                known[f] = got
                changed = True
    keep = set(wanted) | set(given)
    return {f: d for f, d in known.items() if f in keep}


def serving(given: dict[Figure, float], grid) -> dict[Figure, set]:
    """Of a card's ``given`` figures, those a study has and those the rules fix that it has, each with
    the given figures it came from: ``grid`` holds the study's figures as (workload, block size in
    bytes, metric, or None for every metric) at queue depth 1. Empty: no figure of the card serves."""
    wanted = [Figure(w, bs, rw_op(w), m, 1, 1) for w, bs, metric in grid if rw_op(w)  # the grid at queue depth 1
              for m in ([metric] if metric else [LAT, BW, IOPS])]
    got = derive(given, wanted)
    by_name = {f.name: f for f in got}

    def sources(f: Figure, seen: frozenset = frozenset()) -> set:
        if f in given:
            return {f}
        d = got[f]
        return set().union(*(sources(by_name[n], seen | {f}) for n in d.inputs if n in by_name and by_name[n] not in seen))

    return {f: sources(f) for f in got if any((f.workload, f.block_size, m) in grid for m in (f.metric, None))}
