"""Other work on the measured device: the device's own counters during a run, less the requests
the benchmark itself sent, are what something else did to the same device meanwhile.

Around each measured run (:mod:`benchcast.sources.run.quality`) :func:`snapshot` reads

- the block device's kernel counters (:func:`benchcast.devices.blockinfo.block_counters`: reads,
  writes and their bytes; a directory's file system's device, shared with everything else on that
  disk);
- the benchmark's own requests to it, counted by the cgroup its processes run in
  (:func:`benchcast.devices.benchcg.io_cgroup`, or a throttled tier's cgroup): fio's, the database
  server's and the YCSB client's alike, file layout and fsync's data writes included;
- the file system's journal commits (:func:`benchcast.devices.blockinfo.journal`): the journal thread
  writes them for the benchmark's own syncs, outside its cgroup, so each commit is taken as the
  benchmark's (two requests, the blocks it logged and its commit block).
- the machine's swap-outs (``/proc/vmstat`` ``pswpout``, :mod:`benchcast.sources.run.paging`) when a swap
  area is on the device: under cgroup v1 the kernel sends them as the root cgroup's, not the
  benchmark's, while its swap-ins are counted as its own (measured: on zram, 302 MB read, all the
  cgroup's; 370 MB written, none of it, and exactly the 370 MB of ``pswpout``). An out-of-core
  run's own paging was counted as other work (250-290 MB/s on zram). The only swap a benchmark job
  runs beside is its own (the machine's benchmark lock; another swap area is recorded,
  ``other_swap``). Their bytes are the benchmark's; their requests cannot be told apart from
  others' (swap clusters), so ``other_iops`` keeps them.

:func:`figures` makes the record's ``other_iops`` (requests per second of other work) and
``other_mbps`` (MB per second) of the run, never below 0, and ``io_counters``: the device counted
(``vda``), or why nothing was (``none: tmpfs``, ``none: FUSE``, ``no count of the benchmark's own``).
A device without counters of its own (a tmpfs, a FUSE file system) records NaN: other work on it
cannot be seen there.
"""

from __future__ import annotations

import math
import os

#: Requests the journal thread writes per commit: the logged blocks (contiguous) and the commit block.
JOURNAL_REQUESTS = 2
#: Bytes per page of swap (``pswpout`` counts pages).
PAGE = os.sysconf("SC_PAGE_SIZE")
#: The interference figures this module adds to a record.
FIGURES = ["other_iops", "other_mbps"]


def counted(state: dict | None) -> tuple[str | None, str]:
    """The block device whose counters a run on ``state``'s device reads, and the record's
    ``io_counters`` text (the device's name, or why there is none)."""
    if not state:
        return None, "none: no device state"
    from ...devices import blockinfo

    kind = state.get("kind")
    if kind == "delayed":
        return None, "none: FUSE (no block device of its own)"
    dev = blockinfo.device_of(state)
    if not dev:
        return None, f"none: {kind if kind != 'dir' else state.get('filesystem', 'dir')} (no block device)"
    return dev, os.path.basename(os.path.realpath(dev))


def _own_io(state: dict, dev: str) -> dict | None:
    from ...devices import benchcg, blockinfo, throttled

    if state.get("kind") == "throttled":
        return throttled.own_io(state)
    cg = benchcg.io_cgroup(state)
    return blockinfo.cgroup_io(cg, blockinfo.majmin(dev)) if cg else None


def swap_outs(dev: str) -> int | None:
    """Pages swapped out on the machine so far (``pswpout``) when an active swap area lies on block
    device ``dev`` and the benchmark's own requests are counted by cgroup v1 (which leaves its
    swap-outs out of them); None otherwise."""
    from ...devices import blockinfo, swap, throttled
    from .paging import vmstat

    if throttled.cgroup_version() != 1:
        return None
    mm = blockinfo.majmin(dev)
    for area in swap.active():
        try:
            st = os.stat(area["filename"])
        except OSError:
            continue
        if blockinfo.majmin_of(st.st_rdev if area["type"] == "partition" else st.st_dev) == mm:
            return vmstat().get("pswpout", 0)
    return None


def snapshot(state: dict | None) -> dict:
    """The counters :func:`figures` compares, now: ``device``, ``own``, ``journal`` and ``swap_outs``
    (each None where there is none), the file system's block size, and the ``io_counters`` text."""
    from ...devices import blockinfo

    dev, what = counted(state)
    if dev is None:
        return {"io_counters": what, "device": None, "own": None, "journal": None, "swap_outs": None, "block": 0}
    own = _own_io(state, dev)
    try:
        block = os.statvfs(state["target"]).f_bsize if state.get("target") else 4096
    except OSError:
        block = 4096
    return {"io_counters": what if own is not None else f"{what}: no count of the benchmark's own",
            "device": blockinfo.block_counters(dev), "own": own, "journal": blockinfo.journal(dev),
            "swap_outs": swap_outs(dev), "block": block}


def figures(start: dict, end: dict, wall: float) -> dict:
    """``other_iops`` and ``other_mbps`` over ``wall`` seconds between two :func:`snapshot`; NaN
    where the device or the benchmark's own requests were not counted; ``io_counters`` as the end
    snapshot says."""
    out = {"io_counters": end["io_counters"], "other_iops": math.nan, "other_mbps": math.nan}
    if not all((start["device"], end["device"], start["own"], end["own"])) or wall <= 0:
        return out
    d = {k: end["device"][k] - start["device"][k] for k in ("reads", "writes", "read_bytes", "write_bytes")}
    own = {k: end["own"][k] - start["own"][k] for k in d}
    commits, logged = 0, 0
    if start["journal"] and end["journal"]:
        commits = max(end["journal"]["commits"] - start["journal"]["commits"], 0)
        logged = end["journal"]["logged_blocks"]
    requests = d["reads"] + d["writes"] - own["reads"] - own["writes"] - JOURNAL_REQUESTS * commits
    nbytes = (d["read_bytes"] + d["write_bytes"] - own["read_bytes"] - own["write_bytes"]
              - commits * (logged + 1) * end["block"])
    if start.get("swap_outs") is not None and end.get("swap_outs") is not None:
        nbytes -= max(end["swap_outs"] - start["swap_outs"], 0) * PAGE
    out["other_iops"] = max(requests, 0) / wall
    out["other_mbps"] = max(nbytes, 0) / wall / 1e6
    return out
