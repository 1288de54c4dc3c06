"""PerfKitBenchmarker sample files (JSON lines) into tidy records: its fio and YCSB samples."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ... import BenchcastError, records, result_text
from ...core import units
from . import importchecks as chk
from .importers import FILE_PATTERNS, input_files

# --------------------------------------------------------------------------------------------
# PerfKitBenchmarker sample files (JSON lines), fio samples
# --------------------------------------------------------------------------------------------

#: PKB's fio samples: '<job>:<mode>:<kind>[:<stat>]' -> record metric (clat: PKB reports fio's
#: completion latency, not the total latency of lat_mean).
PKB_FIO_LATENCY = {None: "clat_mean", "mean": "clat_mean", "p50": "clat_p50", "p99": "clat_p99",
                   "p99.9": "clat_p99.9"}


def _pkb_sample(line: str, path: Path, lineno: int) -> dict | None:
    import json

    line = line.strip()
    if not line:
        return None
    try:
        s = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BenchcastError(f"{path}: line {lineno}: not a PKB sample (JSON: {exc.msg})") from None
    if not isinstance(s, dict) or not {"metric", "value", "unit"} <= set(s):
        raise BenchcastError(f"{path}: line {lineno}: a PKB sample needs metric, value and unit")
    if not isinstance(s.get("metadata"), dict) and isinstance(s.get("labels"), str):
        s["metadata"] = _labels(s["labels"], f"{path}: line {lineno}")
    return s


def _labels(text: str, where: str) -> dict:
    """The metadata of a sample PKB wrote with its labels collapsed (its default JSON output:
    ``"labels": "|k1:v1|,|k2:v2|"``), decoded as PKB's publisher.LabelsToDict does."""
    if not text:
        return {}
    if not (text.startswith("|") and text.endswith("|")):
        raise BenchcastError(f"{where}: PKB labels are not |key:value|,|key:value|...: {text[:60]!r}")
    out = {}
    for entry in text[1:-1].split("|,|"):
        key, sep, value = entry.partition(":")
        if not sep:
            raise BenchcastError(f"{where}: PKB label {entry[:60]!r} is not key:value")
        out[key] = value
    return out


#: PKB's YCSB samples: '<op> <statistic>' (YCSB's summary line without its unit, or '<op> pXX
#: latency' from the histogram) -> record metric; latencies come in ms (PKB converts YCSB's us).
PKB_YCSB = {"AverageLatency": "lat_mean", "50thPercentileLatency": "lat_p50", "95thPercentileLatency": "lat_p95",
            "99thPercentileLatency": "lat_p99", "99.9PercentileLatency": "lat_p99.9", "p50 latency": "lat_p50",
            "p95 latency": "lat_p95", "p99 latency": "lat_p99", "p99.9 latency": "lat_p99.9",
            "Operations": "ops", "Throughput": "throughput", "RunTime": "runtime"}
_PKB_YCSB_UNITS = {"ops": "ops", "throughput": "ops/s", "runtime": "ms"}


#: Metadata PKB adds to a fio sample beside the job file's options: each sample's statistics
#: (fio.ParseResults: bw_* of a bandwidth sample; min ... p99.99 of a latency sample) and the
#: publisher's facts of the run (its run number, version, VMs and their disks).
_PKB_STATISTICS = re.compile(r"^(bw_(min|max|dev|agg|mean)|min|max|mean|stddev|p\d+(\.\d+)?)$")
_PKB_PREFIXES = ("fio_", "vm_", "data_disk_", "perfkitbenchmarker_", "container_cluster_", "managed_relational_db_",
                 "tpu_")
_PKB_RUN = {"run_number", "hostnames", "project", "simulate_maintenance", "set_files", "sysctl", "run_uri",
            "sample_uri", "timestamp", "owner", "official", "product_name", "test"}


def _pkb_own(key: str) -> bool:
    return bool(_PKB_STATISTICS.match(key)) or key.startswith(_PKB_PREFIXES) or key in _PKB_RUN


def _pkb_fio_row(s: dict, parts: list[str], where: str) -> dict | None:
    from . import fiojson

    kind, stat = parts[2], (parts[3] if len(parts) > 3 else None)
    if kind == "latency" and stat in PKB_FIO_LATENCY:
        metric, unit, value = PKB_FIO_LATENCY[stat], "us", float(s["value"])
    elif kind == "bandwidth" and stat is None:
        metric, unit, value = "bw", "B/s", units.convert(float(s["value"]), "KiB/s", "B/s")  # PKB: KiB/s
    elif kind == "iops" and stat is None:
        metric, unit, value = "iops", "ops/s", float(s["value"])
    else:
        return None
    md = s.get("metadata") or {}
    if "rw" not in md:
        raise BenchcastError(f"{where}: fio sample metadata lacks rw")
    # PKB copies the job file's options, spelled as in a job file, beside its own (fio_job ...,
    # the sample's statistics, the run's and its VMs' facts): those are no part of the cell
    opts = {k: v for k, v in md.items() if not _pkb_own(str(k)) and k != "blocksize"}
    opts.update({"bs": md.get("blocksize", md.get("bs", "4k")), "ioengine": md.get("ioengine", ""),
                 "size": md.get("size", md.get("filesize", "0"))})
    keys = fiojson.job_keys({"job options": opts}, None, where)
    return {**keys, "op": parts[1], "metric": metric, "unit": unit, "value": value, "jobname": parts[0]}


def _pkb_ycsb_row(s: dict, op: str, stat: str, where: str) -> dict | None:
    """A record row of one PKB YCSB sample (None for statistics benchcast does not keep); a failed
    return code stops the import."""
    from ...core import units
    from .ycsbout import OK_CODES

    if stat.startswith("Return="):
        if stat[len("Return="):] not in OK_CODES and float(s["value"]) > 0:
            raise BenchcastError(f"{where}: YCSB reported failed operations: {op} {stat} x{s['value']}")
        return None
    if stat not in PKB_YCSB:
        return None
    metric = PKB_YCSB[stat]
    unit = _PKB_YCSB_UNITS.get(metric, "us")
    raw = f"{s['value']} {s['unit']}" if s["unit"] and metric != "ops" else float(s["value"])
    value = units.figure_value(raw, "throughput" if metric == "throughput" else "lat_mean", unit, where)
    stage = (s.get("metadata") or {}).get("stage", "run")
    return {"op": op, "metric": metric, "unit": unit, "value": value, "stage": stage,
            "from_summary": not stat.startswith("p")}


def pkb(device_files: dict, study: str, source: str, ycsb: dict | None = None) -> pd.DataFrame:
    """Records from PerfKitBenchmarker sample files (JSON lines of metric, value, unit, metadata;
    or labels, PKB's default JSON output, its metadata collapsed to ``|key:value|,...``).

    fio samples: ``<job>:<mode>:bandwidth`` (fio's KiB/s, labelled KB/s), ``<job>:<mode>:latency``
    and ``...:latency:p50/p99/p99.9`` (fio's completion latency, usec: metrics clat_*), and
    ``<job>:<mode>:iops``; the cell (rw, blocksize, iodepth, numjobs, ioengine, size) from each
    sample's metadata, as PKB copies it from the fio job file. Samples of the same cell in one file
    are one run; files are repeats.

    YCSB samples: ``<op> AverageLatency``, ``<op> 95thPercentileLatency`` ... (ms), ``<op> pXX
    latency`` (from its histogram, where YCSB's own summary lacks that percentile), ``<op>
    Operations``, ``overall Throughput`` and ``RunTime``; ``Return=`` codes other than OK stop the
    import. PKB's samples do not say which database, workload or data size was measured: ``ycsb``
    ({engine, workload, data_size[, threads]}) says it; samples of PKB's load stage are workload
    ``load``. Each file is one run.

    Other samples (machine facts, other statistics) are skipped. One device per entry (device id ->
    folder, glob or file). Each sample is checked with its file and line (:func:`_pkb_samples`)."""
    frames = []
    for device, spec in device_files.items():
        seen: dict[tuple, int] = {}
        for run_file, path in enumerate(input_files(spec, FILE_PATTERNS["pkb"])):
            rows, app = _pkb_samples(path)
            if rows:
                df = pd.DataFrame(rows).drop_duplicates(["cell", "op", "metric"], keep="last")
                for cell, g in df.groupby("cell", sort=False):
                    key = tuple(g.iloc[0][["workload", "block_size", "iodepth", "numjobs", "data_size", "engine",
                                           "cell"]])
                    run = seen.get(key, 0)
                    seen[key] = run + 1
                    frames.append(records.make(g.drop(columns=["sample"]), study=study, source=source,
                                               device=device, benchmark="fio", run=run, file=str(path)))
            if app:
                frames.append(_pkb_ycsb_records(app, ycsb, path, study=study, source=source, device=device,
                                                run=run_file))
    return records.check(pd.concat(frames, ignore_index=True), where=source)


def _pkb_samples(path: Path) -> tuple[list[dict], list[dict]]:
    """The fio and YCSB record rows of one PKB sample file, each sample checked with its line: fio's
    rw names, mean latencies, bandwidths and rates above 0, no sample given twice, and no two samples
    of one figure (cell, op, statistic) that disagree (PKB's ``latency`` and ``latency:mean`` agree)."""
    from .ycsbout import OPERATIONS

    ycsb_ops = {op.lower() for op in OPERATIONS}
    rows, app, places = [], [], ([], [])
    for lineno, line in enumerate(result_text(path, errors="replace").splitlines(), start=1):
        s = _pkb_sample(line, path, lineno)
        if not s:
            continue
        where = f"{path}: line {lineno}"
        parts = str(s["metric"]).split(":")
        if len(parts) >= 3 and parts[1] in ("read", "write", "trim"):
            row, into, at = _pkb_fio_row(s, parts, where), rows, places[0]
        else:
            op, _, stat = str(s["metric"]).partition(" ")
            row = _pkb_ycsb_row(s, op, stat, where) if op in ycsb_ops and stat else None
            into, at = app, places[1]
        if row:
            into.append({**row, "sample": s["metric"]})
            at.append((str(path), f"line {lineno}"))
    if not rows and not app:
        raise BenchcastError(f"{path}: no PKB fio or YCSB samples")
    for got, at, keys, known in ((rows, places[0], ["cell", "op", "metric"], {"workload": chk.FIO_RW}),
                                 (app, places[1], ["stage", "op", "metric", "from_summary"], {})):
        if got:
            df = pd.DataFrame(got)
            chk.known_fields(df, at, known)
            chk.above_zero(df, at, {"value": df["metric"].isin(chk.POSITIVE_METRICS).to_numpy()})
            chk.repeated(df, at, list(df.columns), noun="sample", shown=["sample"])
            agree = ~df.duplicated([*keys, "value"]).to_numpy()
            chk.repeated(df[agree].drop(columns=["sample"]), [p for p, a in zip(at, agree) if a], keys)
    return rows, [{k: v for k, v in r.items() if k != "sample"} for r in app]


def _pkb_ycsb_records(rows: list[dict], ycsb: dict | None, path: Path, **columns) -> pd.DataFrame:
    if not ycsb:
        raise BenchcastError(f"{path}: YCSB samples, but the source does not say what they measured "
                             f"(give ycsb: {{engine, workload, data_size}})")
    df = pd.DataFrame(rows)
    # YCSB's own summary figure wins over PKB's reading of the histogram for the same percentile
    df = df.sort_values("from_summary", kind="mergesort").drop_duplicates(["stage", "op", "metric"], keep="last")
    df["workload"] = np.where(df["stage"] == "load", "load", ycsb["workload"])
    size = records.parse_size(ycsb["data_size"], what="ycsb.data_size")
    return records.make(df.drop(columns=["stage", "from_summary"]), benchmark="ycsb", engine=ycsb["engine"],
                        threads=int(ycsb["threads"]), data_size=size, file=str(path), **columns)
