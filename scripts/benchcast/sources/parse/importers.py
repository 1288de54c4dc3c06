"""Importers: existing results (the paper's tables, fio JSON, benchcast's own records, YCSB outputs)
into tidy records; PerfKitBenchmarker's samples are :mod:`benchcast.sources.parse.pkb`'s, the checks of every
imported row :mod:`benchcast.sources.parse.importchecks`'."""

from __future__ import annotations

import glob
import hashlib
import re
from pathlib import Path

import pandas as pd

from ... import BenchcastError, records
from ...core import units
from . import importchecks as chk
from .importchecks import MIXED_RW
from ...core.workloads import RW_OP, WORKLOADS

#: The ops of the paper's application table.
APP_OPS = ("read", "write", "update", "insert", "scan", "readmodifywrite", "overall")

#: The paper's fio metric names -> (record metric, unit).
SOGA_FIO_METRICS = {"lat_us": ("lat_mean", "us"), "bw_MBps": ("bw", "MB/s")}


def _read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BenchcastError(f"{path}: a folder, not a CSV file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if fields:  # a row longer than the header: its file line (pandas counts as the file does)
            want, line, got = fields.groups()
            raise BenchcastError(f"{path}: line {line}: {got} fields where the header has {want}") from None
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
        raise BenchcastError(f"{chk.at(places[i])}: column {col} is not a number: {df[col].iloc[i]!r}")
    return num



def soga2018(fio_csv, app_csv, study: str, source: str, benchmark: str, devices=None) -> pd.DataFrame:
    """Import the paper's published tables (already trimmed means, run = -1).

    ``fio_csv``: device, rw, bs, metric (lat_us | bw_MBps), value.
    ``app_csv``: engine, workload, device, data_gb, op, latency_us.
    ``devices``: the study's device ids; a row naming another device is an error.
    """
    fio_path, app_path = Path(fio_csv), Path(app_csv)
    fio = _read_csv(fio_path, ["device", "rw", "bs", "metric", "value"])
    chk.no_rows(fio, fio_path)
    fio_at = chk.line_places(fio, fio_path)
    chk.known_devices(fio, fio_at, devices)
    value = _numeric(fio, "value", fio_at)
    chk.known_fields(fio, fio_at, {"metric": SOGA_FIO_METRICS})
    bs = []
    for i, text in enumerate(fio["bs"]):
        try:
            bs.append(records.parse_size(text, what="bs"))
        except BenchcastError as exc:
            raise BenchcastError(f"{chk.at(fio_at[i])}: {exc}") from None
        if bs[-1] <= 0:  # no fio job moves 0 bytes a request
            raise BenchcastError(f"{chk.at(fio_at[i])}: bs: {text!r} is not a size above 0")
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
    chk.no_rows(app, app_path)
    app_at = chk.line_places(app, app_path)
    chk.known_devices(app, app_at, devices)
    data_gb = _numeric(app, "data_gb", app_at)
    lat = _numeric(app, "latency_us", app_at)
    chk.rows_checked(fio, fio_at, ["device", "rw", "bs", "metric"], {"value": None}, {"rw": [*RW_OP, *MIXED_RW]})
    chk.rows_checked(app, app_at, ["engine", "workload", "device", "data_gb", "op"],
                  {"data_gb": None, "latency_us": None}, {"workload": WORKLOADS, "op": APP_OPS})
    chk.same_devices(fio, fio_at, app, app_at)
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
    never from the file name: every option that shapes the measurement (:func:`benchcast.sources.parse.fiojson.cell_label`:
    rw, bs, iodepth, numjobs, ioengine, direct, rwmixread, fsync, size ...) is part of it, and the
    cell column holds them. Files of the same cell on one device are repeats (run 0, 1, ... in file
    order); files that differ in any of those options are separate cells. The jobs of a job with
    numjobs > 1 that fio reported one by one (no group_reporting) are merged into one
    (:func:`benchcast.sources.parse.fiojson.merge_jobs`). Provenance: file, fio_version, jobname. A file that is not
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
    one cell in one file that differ are :func:`benchcast.sources.parse.fiojson.file_cells`' error)."""
    import hashlib
    import json

    from . import fiojson

    jobs, places, figures, figure_at = [], [], [], []
    for device, path, data in loaded:
        for k, job in enumerate(data["jobs"]):
            place = (str(path), f"jobs[{k}] ({job.get('jobname', '')})")
            keys = fiojson.job_keys(job, data.get("global options"), chk.at(place))
            digest = hashlib.sha256(json.dumps(job, sort_keys=True, default=str).encode()).hexdigest()
            jobs.append({"device": device, "rw": str(keys["workload"]).split(":")[0], "cell": keys["cell"],
                         "job": digest})
            places.append(place)
            for row in fiojson.job_rows(job, chk.at(place)) if not job.get("error") else ():
                figures.append(row)
                figure_at.append(place)
    if not jobs:
        return
    table = pd.DataFrame(jobs)
    chk.known_fields(table, places, {"rw": chk.FIO_RW})
    chk.repeated(table, places, ["device", "job"], noun="job", shown=["device", "cell"])
    if figures:
        rows = pd.DataFrame(figures)
        chk.above_zero(rows, figure_at, {"value": rows["metric"].isin(chk.POSITIVE_METRICS).to_numpy()})


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
    file of rows at all, fio rows of fio's rw names, YCSB rows of its workloads, mean latencies, bandwidths and rates above 0,
    and no record (its keys and run, as imported) given twice, in one file or two. One bad file
    stops the import, named."""
    frames, places = [], []
    for path in input_files(files, FILE_PATTERNS["records"]):
        text = records.read_text(path)
        chk.no_rows(text, path)
        at = chk.line_places(text, path)
        df = records.check(text, where=str(path), lines=[int(p[1][len("line "):]) for p in at])
        df = df.assign(origin_study=df["study"], origin_source=df["source"], study=study, source=source)
        if rename:
            df["device"] = df["device"].replace(rename)
        chk.known_devices(df, at, devices)
        frames.append(df)
        places += at
    df = pd.concat(frames, ignore_index=True)
    fio = (df["benchmark"] == "fio").to_numpy()
    chk.known_fields(df[fio], [p for p, f in zip(places, fio) if f], {"workload": chk.FIO_RW})
    ycsb = (df["benchmark"] == "ycsb").to_numpy()  # a YCSB workload that exists (or the load phase)
    chk.known_fields(df[ycsb], [p for p, f in zip(places, ycsb) if f], {"workload": [*WORKLOADS, "load"]})
    chk.above_zero(df, places, {"value": df["metric"].isin(chk.POSITIVE_METRICS).to_numpy()})
    chk.repeated(df, places, [*records.KEY_COLUMNS, "run"], noun="record",
              shown=["device", "benchmark", "engine", "workload", "block_size", "data_size", "op", "metric",
                     "cell", "run"])
    df["file"] = [p[0] for p in places]
    return records.check(df, where=source)


# --------------------------------------------------------------------------------------------
# YCSB outputs made elsewhere (text exporter or JSON exporters)
# --------------------------------------------------------------------------------------------


def ycsb_output_files(spec) -> list[Path]:
    """The YCSB outputs of an entry (:func:`input_files`), without YCSB's histogram logs (``*.hdr``):
    those are read with the output they sit beside (:func:`benchcast.sources.parse.ycsbout.histogram_logs`)."""
    files = [p for p in input_files(spec, FILE_PATTERNS["ycsb_output"]) if p.suffix != ".hdr"]
    if not files:
        raise BenchcastError(f"{spec}: only histogram logs, no YCSB output")
    return files


def _distinct_outputs(paths) -> None:
    """Two runs never write the same bytes (their timings differ): a file that is a byte-for-byte
    copy of another is one run imported twice, refused naming both (not counted as a repeat)."""
    first: dict = {}
    for path in paths:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        if digest in first:
            raise BenchcastError(f"{path}: the same bytes as {first[digest]}: one YCSB run imported twice "
                                 f"(a copy is no repeat); remove the copy")
        first[digest] = path


def ycsb_output(runs, study: str, source: str, devices=None, key: str | None = None) -> pd.DataFrame:
    """Records from YCSB measurement outputs (the text exporter, or JSONArrayMeasurementsExporter /
    JSONMeasurementsExporter). ``runs``: entries {files, device, engine, workload, data_size[,
    threads]} saying what each set of outputs measured (YCSB's output does not say it); the files of
    an entry (a folder, glob, file or list, :func:`input_files`) are its repeats, run 0, 1, ... in
    file order (entries of the same device, engine, workload, data size and threads: more repeats).
    YCSB's histogram logs of an output, ``<output stem>.<OP>.hdr`` beside it (YCSB run with
    ``hdrhistogram.fileoutput=true`` and ``hdrhistogram.output.path=<output stem>.``), are read with
    it, so that the repeats' percentiles are merged.

    Each entry is checked with its key (``key``: the source's config key, else ``source``): a device
    of the study (``devices``), and no output of two entries (the same run twice: one error when the
    entries say the same of it, another when they disagree). Then every line of every output, with
    the file and its own line (:func:`benchcast.sources.parse.ycsbout.parse_text`). A file with failed operations,
    or no measurement, stops the import, named."""
    from . import ycsbout

    entries, seen = [], {}
    for i, entry in enumerate(runs):
        where = f"{key}.runs[{i}]" if key else f"{source}: runs[{i}]"
        if devices is not None and entry["device"] not in devices:
            raise BenchcastError(f"{where}: unknown device {entry['device']!r} (study devices: {', '.join(devices)})")
        said = {"device": entry["device"], "engine": entry["engine"], "workload": entry["workload"],
                "data_size": records.parse_size(entry["data_size"], what=f"{where}.data_size"),
                "threads": int(entry["threads"])}
        for path in ycsb_output_files(entry["files"]):
            real = path.resolve()
            if real in seen:
                j, was = seen[real]
                differ = [f"{k} {was[k]} vs {said[k]}" for k in said if was[k] != said[k]]
                if not differ:
                    raise BenchcastError(f"{where}: duplicate run (the same as runs[{j}]: {path})")
                raise BenchcastError(f"{where}: conflicting duplicate of runs[{j}] ({path}: {', '.join(differ)})")
            seen[real] = (i, said)
            entries.append((path, said))
    _distinct_outputs([path for path, _ in entries])
    frames, repeats = [], {}
    for path, said in entries:
        cell = tuple(said.values())
        run = repeats[cell] = repeats.get(cell, -1) + 1
        frames.append(ycsbout.parse(path, study=study, source=source, run=run, file=str(path), **said))
    return records.check(pd.concat(frames, ignore_index=True), where=source)
