"""What paging did: the kernel's counters of faults, swap and page I/O, read before and after each
phase of an out-of-core program (:mod:`benchcast.sources.run.ooc`), as records per operation (a pass of a
kernel, or a whole run).

Records (op ``paging``, benchmark, engine and workload of the run they describe):

====================== ======== ==============================================================
major_faults_per_op     1/op     the memory cgroup's ``pgmajfault``: faults that waited for a read
                                 (a swap-in, or a page of a mapped file)
faults_per_op           1/op     the memory cgroup's ``pgfault`` (minor and major)
refaults_anon_per_op    1/op     the memory cgroup's ``workingset_refault_anon``: evicted anonymous
                                 pages faulted back in
refaults_file_per_op    1/op     the memory cgroup's ``workingset_refault_file``
charged_pages_per_op    pages/op the memory cgroup's ``pgpgin`` (cgroup v1): pages charged to it,
                                 not pages read
uncharged_pages_per_op  pages/op the memory cgroup's ``pgpgout`` (cgroup v1): pages uncharged
swap_ins_per_op         pages/op ``/proc/vmstat`` ``pswpin``: pages read from swap
swap_outs_per_op        pages/op ``pswpout``: pages written to swap
read_bytes_per_op       B/op     ``pgpgin`` (KiB read from block devices) x 1024
written_bytes_per_op    B/op     ``pgpgout`` (KiB written to block devices) x 1024
swap_readahead_per_op   pages/op ``swap_ra``: pages swap readahead brought in
====================== ======== ==============================================================

The memory cgroup's counters are the program's own (it alone is in the cgroup). ``/proc/vmstat``
counts for the whole machine: its rows describe the program only because a benchmark job runs
alone (the machine's benchmark lock, one benchmark slot) and nothing else pages meanwhile; a
neighbour that pages adds to them. The device's own requests (reads, writes, their sizes) are
:mod:`benchcast.records.blockio`'s ``device`` records, read at the same marks.
"""

from __future__ import annotations

from pathlib import Path

from ...core.vocabulary import PAGING_OP

OP = PAGING_OP
VMSTAT = Path("/proc/vmstat")

#: metric -> (counter group, kernel counter, unit, factor): the group is ``memcg`` (the program's
#: memory cgroup, :func:`benchcast.devices.memlimit.stat`) or ``vmstat`` (:func:`vmstat`)
METRICS = {
    "major_faults_per_op": ("memcg", "pgmajfault", "1/op", 1),
    "faults_per_op": ("memcg", "pgfault", "1/op", 1),
    "refaults_anon_per_op": ("memcg", "workingset_refault_anon", "1/op", 1),
    "refaults_file_per_op": ("memcg", "workingset_refault_file", "1/op", 1),
    "charged_pages_per_op": ("memcg", "pgpgin", "pages/op", 1),
    "uncharged_pages_per_op": ("memcg", "pgpgout", "pages/op", 1),
    "swap_ins_per_op": ("vmstat", "pswpin", "pages/op", 1),
    "swap_outs_per_op": ("vmstat", "pswpout", "pages/op", 1),
    "read_bytes_per_op": ("vmstat", "pgpgin", "B/op", 1024),
    "written_bytes_per_op": ("vmstat", "pgpgout", "B/op", 1024),
    "swap_readahead_per_op": ("vmstat", "swap_ra", "pages/op", 1),
}
#: The /proc/vmstat counters read (:func:`vmstat`).
VMSTAT_COUNTERS = sorted({c for g, c, _, _ in METRICS.values() if g == "vmstat"})


def vmstat(path=VMSTAT) -> dict[str, int]:
    """The machine's paging counters (:data:`VMSTAT_COUNTERS`) from ``/proc/vmstat``; those the kernel
    does not have are left out."""
    out = {}
    for line in Path(path).read_text().splitlines():
        name, _, value = line.partition(" ")
        if name in VMSTAT_COUNTERS:
            out[name] = int(value)
    return out


def _pairwise(x: dict | None, y: dict | None, combine) -> dict | None:
    """``combine(x[k], y[k])`` for every counter both have, groups (dicts of counters) taken apart one
    level down; None when either is."""
    if x is None or y is None:
        return None
    out = {}
    for k in x.keys() & y.keys():
        a, b = x[k], y[k]
        if isinstance(a, dict) or isinstance(b, dict):
            out[k] = _pairwise(a if isinstance(a, dict) else None, b if isinstance(b, dict) else None, combine)
        elif a is not None and b is not None:
            out[k] = combine(a, b)
    return out


def delta(before: dict | None, after: dict | None) -> dict | None:
    """``after - before`` for every counter both readings have (groups of counters taken apart); a
    counter that went backwards (a device recreated) counts 0; None when either reading is missing."""
    return _pairwise(before, after, lambda b, a: max(0, a - b))


def add(total: dict | None, more: dict | None) -> dict | None:
    """Two :func:`delta` results summed, counter by counter (those both have); None if either is."""
    return _pairwise(total, more, lambda t, m: t + m)


def per_op(counts: dict | None, operations: float) -> list[dict]:
    """Record rows (op, metric, unit, value) of the paging counters' increase ``counts`` (a
    :func:`delta` of two readings: groups ``memcg`` and ``vmstat``) spread over ``operations``;
    a counter the readings lack gives no row; [] when nothing ran."""
    if not counts or operations <= 0:
        return []
    rows = []
    for metric, (group, counter, unit, factor) in METRICS.items():
        value = (counts.get(group) or {}).get(counter)
        if value is not None:
            rows.append({"op": OP, "metric": metric, "unit": unit, "value": value * factor / operations})
    return rows
