"""What an application run did to the device: I/O per operation from the device's counters read
before and after the run, and the workload's class as seed 001 (Yamada et al.) defines it.

Records (op ``device``, benchmark and workload of the run they describe):

==================== ===== ==================================================================
reads_per_op          1/op  device read requests per application operation
writes_per_op         1/op  device write requests per application operation
syncs_per_op          1/op  flushes (block devices) or fsync/fdatasync calls (delayed devices)
read_request_size     B     bytes per device read request (0 when nothing was read)
write_request_size    B     bytes per device write request (0 when nothing was written)
charged_reads_per_op  1/op  read requests a throttled tier's cap charged (its cgroup's own bios)
charged_writes_per_op 1/op  write requests the cap charged (not the journal's or writeback's)
==================== ===== ==================================================================

Classes (:func:`classes`, from aggregated records): **read-** or **write-dominant** by which
request count is larger; **random** or **sequential** by the dominant direction's mean request size
against an 8 KB boundary (seed 001's boundary, there the NAND page); **hot** when fewer than half of
the operations reach the device at all (their data is served from memory), **cold** otherwise - a
proxy, since counters cannot see which blocks are re-used.
"""

from __future__ import annotations

import pandas as pd

from ..core.vocabulary import DEVICE_OP

OP = DEVICE_OP
UNITS = {"reads_per_op": "1/op", "writes_per_op": "1/op", "syncs_per_op": "1/op",
         "read_request_size": "B", "write_request_size": "B", "charged_reads_per_op": "1/op",
         "charged_writes_per_op": "1/op"}
#: seed 001: requests smaller than this are random, larger ones sequential
RANDOM_BOUNDARY = 8192
HOT_BELOW = 0.5
#: device requests (reads + writes + syncs) per operation below which a workload's operations do
#: not reach the device: the data is served from memory
OFF_PATH_BELOW = 0.01
CLASS_COLUMNS = ["direction", "pattern", "temperature", "class"]


def per_op(before: dict | None, after: dict | None, operations: float) -> list[dict]:
    """Record rows (op, metric, unit, value) for the I/O between two counter readings spread over
    ``operations`` application operations; [] when either reading is missing or nothing ran."""
    if not before or not after or operations <= 0:
        return []
    charged = ("charged_reads", "charged_writes") if "charged_reads" in before and "charged_reads" in after else ()
    d = {k: max(0, after[k] - before[k]) for k in ("reads", "read_bytes", "writes", "write_bytes", "syncs", *charged)}
    # the same five rows from every run, so that repeats and machines give tables of one shape
    rows = [
        {"metric": "reads_per_op", "value": d["reads"] / operations},
        {"metric": "writes_per_op", "value": d["writes"] / operations},
        {"metric": "syncs_per_op", "value": d["syncs"] / operations},
        {"metric": "read_request_size", "value": d["read_bytes"] / d["reads"] if d["reads"] else 0.0},
        {"metric": "write_request_size", "value": d["write_bytes"] / d["writes"] if d["writes"] else 0.0},
    ]
    # a throttled tier: what its cap saw
    rows += [{"metric": f"{k}_per_op", "value": d[k] / operations} for k in charged]
    return [{"op": OP, "unit": UNITS[r["metric"]], **r} for r in rows]


def classify(reads_per_op: float, writes_per_op: float, read_size: float | None,
             write_size: float | None) -> dict:
    """Seed 001's three labels (and their join) for one run's per-operation I/O."""
    writes = writes_per_op > reads_per_op
    size = write_size if writes else read_size
    direction = "write-dominant" if writes else "read-dominant"
    if size is None or pd.isna(size) or size <= 0:  # no request of that direction
        pattern = "-"
    else:
        pattern = "random" if size < RANDOM_BOUNDARY else "sequential"
    temperature = "hot" if reads_per_op + writes_per_op < HOT_BELOW else "cold"
    return {"direction": direction, "pattern": pattern, "temperature": temperature,
            "class": f"{direction}, {temperature}, {pattern}"}


def classes(aggregated: pd.DataFrame) -> pd.DataFrame:
    """One row per (device, engine, workload, data size) with its I/O per operation and class, from
    aggregated records (``value`` = the trimmed mean of the repeats). Empty when no run recorded
    device I/O (imported results, tmpfs)."""
    keys = ["device", "engine", "workload", "data_size"]
    io = aggregated[aggregated["op"] == OP]
    if io.empty:
        return pd.DataFrame(columns=keys + list(UNITS) + CLASS_COLUMNS)
    wide = io.pivot_table(index=keys, columns="metric", values="value", aggfunc="first").reset_index()
    for m in UNITS:
        if m not in wide:
            wide[m] = float("nan")
    labels = [classify(r.reads_per_op, r.writes_per_op, r.read_request_size, r.write_request_size)
              for r in wide.itertuples()]
    out = pd.concat([wide[keys + list(UNITS)], pd.DataFrame(labels, index=wide.index)], axis=1)
    return out.sort_values(keys).reset_index(drop=True)


def memory_of(memory: dict, source: str, engine: str) -> float:
    """The memory a run's data could be cached in, from ``memory`` (record source label -> bytes, or
    ``label/engine`` -> bytes for one engine of the source, e.g. MariaDB's buffer pool, which its
    O_DIRECT reads make its only cache); NaN where the source names none."""
    return float(memory.get(f"{source}/{engine}", memory.get(source, float("nan"))))


def across_memory(classes_table: pd.DataFrame, aggregated: pd.DataFrame, memory: dict) -> pd.DataFrame:
    """:func:`classes` with the memory its runs could use: ``memory_limit`` (bytes, NaN where the
    run's source set none) and ``size_over_memory`` (data size / limit), from ``memory``
    (:func:`memory_of`) and each run's source in ``aggregated``: where a data set outgrows the
    limit, its runs turn from hot to cold."""
    keys = ["device", "engine", "workload", "data_size"]
    runs = aggregated[aggregated["op"] == OP].drop_duplicates(keys).set_index(keys)
    limit = pd.Series([memory_of(memory, s, e) for s, e in zip(runs["source"], runs.index.get_level_values("engine"))],
                      index=runs.index, dtype=float)
    out = classes_table.copy()
    out["memory_limit"] = limit.reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
    out["size_over_memory"] = out["data_size"] / out["memory_limit"]
    return out


def requests_per_op(agg: pd.DataFrame,
                    keys=("benchmark", "engine", "workload", "threads", "data_size")) -> pd.DataFrame:
    """Per workload and data size (``keys``), the most device requests (reads + writes + syncs) per
    operation that any of its runs' aggregated ``device`` records shows, over devices, and the
    devices with counters: columns ``keys``, requests_per_op, devices (a sorted tuple). A working
    set inside memory may not reach the device at one size and reach it at the next."""
    keys = list(keys)
    io = agg[(agg["op"] == OP) & agg["metric"].isin(["reads_per_op", "writes_per_op", "syncs_per_op"])]
    if io.empty:
        return pd.DataFrame(columns=[*keys, "requests_per_op", "devices"])
    per_run = io.groupby(list(dict.fromkeys([*keys, "device", "data_size"])))["value"].sum().reset_index()
    return per_run.groupby(keys).agg(requests_per_op=("value", "max"),
                                     devices=("device", lambda d: tuple(sorted(set(d))))).reset_index()
