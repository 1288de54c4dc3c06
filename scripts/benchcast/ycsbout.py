"""YCSB's measurement output in as records: the text exporter's lines or either JSON exporter's
entries (:func:`parse_text`), and YCSB's histogram logs beside the file (``<stem>.<OP>.hdr``,
:func:`histogram_logs`) as one ``lat_hdr`` record per operation (value the operation count, the whole
run's histogram in the ``hdr`` column, :mod:`benchcast.hdr`), so that aggregation can merge repeats
into true percentiles. Records: benchmark ``ycsb``; op ``read``, ``update``, ``insert``, ``scan``,
``read-modify-write``, ``delete``, ``overall``; metric ``lat_mean``, ``lat_p50``, ``lat_p95``,
``lat_p99``, ``lat_p99.9`` in us, ``ops`` count, and for ``overall`` ``throughput`` in ops/s and
``runtime`` in ms. Any Return code other than OK (or BATCHED_OK), or any failed op, is an error.
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import pandas as pd

from . import BenchcastError
from . import records as rec

#: The operations YCSB reports (CLEANUP, the client's own, is skipped).
OPERATIONS = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "OVERALL"}
#: The return codes of a successful operation.
OK_CODES = {"OK", "BATCHED_OK"}
_METRICS = {
    "AverageLatency(us)": ("lat_mean", "us"),
    "50thPercentileLatency(us)": ("lat_p50", "us"),
    "95thPercentileLatency(us)": ("lat_p95", "us"),
    "99thPercentileLatency(us)": ("lat_p99", "us"),
    "99.9PercentileLatency(us)": ("lat_p99.9", "us"),
    "Operations": ("ops", "ops"),
}
_OVERALL = {"Throughput(ops/sec)": ("throughput", "ops/s"), "RunTime(ms)": ("runtime", "ms")}
_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?),\s*(\S+)\s*$")


def _json_entries(text: str, where: str):
    """(name, key, value) of YCSB's JSON exporters: JSONArrayMeasurementsExporter (one array) or
    JSONMeasurementsExporter (objects one after another), each {"metric", "measurement", "value"}."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    text = text.strip()
    while pos < len(text):
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise BenchcastError(f"{where}: YCSB JSON output is malformed ({exc.msg} at line {exc.lineno})") from None
        for item in obj if isinstance(obj, list) else [obj]:
            if not isinstance(item, dict) or not {"metric", "measurement", "value"} <= set(item):
                raise BenchcastError(f"{where}: YCSB JSON entries need metric, measurement and value")
            out.append((str(item["metric"]), str(item["measurement"]), str(item["value"])))
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
    return out


def _text_entries(text: str):
    """(name, key, value) of the lines of YCSB's text exporter: ``[UPDATE], AverageLatency(us), 12.5``."""
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            yield m.group(1).strip(), m.group(2).strip(), m.group(3)


def parse_text(text: str, where: str) -> dict:
    """Parse YCSB output (the text exporter's lines or either JSON exporter's entries) into
    ``{"ops": {(op, metric): value}, "returns": {op: {code: n}}, "failed": {name: n}}``. Raises on
    output without any measurement."""
    values: dict[tuple[str, str], float] = {}
    returns: dict[str, dict[str, int]] = {}
    failed: dict[str, int] = {}
    head = text.lstrip()[:200]
    is_json = head.startswith("{") or (head.startswith("[") and head[1:].lstrip().startswith("{"))
    for name, key, raw in (_json_entries(text, where) if is_json else _text_entries(text)):
        if name.startswith("TOTAL_GC") or name == "CLEANUP":
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if name not in OPERATIONS:
            # READ-FAILED, or READ-NOT_FOUND when latency is tracked per error code
            failed[name] = failed.get(name, 0) + (int(value) if key == "Operations" else 0)
            continue
        if key.startswith("Return="):
            returns.setdefault(name.lower(), {})[key[len("Return="):]] = int(value)
            continue
        table = _OVERALL if name == "OVERALL" else _METRICS
        if key in table:
            values[(name.lower(), table[key][0])] = value
    if not values:
        raise BenchcastError(f"{where}: no YCSB measurements found")
    if ("overall", "throughput") not in values:
        raise BenchcastError(f"{where}: no [OVERALL] throughput line (YCSB did not finish?)")
    if not any(op != "overall" for op, _ in values) and not failed:
        raise BenchcastError(f"{where}: YCSB measured no operations (no client thread ran?)")
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
    from . import hdr

    path = Path(path)
    try:
        text = path.read_text(errors="replace")
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
            rows.append({"op": name.lower(), "metric": "lat_hdr", "unit": "ops",
                         "value": float(hist.get_total_count()), "hdr": hdr.encode(hist)})
    base = {"study": "", "device": "", "source": "ycsb", "benchmark": "ycsb", "engine": "", "workload": "",
            "block_size": 0, "threads": 0, "data_size": 0, "run": 0}
    base.update(columns)
    return rec.make(rows, **base)
