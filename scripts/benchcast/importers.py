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


def _numeric(df: pd.DataFrame, col: str, places: list) -> pd.Series:
    num = pd.to_numeric(df[col].str.strip(), errors="coerce")
    bad = num.isna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise BenchcastError(f"{_at(places[i])}: column {col} is not a number: {df[col].iloc[i]!r}")
    return num


# --------------------------------------------------------------------------------------------
# The checks of every imported row. A row's place is (file, where in it): "line N" of a CSV or
# JSON-lines file (its own line, the header is line 1), "jobs[K] (name)" of a fio JSON output.
# --------------------------------------------------------------------------------------------

#: fio's rw values (fio refuses others); an imported fio job or record of another is an error.
FIO_RW = (*RW_OP, *MIXED_RW, "trim", "randtrim", "trimwrite", "randtrimwrite")
#: Metrics no run can measure as 0: mean latencies, bandwidths and rates.
POSITIVE_METRICS = ("lat_mean", "clat_mean", "bw", "iops", "throughput")


def _at(place: tuple) -> str:
    return f"{place[0]}: {place[1]}"


def _ref(place: tuple, other: tuple) -> str:
    """``other`` as seen from ``place``: its line alone in the same file, else file and line."""
    return other[1] if other[0] == place[0] else _at(other)


def _line_places(df: pd.DataFrame, path: Path) -> list[tuple]:
    """The place of each row of a CSV file: its own line (:func:`benchcast.records.csv_lines`)."""
    return [(str(path), f"line {n}") for n in records.csv_lines(path, len(df))]


def _no_rows(df: pd.DataFrame, path: Path) -> None:
    if df.empty:
        raise BenchcastError(f"{path}: no rows (only a header)")


def _known_fields(df: pd.DataFrame, places: list, known: dict) -> None:
    """Fields of known names only (``known``: column -> allowed values)."""
    for col, allowed in known.items():
        bad = ~df[col].astype(str).isin(list(allowed))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise BenchcastError(f"{_at(places[i])}: unknown {col} {df[col].iloc[i]!r} "
                                 f"(known: {', '.join(sorted(allowed))})")


def _above_zero(df: pd.DataFrame, places: list, values: dict) -> None:
    """Finite numbers, none negative, in each column of ``values`` (column -> the rows, a boolean
    mask, that must be above 0: latencies, bandwidths, sizes; None: every row)."""
    for col, rows in values.items():
        num = pd.to_numeric(df[col].astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
        need = np.ones(len(num), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
        bad = ~np.isfinite(num) | (num < 0) | (need & (num == 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "not finite" if not np.isfinite(num[i]) else "negative" if num[i] < 0 else "zero"
            must = "above 0" if need[i] else "a finite number, not negative"
            if {"op", "metric"} <= set(df.columns):  # record rows: say which figure
                must = f"{df['op'].iloc[i]} {df['metric'].iloc[i]}: it must be {must}"
            else:
                must = f"it must be {must}"
            raise BenchcastError(f"{_at(places[i])}: column {col}: value is {what}: {df[col].iloc[i]} ({must})")


def _repeated(df: pd.DataFrame, places: list, keys: list[str], noun: str = "row", shown=None) -> None:
    """No ``keys`` given twice: the same {noun} twice (every column equal) is one error, two that
    disagree another, each naming both places and the key (its columns ``shown``, default ``keys``)."""
    text = df.reset_index(drop=True).astype(str)
    again = np.flatnonzero(text.groupby(keys, sort=False).cumcount().to_numpy() > 0)
    if not len(again):
        return
    i = int(again[0])
    row = text.iloc[i]
    j = int(np.flatnonzero((text[keys] == row[keys]).all(axis=1).to_numpy())[0])
    key = ", ".join(f"{k} {row[k]}" for k in shown or keys if row[k] != "")
    differ = [c for c in text.columns if text.iloc[j][c] != row[c]]
    if not differ:
        raise BenchcastError(f"{_at(places[i])}: duplicate {noun} (the same as {_ref(places[i], places[j])}: {key})")
    raise BenchcastError(f"{_at(places[i])}: conflicting duplicate of {_ref(places[i], places[j])} ({key}: "
                         f"{', '.join(f'{c} {text.iloc[j][c]} vs {row[c]}' for c in differ)})")


def _rows_checked(df: pd.DataFrame, places: list, keys: list[str], values: dict, known: dict) -> None:
    """The checks of one imported table, each error naming the file and the row's place: fields of
    known names (``known``: column -> allowed values), values above 0 (``values``, see
    :func:`_above_zero`), and no key (``keys``) given twice (:func:`_repeated`)."""
    _known_fields(df, places, known)
    _above_zero(df, places, values)
    _repeated(df, places, keys)


def _same_devices(fio: pd.DataFrame, fio_at: list, app: pd.DataFrame, app_at: list) -> None:
    """A device of one of the paper-shaped tables must be in the other (a device without figures or
    without results is no point of any regression)."""
    for df, places, other, other_at in ((fio, fio_at, app, app_at), (app, app_at, fio, fio_at)):
        missing = ~df["device"].isin(set(other["device"]))
        if missing.any():
            i = int(np.flatnonzero(missing.to_numpy())[0])
            raise BenchcastError(f"{_at(places[i])}: device {df['device'].iloc[i]!r} has no rows in {other_at[0][0]}")


def _known_devices(df: pd.DataFrame, places: list, devices) -> None:
    if devices is None:
        return
    bad = ~df["device"].isin(list(devices))
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise BenchcastError(f"{_at(places[i])}: unknown device {df['device'].iloc[i]!r} "
                             f"(study devices: {', '.join(devices)})")


def source_names(src: dict, devices=None) -> tuple[set, set] | None:
    """What an import source brings, for the checks of spec cards and of the report's focus before
    any job runs: (figures, series), figures as (workload, block size, metric) of its device
    figures, series as (benchmark, engine, workload, op or None: any) of its application results.
    Read by the import itself, its checks included (``devices``: the study's); None where it
    refuses a file: its own check (before any job, :mod:`benchcast.preflight`) then names it."""
    kind = src["type"]
    if kind == "ycsb_output":  # the outputs do not say what they measured: the config does
        return set(), {("ycsb", run["engine"], run["workload"], None) for run in src["runs"]}
    try:
        if kind == "soga2018":
            recs = soga2018(src["fio"], src["app"], "check", "check", src["benchmark"], devices)
        elif kind == "fio_json":
            recs = fio_json(src["files"], study="check", source="check")
        elif kind == "pkb":
            recs = pkb(src["files"], study="check", source="check", ycsb=src.get("ycsb"))
        else:
            recs = record_files(src["files"], "check", "check", devices=devices, rename=src.get("rename"))
    except (BenchcastError, OSError):
        return None
    fio = (recs["benchmark"] == "fio").to_numpy()
    figures = {(w, int(bs), m) for w, bs, m in recs.loc[fio, ["workload", "block_size", "metric"]].itertuples(index=False)}
    return figures, set(recs.loc[~fio, ["benchmark", "engine", "workload", "op"]].itertuples(index=False, name=None))


def soga2018(fio_csv, app_csv, study: str, source: str, benchmark: str, devices=None) -> pd.DataFrame:
    """Import the paper's published tables (already trimmed means, run = -1).

    ``fio_csv``: device, rw, bs, metric (lat_us | bw_MBps), value.
    ``app_csv``: engine, workload, device, data_gb, op, latency_us.
    ``devices``: the study's device ids; a row naming another device is an error.
    """
    fio_path, app_path = Path(fio_csv), Path(app_csv)
    fio = _read_csv(fio_path, ["device", "rw", "bs", "metric", "value"])
    _no_rows(fio, fio_path)
    fio_at = _line_places(fio, fio_path)
    _known_devices(fio, fio_at, devices)
    value = _numeric(fio, "value", fio_at)
    _known_fields(fio, fio_at, {"metric": SOGA_FIO_METRICS})
    bs = []
    for i, text in enumerate(fio["bs"]):
        try:
            bs.append(records.parse_size(text, what="bs"))
        except BenchcastError as exc:
            raise BenchcastError(f"{_at(fio_at[i])}: {exc}") from None
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
    _no_rows(app, app_path)
    app_at = _line_places(app, app_path)
    _known_devices(app, app_at, devices)
    data_gb = _numeric(app, "data_gb", app_at)
    lat = _numeric(app, "latency_us", app_at)
    _rows_checked(fio, fio_at, ["device", "rw", "bs", "metric"], {"value": None}, {"rw": [*RW_OP, *MIXED_RW]})
    _rows_checked(app, app_at, ["engine", "workload", "device", "data_gb", "op"],
                  {"data_gb": None, "latency_us": None}, {"workload": WORKLOADS, "op": APP_OPS})
    _same_devices(fio, fio_at, app, app_at)
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

    loaded = [(device, path, fiojson.load(path)) for device, spec in device_files.items()
              for path in input_files(spec, FILE_PATTERNS["fio_json"])]
    loaded = [(device, path, data) for device, path, data in loaded if not data.get("benchcast_skipped")]
    _fio_jobs_checked(loaded)
    frames, seen = [], {}
    for device, path, data in loaded:
        for keys, job in fiojson.file_cells(data, path):
            rows = fiojson.job_rows(job, path)
            if not rows:
                raise BenchcastError(f"{path}: fio job {job.get('jobname')} did no I/O")
            cell = (device, tuple(sorted(keys.items())))
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


def _fio_jobs_checked(loaded: list[tuple]) -> None:
    """The rows of fio JSON outputs are their jobs (``loaded``: device, file, its JSON), each named
    by file and ``jobs[K] (name)``: rw of fio's names, mean latencies, bandwidth and IOPS above 0,
    and no job given twice for a device (the same output imported twice is no repeat; the jobs of
    one cell in one file that differ are :func:`benchcast.fiojson.file_cells`' error)."""
    import hashlib
    import json

    from . import fiojson

    jobs, places, figures, figure_at = [], [], [], []
    for device, path, data in loaded:
        for k, job in enumerate(data["jobs"]):
            place = (str(path), f"jobs[{k}] ({job.get('jobname', '')})")
            keys = fiojson.job_keys(job, data.get("global options"), _at(place))
            digest = hashlib.sha256(json.dumps(job, sort_keys=True, default=str).encode()).hexdigest()
            jobs.append({"device": device, "rw": str(keys["workload"]).split(":")[0], "cell": keys["cell"],
                         "job": digest})
            places.append(place)
            for row in fiojson.job_rows(job, _at(place)) if not job.get("error") else ():
                figures.append(row)
                figure_at.append(place)
    if not jobs:
        return
    table = pd.DataFrame(jobs)
    _known_fields(table, places, {"rw": FIO_RW})
    _repeated(table, places, ["device", "job"], noun="job", shown=["device", "cell"])
    if figures:
        rows = pd.DataFrame(figures)
        _above_zero(rows, figure_at, {"value": rows["metric"].isin(POSITIVE_METRICS).to_numpy()})


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
    (origin_study, origin_source), and the file. Each row is checked with its file and line: a
    file of rows at all, fio rows of fio's rw names, mean latencies, bandwidths and rates above 0,
    and no record (its keys and run, as imported) given twice, in one file or two. One bad file
    stops the import, named."""
    frames, places = [], []
    for path in input_files(files, FILE_PATTERNS["records"]):
        text = records.read_text(path)
        _no_rows(text, path)
        at = _line_places(text, path)
        df = records.check(text, where=str(path), lines=[int(p[1][len("line "):]) for p in at])
        df = df.assign(origin_study=df["study"], origin_source=df["source"], study=study, source=source)
        if rename:
            df["device"] = df["device"].replace(rename)
        _known_devices(df, at, devices)
        frames.append(df)
        places += at
    df = pd.concat(frames, ignore_index=True)
    fio = (df["benchmark"] == "fio").to_numpy()
    _known_fields(df[fio], [p for p, f in zip(places, fio) if f], {"workload": FIO_RW})
    _above_zero(df, places, {"value": df["metric"].isin(POSITIVE_METRICS).to_numpy()})
    _repeated(df, places, [*records.KEY_COLUMNS, "run"], noun="record",
              shown=["device", "benchmark", "engine", "workload", "block_size", "data_size", "op", "metric",
                     "cell", "run"])
    df["file"] = [p[0] for p in places]
    return records.check(df, where=source)


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
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
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
    for got, at, keys, known in ((rows, places[0], ["cell", "op", "metric"], {"workload": FIO_RW}),
                                 (app, places[1], ["stage", "op", "metric", "from_summary"], {})):
        if got:
            df = pd.DataFrame(got)
            _known_fields(df, at, known)
            _above_zero(df, at, {"value": df["metric"].isin(POSITIVE_METRICS).to_numpy()})
            _repeated(df, at, list(df.columns), noun="sample", shown=["sample"])
            agree = ~df.duplicated([*keys, "value"]).to_numpy()
            _repeated(df[agree].drop(columns=["sample"]), [p for p, a in zip(at, agree) if a], keys)
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
