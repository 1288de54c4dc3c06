"""Importers: existing results (the paper's tables, later other tools') into tidy records."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pandas as pd

from . import BenchcastError, records, units
from .workloads import RW_OP, WORKLOADS

#: fio's mixed rw values (their records name the op); the ops of the paper's application table.
MIXED_RW = ("rw", "readwrite", "randrw")
APP_OPS = ("read", "write", "update", "insert", "scan", "readmodifywrite", "overall")

#: The paper's fio metric names -> (record metric, unit).
SOGA_FIO_METRICS = {"lat_us": ("lat_mean", "us"), "bw_MBps": ("bw", "MB/s")}


def _read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise BenchcastError(f"{path}: not a CSV file ({str(exc).splitlines()[0]})") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise BenchcastError(f"{path}: missing column(s) {', '.join(missing)} (has: {', '.join(df.columns)})")
    return df


def _numeric(df: pd.DataFrame, col: str, path: Path) -> pd.Series:
    num = pd.to_numeric(df[col].str.strip(), errors="coerce")
    bad = num.isna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        # +2: header line, and rows count from 1
        raise BenchcastError(f"{path}: row {i + 2}: column {col} is not a number: {df[col].iloc[i]!r}")
    return num


def _rows_checked(df: pd.DataFrame, path: Path, keys: list[str], values: list[str], known: dict) -> None:
    """Checks of one imported table, each error naming the file and the row's own line (the header
    is line 1): rows at all, values above 0 (``values``: latencies, bandwidths, data sizes), fields
    of known names (``known``: column -> allowed values), and no key (``keys``) given twice: the
    same row twice is one error, two rows that disagree another."""
    if df.empty:
        raise BenchcastError(f"{path}: no rows (only a header)")
    line = lambda i: int(i) + 2  # noqa: E731
    for col, allowed in known.items():
        bad = ~df[col].isin(list(allowed))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise BenchcastError(f"{path}: line {line(i)}: unknown {col} {df[col].iloc[i]!r} "
                                 f"(known: {', '.join(sorted(allowed))})")
    for col in values:
        num = pd.to_numeric(df[col].str.strip(), errors="coerce").to_numpy()
        bad = ~(num > 0) | ~np.isfinite(num)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "negative" if num[i] < 0 else "not finite" if not np.isfinite(num[i]) else "zero"
            raise BenchcastError(f"{path}: line {line(i)}: column {col}: value is {what}: {df[col].iloc[i]} "
                                 f"(it must be above 0)")
    first = df.reset_index(drop=True).groupby(keys, sort=False).cumcount()
    for i in np.flatnonzero(first.to_numpy() > 0):
        row = df.iloc[i]
        same = (df[keys] == row[keys]).all(axis=1).to_numpy()
        j = int(np.flatnonzero(same)[0])
        key = ", ".join(f"{k} {row[k]}" for k in keys)
        if (df.iloc[j] == row).all():
            raise BenchcastError(f"{path}: line {line(i)}: duplicate row (the same as line {line(j)}: {key})")
        raise BenchcastError(f"{path}: line {line(i)}: conflicting duplicate of line {line(j)} ({key}: "
                             f"{', '.join(f'{c} {df.iloc[j][c]} vs {row[c]}' for c in df.columns if df.iloc[j][c] != row[c])})")


def _same_devices(fio: pd.DataFrame, fio_path: Path, app: pd.DataFrame, app_path: Path) -> None:
    """A device of one of the paper-shaped tables must be in the other (a device without figures or
    without results is no point of any regression)."""
    for df, path, other, other_path in ((fio, fio_path, app, app_path), (app, app_path, fio, fio_path)):
        missing = ~df["device"].isin(set(other["device"]))
        if missing.any():
            i = int(np.flatnonzero(missing.to_numpy())[0])
            raise BenchcastError(f"{path}: line {i + 2}: device {df['device'].iloc[i]!r} has no rows in {other_path}")


def _known_devices(df: pd.DataFrame, path: Path, devices) -> None:
    if devices is None:
        return
    bad = ~df["device"].isin(list(devices))
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise BenchcastError(
            f"{path}: row {i + 2}: unknown device {df['device'].iloc[i]!r} "
            f"(study devices: {', '.join(devices)})"
        )


def soga2018_figures(fio_csv) -> set | None:
    """(workload, block size, metric) of the device figures of the paper-shaped fio table, for the
    config's check of spec cards before any job runs; None where the table cannot be read (the
    import's own check then names the file and what is wrong; rows it cannot read are its errors)."""
    out = set()
    try:
        df = _read_csv(Path(fio_csv), ["rw", "bs", "metric"])
    except BenchcastError:
        return None
    for rw, bs, metric in df[["rw", "bs", "metric"]].itertuples(index=False):
        try:
            out.add((rw, records.parse_size(bs), SOGA_FIO_METRICS[metric][0]))
        except (BenchcastError, KeyError):
            continue
    return out


def soga2018(fio_csv, app_csv, study: str, source: str, benchmark: str, devices=None) -> pd.DataFrame:
    """Import the paper's published tables (already trimmed means, run = -1).

    ``fio_csv``: device, rw, bs, metric (lat_us | bw_MBps), value.
    ``app_csv``: engine, workload, device, data_gb, op, latency_us.
    ``devices``: the study's device ids; a row naming another device is an error.
    """
    fio_path, app_path = Path(fio_csv), Path(app_csv)
    fio = _read_csv(fio_path, ["device", "rw", "bs", "metric", "value"])
    _known_devices(fio, fio_path, devices)
    value = _numeric(fio, "value", fio_path)
    unknown = ~fio["metric"].isin(list(SOGA_FIO_METRICS))
    if unknown.any():
        i = int(unknown.to_numpy().nonzero()[0][0])
        raise BenchcastError(
            f"{fio_path}: row {i + 2}: unknown metric {fio['metric'].iloc[i]!r} "
            f"(known: {', '.join(SOGA_FIO_METRICS)})"
        )
    bs = []
    for i, text in enumerate(fio["bs"]):
        try:
            bs.append(records.parse_size(text, what="bs"))
        except BenchcastError as exc:
            raise BenchcastError(f"{fio_path}: row {i + 2}: {exc}") from None
    fio_rec = pd.DataFrame(
        {
            "device": fio["device"],
            "benchmark": "fio",
            "engine": "",
            "workload": fio["rw"],
            "block_size": bs,
            "threads": 1,
            "data_size": 0,
            "op": fio["rw"].map(RW_OP).fillna("mixed"),
            "metric": fio["metric"].map(lambda m: SOGA_FIO_METRICS[m][0]),
            "unit": fio["metric"].map(lambda m: SOGA_FIO_METRICS[m][1]),
            "value": value,
            "run": -1,
        }
    )

    app = _read_csv(app_path, ["engine", "workload", "device", "data_gb", "op", "latency_us"])
    _known_devices(app, app_path, devices)
    data_gb = _numeric(app, "data_gb", app_path)
    lat = _numeric(app, "latency_us", app_path)
    _rows_checked(fio, fio_path, ["device", "rw", "bs", "metric"], ["value"], {"rw": [*RW_OP, *MIXED_RW]})
    _rows_checked(app, app_path, ["engine", "workload", "device", "data_gb", "op"], ["data_gb", "latency_us"],
                  {"workload": WORKLOADS, "op": APP_OPS})
    _same_devices(fio, fio_path, app, app_path)
    app_rec = pd.DataFrame(
        {
            "device": app["device"],
            "benchmark": benchmark,
            "engine": app["engine"],
            "workload": app["workload"],
            "block_size": 0,
            "threads": 0,
            "data_size": units.convert(data_gb, "GB", "B").round().astype("int64"),
            "op": app["op"],
            "metric": "lat_mean",
            "unit": "us",
            "value": lat,
            "run": -1,
        }
    )
    out = pd.concat([fio_rec, app_rec], ignore_index=True)
    out.insert(0, "source", source)
    out.insert(0, "study", study)
    return records.check(out, where=f"{fio_path} + {app_path}")


# --------------------------------------------------------------------------------------------
# fio JSON from any fio 3.x (json or json+) or older (usec fields), e.g. bench-fio folders
# --------------------------------------------------------------------------------------------


#: The files a folder entry of each import kind holds.
FILE_PATTERNS = {"fio_json": "*.json", "pkb": "*.json", "records": "*.csv", "ycsb_output": "*"}


def input_files(spec, pattern: str = "*.json") -> list[Path]:
    """The files of one import entry: a folder (every ``pattern`` file below it), a glob, a file,
    or a list of those; sorted, each once. An entry that matches nothing is an error naming it."""
    specs = spec if isinstance(spec, (list, tuple)) else [spec]
    out: list[Path] = []
    for s in specs:
        p = Path(str(s))
        if p.is_dir():
            # a benchcast results folder also holds each run's interference record: not a result
            found = sorted(f for f in p.rglob(pattern) if f.is_file() and not f.name.startswith("quality-run"))
        elif any(c in str(s) for c in "*?["):
            found = sorted(Path(f) for f in glob.glob(str(s), recursive=True) if Path(f).is_file())
        else:
            found = [p] if p.is_file() else []
        if not found:
            raise BenchcastError(f"{s}: no {pattern} file (a folder, glob or file was expected)")
        out += found
    return list(dict.fromkeys(out))


def fio_json(device_files: dict, study: str, source: str) -> pd.DataFrame:
    """Records from fio JSON outputs (``--output-format=json`` or ``json+``, fio 3.x, or older
    versions' usec fields), one device per entry of ``device_files`` (device id -> folder, glob or
    file, see :func:`input_files`), bench-fio's layouts included (``<rw>-<iodepth>-<numjobs>.json``,
    ``<bs>/<rw>-<iodepth>-<numjobs>.json``).

    Each job of a file is one cell, read from the options fio reports back (global, then the job's),
    never from the file name: every option that shapes the measurement (:func:`benchcast.fiojson.cell_label`:
    rw, bs, iodepth, numjobs, ioengine, direct, rwmixread, fsync, size ...) is part of it, and the
    cell column holds them. Files of the same cell on one device are repeats (run 0, 1, ... in file
    order); files that differ in any of those options are separate cells. The jobs of a job with
    numjobs > 1 that fio reported one by one (no group_reporting) are merged into one
    (:func:`benchcast.fiojson.merge_jobs`). Provenance: file, fio_version, jobname. A file that is not
    fio JSON, lacks statistics, reports a job error or holds two jobs of the same cell stops the
    import with one line naming it; nothing is written then."""
    from . import fiojson

    frames = []
    for device, spec in device_files.items():
        seen: dict[tuple, int] = {}
        for path in input_files(spec, FILE_PATTERNS["fio_json"]):
            data = fiojson.load(path)
            if data.get("benchcast_skipped"):
                continue
            for keys, job in fiojson.file_cells(data, path):
                rows = fiojson.job_rows(job, path)
                if not rows:
                    raise BenchcastError(f"{path}: fio job {job.get('jobname')} did no I/O")
                cell = tuple(sorted(keys.items()))
                run = seen.get(cell, 0)
                seen[cell] = run + 1
                frames.append(records.make(
                    rows, study=study, source=source, device=device, benchmark="fio", run=run, **keys,
                    file=str(path), fio_version=data.get("fio version", ""), jobname=job.get("jobname", "")))
    if not frames:
        raise BenchcastError(f"{source}: no fio results in {', '.join(map(str, device_files.values()))}")
    out = records.check(pd.concat(frames, ignore_index=True), where=source)
    _refuse_unlike_repeats(out)
    return out


#: Repeats of one cell (the same options) whose IOPS differ more than this factor are not taken for
#: repeats: the options do not tell apart what the numbers do (another device, a setting fio does not
#: report), and averaging them would pass for a measurement.
UNLIKE_REPEATS = 2.0


def _refuse_unlike_repeats(recs: pd.DataFrame) -> None:
    """One line naming two files of one cell whose IOPS differ more than :data:`UNLIKE_REPEATS`."""
    iops = recs[recs["metric"] == "iops"]
    keys = records.KEY_COLUMNS
    for _, g in iops[iops.groupby(keys)["run"].transform("size") > 1].groupby(keys):
        lo, hi = g.loc[g["value"].idxmin()], g.loc[g["value"].idxmax()]
        if hi["value"] > UNLIKE_REPEATS * lo["value"]:
            raise BenchcastError(
                f"{hi['file']} and {lo['file']}: the same fio options ({hi['cell']}) but {hi['op']} IOPS "
                f"{hi['value']:.6g} and {lo['value']:.6g} (x{hi['value'] / lo['value']:.1f}): not repeats of one "
                f"setting; give them different devices (or sources)")


# --------------------------------------------------------------------------------------------
# benchcast's own records, e.g. from another machine
# --------------------------------------------------------------------------------------------


def record_files(files, study: str, source: str, devices=None, rename: dict | None = None) -> pd.DataFrame:
    """Tidy record CSVs written by benchcast (``results/<study>/records/*/*.csv`` of another tree or
    machine) as records of ``study``: devices renamed by ``rename`` (old id -> new id), then checked
    against the study's ``devices``; the original study and source are kept as provenance
    (origin_study, origin_source), and the file. One bad file stops the import, named."""
    frames = []
    for path in input_files(files, FILE_PATTERNS["records"]):
        df = records.read(path)
        df = df.assign(origin_study=df["study"], origin_source=df["source"], file=str(path), study=study,
                       source=source)
        if rename:
            df["device"] = df["device"].replace(rename)
        _known_devices(df, path, devices)
        frames.append(df)
    return records.check(pd.concat(frames, ignore_index=True), where=source)


# --------------------------------------------------------------------------------------------
# YCSB outputs made elsewhere (text exporter or JSON exporters)
# --------------------------------------------------------------------------------------------


def ycsb_output_files(spec) -> list[Path]:
    """The YCSB outputs of an entry (:func:`input_files`), without YCSB's histogram logs (``*.hdr``):
    those are read with the output they sit beside (:func:`benchcast.ycsbout.histogram_logs`)."""
    files = [p for p in input_files(spec, FILE_PATTERNS["ycsb_output"]) if p.suffix != ".hdr"]
    if not files:
        raise BenchcastError(f"{spec}: only histogram logs, no YCSB output")
    return files


def ycsb_output(runs, study: str, source: str, devices=None) -> pd.DataFrame:
    """Records from YCSB measurement outputs (the text exporter, or JSONArrayMeasurementsExporter /
    JSONMeasurementsExporter). ``runs``: entries {files, device, engine, workload, data_size[,
    threads]} saying what each set of outputs measured (YCSB's output does not say it); the files of
    an entry (a folder, glob, file or list, :func:`input_files`) are its repeats, run 0, 1, ... in
    file order. YCSB's histogram logs of an output, ``<output stem>.<OP>.hdr`` beside it (YCSB run
    with ``hdrhistogram.fileoutput=true`` and ``hdrhistogram.output.path=<output stem>.``), are read
    with it, so that the repeats' percentiles are merged. A file with failed operations, or no
    measurement, stops the import, named."""
    from . import ycsbout

    frames = []
    for i, entry in enumerate(runs):
        where = f"{source}: runs[{i}]"
        if devices is not None and entry["device"] not in devices:
            raise BenchcastError(f"{where}: unknown device {entry['device']!r} (study devices: {', '.join(devices)})")
        size = records.parse_size(entry["data_size"], what=f"{where}.data_size")
        for run, path in enumerate(ycsb_output_files(entry["files"])):
            frames.append(ycsbout.parse(path, study=study, source=source, device=entry["device"],
                                     engine=entry["engine"], workload=entry["workload"], data_size=size,
                                     threads=int(entry["threads"]), run=run, file=str(path)))
    return records.check(pd.concat(frames, ignore_index=True), where=source)


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
    return s


#: PKB's YCSB samples: '<op> <statistic>' (YCSB's summary line without its unit, or '<op> pXX
#: latency' from the histogram) -> record metric; latencies come in ms (PKB converts YCSB's us).
PKB_YCSB = {"AverageLatency": "lat_mean", "50thPercentileLatency": "lat_p50", "95thPercentileLatency": "lat_p95",
            "99thPercentileLatency": "lat_p99", "99.9PercentileLatency": "lat_p99.9", "p50 latency": "lat_p50",
            "p95 latency": "lat_p95", "p99 latency": "lat_p99", "p99.9 latency": "lat_p99.9",
            "Operations": "ops", "Throughput": "throughput", "RunTime": "runtime"}
_PKB_YCSB_UNITS = {"ops": "ops", "throughput": "ops/s", "runtime": "ms"}


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
    # PKB copies the job file's options, spelled as in a job file, beside its own (fio_job ...)
    opts = {k: v for k, v in md.items() if not str(k).startswith("fio_") and k != "blocksize"}
    opts.update({"bs": md.get("blocksize", md.get("bs", "4k")), "ioengine": md.get("ioengine", ""),
                 "size": md.get("size", md.get("filesize", "0"))})
    keys = fiojson.job_keys({"job options": opts}, None, where)
    return {**keys, "op": parts[1], "metric": metric, "unit": unit, "value": value, "jobname": parts[0]}


def _pkb_ycsb_row(s: dict, op: str, stat: str, where: str) -> dict | None:
    """A record row of one PKB YCSB sample (None for statistics benchcast does not keep); a failed
    return code stops the import."""
    from . import units
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
    """Records from PerfKitBenchmarker sample files (JSON lines of metric, value, unit, metadata).

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
    folder, glob or file)."""
    from .ycsbout import OPERATIONS

    ycsb_ops = {op.lower() for op in OPERATIONS}
    frames = []
    for device, spec in device_files.items():
        seen: dict[tuple, int] = {}
        for run_file, path in enumerate(input_files(spec, FILE_PATTERNS["pkb"])):
            rows, app = [], []
            for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
                s = _pkb_sample(line, path, lineno)
                if not s:
                    continue
                where = f"{path}: line {lineno}"
                parts = str(s["metric"]).split(":")
                if len(parts) >= 3 and parts[1] in ("read", "write", "trim"):
                    row = _pkb_fio_row(s, parts, where)
                    if row:
                        rows.append(row)
                    continue
                op, _, stat = str(s["metric"]).partition(" ")
                if op in ycsb_ops and stat:
                    row = _pkb_ycsb_row(s, op, stat, where)
                    if row:
                        app.append(row)
            if not rows and not app:
                raise BenchcastError(f"{path}: no PKB fio or YCSB samples")
            if rows:
                df = pd.DataFrame(rows).drop_duplicates(["cell", "op", "metric"], keep="last")
                for cell, g in df.groupby("cell", sort=False):
                    key = tuple(g.iloc[0][["workload", "block_size", "iodepth", "numjobs", "data_size", "engine",
                                           "cell"]])
                    run = seen.get(key, 0)
                    seen[key] = run + 1
                    frames.append(records.make(g, study=study, source=source, device=device, benchmark="fio",
                                               run=run, file=str(path)))
            if app:
                frames.append(_pkb_ycsb_records(app, ycsb, path, study=study, source=source, device=device,
                                                run=run_file))
    return records.check(pd.concat(frames, ignore_index=True), where=source)


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
