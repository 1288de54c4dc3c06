"""YCSB's measurement output in as records: the text exporter's lines or either JSON exporter's
entries (:func:`parse_text`), and YCSB's histogram logs beside the file (``<stem>.<OP>.hdr``,
:func:`histogram_logs`) as one ``lat_hdr`` record per operation (value the operation count, the whole
run's histogram in the ``hdr`` column, :mod:`benchcast.records.hdr`), so that aggregation can merge repeats
into true percentiles. Records: benchmark ``ycsb``; op ``read``, ``update``, ``insert``, ``scan``,
``read-modify-write``, ``delete``, ``overall``; metric ``lat_mean``, ``lat_p50``, ``lat_p95``,
``lat_p99``, ``lat_p99.9`` in us, ``ops`` count, and for ``overall`` ``throughput`` in ops/s and
``runtime`` in ms. Any Return code other than OK (or BATCHED_OK), or any failed op, is an error.

Every measurement line (``[READ], AverageLatency(us), 123.4``; a JSON exporter's entry) is checked
with the file and its own line: a number, an operation or client line YCSB prints, no line given
twice, and the figures kept finite, not negative, and above 0 where a run cannot measure 0 (mean
latencies, throughput, operation counts). Other lines (YCSB's banner, status lines) are skipped.
"""

from __future__ import annotations

import glob
import json
import math
import re
from pathlib import Path

import pandas as pd

from ... import BenchcastError, result_text
from ... import records as rec
from ...core.units import HISTOGRAM_METRIC

#: The operations YCSB reports (CLEANUP, the client's own, is skipped).
OPERATIONS = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "OVERALL"}
#: The return codes of a successful operation (YCSB 0.1.x printed integer codes: 0 was success).
OK_CODES = {"OK", "BATCHED_OK", "0"}
#: Lines YCSB's client prints of itself (its cleanup, the core workload's data check, the JVM's
#: figures): known, not measurements of the database.
CLIENT_LINES = {"CLEANUP", "VERIFY", "TOTAL_GCs", "TOTAL_GC_TIME", "TOTAL_GC_TIME_%", "MAX_MEM_USED",
                "MIN_MEM_USED", "MAX_THREADS", "MIN_THREADS", "MAX_SYS_LOAD_AVG", "MIN_SYS_LOAD_AVG"}
_CLIENT_PREFIXES = ("TOTAL_GCS_", "TOTAL_GC_TIME_")
#: YCSB's name of the latencies measured from each operation's intended start (measurement.interval).
INTENDED = "Intended-"
#: measurementtype=hdrhistogram+histogram (+raw): each operation twice, as Hdr<OP> and Bucket<OP>
#: (Raw<OP>); the HdrHistogram series (the default type's) is read, the other skipped.
_TWO_IN_ONE = {"Hdr": True, "Bucket": False, "Raw": False}
_METRICS = {
    "AverageLatency(us)": ("lat_mean", "us"),
    "50thPercentileLatency(us)": ("lat_p50", "us"),
    "95thPercentileLatency(us)": ("lat_p95", "us"),
    "99thPercentileLatency(us)": ("lat_p99", "us"),
    "99.9PercentileLatency(us)": ("lat_p99.9", "us"),
    "Operations": ("ops", "ops"),
}
#: Latencies YCSB printed in other units (0.1.x: ``95thPercentileLatency(ms)``; the timeseries
#: measurement type: ``AverageLatency(ms)``): read as the same metric, converted to us.
_LATENCY_UNITS = {"ms": 1000.0, "ns": 0.001}
_UNIT_KEY = re.compile(r"^(.+)\((ms|ns)\)$")
_OVERALL = {"Throughput(ops/sec)": ("throughput", "ops/s"), "RunTime(ms)": ("runtime", "ms")}
#: Metrics no run measures as 0 (the rest must be finite and not negative).
POSITIVE = {"lat_mean", "throughput", "ops"}
_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?),\s*(\S+)\s*$")
_STATUS = re.compile(r"^[A-Z][A-Z_]*$")
_LINE_START = re.compile(r"^\[[^\]\s][^\]]*\],")


def _json_entries(text: str, where: str):
    """(line, name, key, value) of YCSB's JSON exporters: JSONArrayMeasurementsExporter (one array)
    or JSONMeasurementsExporter (objects one after another), each {"metric", "measurement", "value"};
    line: where the entry starts."""
    decoder, out = json.JSONDecoder(), []
    pos, inside = 0, False

    def skip(p):
        while p < len(text) and text[p] in " \t\r\n,":
            p += 1
        return p

    pos = skip(pos)
    while pos < len(text):
        if text[pos] == "[" and not inside:
            inside, pos = True, skip(pos + 1)
            continue
        if text[pos] == "]" and inside:
            inside, pos = False, skip(pos + 1)
            continue
        line = text.count("\n", 0, pos) + 1
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise BenchcastError(f"{where}: line {exc.lineno}: YCSB JSON output is malformed ({exc.msg})") from None
        if not isinstance(item, dict) or not {"metric", "measurement", "value"} <= set(item):
            raise BenchcastError(f"{where}: line {line}: YCSB JSON entries need metric, measurement and value")
        out.append((line, str(item["metric"]), str(item["measurement"]), str(item["value"])))
        pos = skip(pos)
    return out


def _text_entries(text: str, where: str):
    """(line, name, key, value) of the lines of YCSB's text exporter: ``[UPDATE], AverageLatency(us),
    12.5``; other lines (the banner, status lines) are none. A line that starts as one (``[NAME],``)
    but is not (a value with text after it, a field missing) is refused with its line, not skipped."""
    for n, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line.strip())
        if m:
            yield n, m.group(1).strip(), m.group(2).strip(), m.group(3)
        elif _LINE_START.match(line.strip()):
            raise BenchcastError(f"{where}: line {n}: not a YCSB measurement line ([NAME], measurement, value): "
                                 f"{line.strip()[:80]!r}")


def _kind(name: str) -> tuple[str | None, str]:
    """What a line's name is, and the name it is read as: "op" (a measured operation or OVERALL),
    "failed" (an operation's failures: READ-FAILED, or READ-NOT_FOUND when latency is tracked per
    error code), "skip" (the client's own lines, the latencies from intended starts, the second
    series of measurementtype=hdrhistogram+histogram or +raw), None (no name YCSB prints). The
    HdrHistogram series of those two types (``HdrREAD``) is read as the operation's own."""
    if name in OPERATIONS:
        return "op", name
    if name in CLIENT_LINES or name.startswith(_CLIENT_PREFIXES):
        return "skip", name
    if name.startswith(INTENDED):
        return ("skip" if _kind(name[len(INTENDED):])[0] in ("op", "failed") else None), name
    for op in sorted(OPERATIONS - {"OVERALL"}, key=len, reverse=True):
        if name.startswith(op + "-") and _STATUS.match(name[len(op) + 1:]):
            return "failed", name
    for prefix, read in _TWO_IN_ONE.items():
        if name.startswith(prefix):
            kind, base = _kind(name[len(prefix):])
            if kind in ("op", "failed", "skip") and base != "OVERALL":
                return (kind, base) if read else ("skip", name)
    return None, name


def _number(raw: str, n: int, name: str, key: str, where: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise BenchcastError(f"{where}: line {n}: [{name}], {key}: value is not a number: {raw!r}") from None


def parse_text(text: str, where: str) -> dict:
    """Parse YCSB output (the text exporter's lines or either JSON exporter's entries) into
    ``{"ops": {(op, metric): value}, "returns": {op: {code: n}}, "failed": {name: n}}``, each line
    checked with ``where`` and its line (see the module). Raises on output without any measurement."""
    values: dict[tuple[str, str], float] = {}
    returns: dict[str, dict[str, int]] = {}
    failed: dict[str, int] = {}
    seen: dict[tuple[str, str], tuple[int, str]] = {}
    lines: dict[tuple[str, str], tuple[int, str]] = {}  # (op, metric) -> (line, value as written)
    intended = False
    head = text.lstrip()[:200]
    is_json = head.startswith("{") or (head.startswith("[") and head[1:].lstrip().startswith("{"))
    for n, name, key, raw in (_json_entries(text, where) if is_json else _text_entries(text, where)):
        kind, op = _kind(name)
        if kind is None:
            raise BenchcastError(f"{where}: line {n}: unknown operation {name!r} (YCSB reports "
                                 f"{', '.join(sorted(OPERATIONS))}, their failures and its own lines)")
        value = _number(raw, n, name, key, where)
        if (name, key) in seen:
            first, was = seen[(name, key)]
            if float(was) == value or was == raw:
                raise BenchcastError(f"{where}: line {n}: duplicate line (the same as line {first}: [{name}], {key})")
            raise BenchcastError(f"{where}: line {n}: conflicting duplicate of line {first} ([{name}], {key}: "
                                 f"{was} vs {raw})")
        seen[(name, key)] = (n, raw)
        if kind == "skip":
            intended |= op.startswith(INTENDED) or name.startswith(INTENDED)
            continue
        counts = kind == "failed" and key == "Operations" or key.startswith("Return=")
        if counts and not (math.isfinite(value) and value >= 0 and value == int(value)):
            raise BenchcastError(f"{where}: line {n}: [{name}], {key}: value is not a count: {raw}")
        if kind == "failed":
            failed[op] = failed.get(op, 0) + (int(value) if key == "Operations" else 0)
            continue
        if key.startswith("Return="):
            returns.setdefault(op.lower(), {})[key[len("Return="):]] = int(value)
            continue
        table = _OVERALL if op == "OVERALL" else _METRICS
        other_unit = _UNIT_KEY.match(key) if op != "OVERALL" else None
        if key not in table and other_unit and f"{other_unit.group(1)}(us)" in table:
            metric = table[f"{other_unit.group(1)}(us)"][0]
            if value == 0 and other_unit.group(2) == "ms" and metric != "lat_mean":
                raise BenchcastError(f"{where}: line {n}: [{name}], {key}: 0 ms is below the resolution of YCSB "
                                     f"0.1.x's whole-ms percentiles, no latency; remove the line to import the "
                                     f"file without it")
            value = value * _LATENCY_UNITS[other_unit.group(2)]
        elif key in table:
            metric = table[key][0]
        else:
            continue
        if (op.lower(), metric) in lines:
            raise BenchcastError(f"{where}: line {n}: [{name}], {key}: {metric} of {op} again (first at line "
                                 f"{lines[(op.lower(), metric)][0]}, in another unit)")
        values[(op.lower(), metric)] = value
        lines[(op.lower(), metric)] = (n, f"[{name}], {key}")
    if not values:
        why = "an empty file" if not text.strip() else "no [OPERATION], measurement, value line"
        raise BenchcastError(f"{where}: no YCSB measurements found ({why})")
    if ("overall", "throughput") not in values:
        raise BenchcastError(f"{where}: no [OVERALL] throughput line (YCSB did not finish?)")
    if not any(op != "overall" for op, _ in values) and not failed:
        if intended:
            raise BenchcastError(f"{where}: only latencies from intended starts (YCSB's measurement.interval="
                                 f"intended); give measurement.interval=op or both")
        raise BenchcastError(f"{where}: YCSB measured no operations (no client thread ran?)")
    for (op, metric), value in values.items():
        n, line = lines[(op, metric)]
        above = metric in POSITIVE
        if not math.isfinite(value) or value < 0 or (above and value == 0):
            what = "not finite" if not math.isfinite(value) else "negative" if value < 0 else "zero"
            must = "above 0" if above else "a finite number, not negative"
            raise BenchcastError(f"{where}: line {n}: {line}: value is {what}: {value:g} (it must be {must})")
    return {"ops": values, "returns": returns, "failed": failed}


def check_ok(parsed: dict, where: str) -> None:
    """Raise when YCSB reported any return code other than OK or any failed operation."""
    bad = [f"{op} Return={code} x{n}" for op, codes in sorted(parsed["returns"].items())
           for code, n in sorted(codes.items()) if code not in OK_CODES and n]
    bad += [f"{name} x{n}" for name, n in sorted(parsed["failed"].items())]
    if bad:
        raise BenchcastError(f"{where}: YCSB reported failed operations: {', '.join(bad)}")


def histogram_logs(path) -> list[Path]:
    """YCSB's histogram logs of the measurement file ``path``: ``<stem>.<OP>.hdr`` beside it (YCSB
    run with ``hdrhistogram.output.path=<stem>.``)."""
    path = Path(path)
    return sorted(path.parent.glob(glob.escape(path.stem) + ".*.hdr"))


def parse(path, **columns) -> pd.DataFrame:
    """Records of one YCSB measurement file and its histogram logs (:func:`histogram_logs`);
    ``columns`` are added to every row (study, device, engine, workload, threads, data_size, run,
    provenance ...). Raises on failed operations."""
    from ...records import hdr

    path = Path(path)
    try:
        text = result_text(path, errors="replace")
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such YCSB output file") from None
    parsed = parse_text(text, str(path))
    check_ok(parsed, str(path))
    rows = []
    for (op, metric), value in parsed["ops"].items():
        unit = (_OVERALL if op == "overall" else _METRICS)
        unit = next(u for m, u in unit.values() if m == metric)
        rows.append({"op": op, "metric": metric, "unit": unit, "value": value})
    measured = {op for op, _ in parsed["ops"]}
    for log in histogram_logs(path):
        name, hist = hdr.read_log(log)
        if name.lower() in measured and name != "OVERALL":
            rows.append({"op": name.lower(), "metric": HISTOGRAM_METRIC, "unit": "ops",
                         "value": float(hist.get_total_count()), "hdr": hdr.encode(hist)})
    base = {"study": "", "device": "", "source": "ycsb", "benchmark": "ycsb", "engine": "", "workload": "",
            "block_size": 0, "threads": 0, "data_size": 0, "run": 0}
    base.update(columns)
    return rec.make(rows, **base)
