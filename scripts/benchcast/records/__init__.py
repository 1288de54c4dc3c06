"""The one tidy measurement record that every source writes and the analysis reads.

A record is one measured number: which study and source it came from, on which device, from which
benchmark (fio, ycsb, ...) with which engine and workload, at which block size, client threads and data
size, for which operation, as which metric in which unit, in which repeat (run).

Columns:

========== ======= ===========================================================================
study      str     the study (experiment) the record belongs to
source     str     where it came from: ``import:soga2018``, ``fio``, ``ycsb`` ...
device     str     the device measured (a device id of the study)
benchmark  str     ``fio``, ``ycsb``, ...
engine     str     fio ioengine, database engine (``rocksdb``, ``mariadb``, ``mysql``); may be ""
workload   str     fio rw (``randread``), YCSB workload (``write-only``, ``a``)
block_size int     bytes per I/O for fio; 0 where it does not apply
threads    int     client threads / fio numjobs x iodepth; 0 where unknown
iodepth    int     fio's iodepth (I/Os in flight per job); 0 where it does not apply
numjobs    int     fio's numjobs (jobs, each with iodepth in flight); 0 where it does not apply
data_size  int     bytes of data the benchmark works on (fio file size, YCSB data size); 0 if n/a
op         str     ``read``, ``write``, ``update``, ``insert``, ``overall`` ...
metric     str     ``lat_mean``, ``clat_p99``, ``bw``, ``iops``, ``throughput`` ...
unit       str     one per metric: latencies ``us``, bandwidths ``B/s``, rates ``ops/s`` (other units
                   are converted on every check); counts and YCSB runtime keep theirs
value      float   the number
cell       str     the setting measured beyond the other keys: a fio grid's cell id, an imported
                   fio job's options (:func:`benchcast.sources.parse.fiojson.cell_label`); "" where the other keys
                   say it all. Runs are repeats only where every key, ``cell`` included, is equal
run        int     repeat index, 0-based; -1 for data that was aggregated before import
========== ======= ===========================================================================

Record files written before ``iodepth``, ``numjobs`` and ``cell`` were keys read as: fio rows iodepth
= threads, numjobs 1 (so their feature names stay), other rows 0; ``cell`` as the file had it (a grid's
cell id) or "".

Any further column is provenance (fio version, kernel, mount options, grid cell ...): kept in the
record files, never used as a grouping key by the analysis.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import BenchcastError
from ..core import units
from ..core.units import parse_size, size_label  # noqa: F401  (re-exported)

KEY_COLUMNS = [
    "study",
    "source",
    "device",
    "benchmark",
    "engine",
    "workload",
    "block_size",
    "threads",
    "iodepth",
    "numjobs",
    "data_size",
    "op",
    "metric",
    "unit",
    "cell",
]
COLUMNS = KEY_COLUMNS + ["value", "run"]
INT_COLUMNS = ["block_size", "threads", "iodepth", "numjobs", "data_size", "run"]
STR_COLUMNS = [c for c in KEY_COLUMNS if c not in INT_COLUMNS]

#: The key columns tables written before them lack (:func:`fill_settings`).
SETTING_COLUMNS = ["iodepth", "numjobs", "cell"]
#: The columns that name one application result series (a screening target) apart from device.
SERIES_COLUMNS = ["benchmark", "engine", "workload", "threads", "data_size", "op", "metric", "unit"]
#: A family of series: a series without its workload, threads and data size (MariaDB read latency, swap passes).
FAMILY_COLUMNS = ["benchmark", "engine", "op", "metric", "unit"]
#: The columns that name one device figure (a candidate feature) apart from device.
FEATURE_COLUMNS = ["benchmark", "engine", "workload", "block_size", "threads", "op", "metric", "unit"]


def cv(std, mean):
    """Coefficient of variation std / |mean| (NaN where the mean is 0): the one definition, the ``cv``
    column of :func:`benchcast.aggregate.aggregate` and the repeat rule's (:mod:`benchcast.sources.run.repeats`)."""
    std, mean = np.asarray(std, dtype=float), np.asarray(mean, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mean != 0, std / np.abs(mean), np.nan)


def make(rows, **common) -> pd.DataFrame:
    """Build a checked record table from dicts (or a DataFrame) plus columns common to all rows."""
    df = pd.DataFrame(rows)
    for key, val in common.items():
        df[key] = val
    for col in ("engine",):
        if col not in df:
            df[col] = ""
    for col in ("block_size", "threads", "data_size"):
        if col not in df:
            df[col] = 0
    if "run" not in df:
        df["run"] = -1
    return check(df, where="records")


def fill_settings(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the setting columns a table written before them lacks (see the module doc)."""
    missing = [c for c in SETTING_COLUMNS if c not in df.columns]
    if not missing or "benchmark" not in df.columns or "threads" not in df.columns:
        return df
    df = df.copy()
    fio = (df["benchmark"] == "fio").to_numpy()
    if "iodepth" in missing:
        df["iodepth"] = np.where(fio, pd.to_numeric(df["threads"], errors="coerce").fillna(0), 0)
    if "numjobs" in missing:
        df["numjobs"] = np.where(fio, 1, 0)
    if "cell" in missing:
        df["cell"] = ""
    return df


def check(df: pd.DataFrame, where: str, lines=None) -> pd.DataFrame:
    """Check that ``df`` has the record shape; return it with canonical dtypes and column order.

    ``where`` names the table or file in error messages, ``lines`` (a file's rows: their own line
    numbers, or a function giving them, :func:`csv_lines`) the row as "line N"; without it a row is
    "row N" of the table. A table without ``iodepth``, ``numjobs`` or ``cell`` gets them
    (:func:`fill_settings`).
    """

    def at(i: int) -> str:
        if lines is None:
            return f"row {i + 1}"
        return f"line {(lines() if callable(lines) else lines)[i]}"

    df = fill_settings(df)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise BenchcastError(f"{where}: missing record column(s) {', '.join(missing)}")
    out = df.copy()
    for col in STR_COLUMNS:
        out[col] = out[col].fillna("").astype(str)
    for col in INT_COLUMNS + ["value"]:
        num = pd.to_numeric(out[col], errors="coerce")
        bad = num.isna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise BenchcastError(
                f"{where}: {at(i)}: column {col} is not a number: {out[col].iloc[i]!r}"
            )
        out[col] = num.astype("int64") if col in INT_COLUMNS else num.astype("float64")
    if not np.isfinite(out["value"].to_numpy()).all():
        i = int(np.flatnonzero(~np.isfinite(out["value"].to_numpy()))[0])
        raise BenchcastError(f"{where}: {at(i)}: value is not finite: {out['value'].iloc[i]}")
    if (out["value"].to_numpy() < 0).any():  # latencies, bandwidths, rates and counts
        i = int(np.flatnonzero(out["value"].to_numpy() < 0)[0])
        raise BenchcastError(f"{where}: {at(i)}: value is negative: {out['value'].iloc[i]}")
    _to_canonical_units(out)
    extra = [c for c in out.columns if c not in COLUMNS]
    return out[COLUMNS + extra].reset_index(drop=True)


def _to_canonical_units(df: pd.DataFrame) -> None:
    """Express every latency, bandwidth and rate in its canonical unit (us, B/s, ops/s), in place:
    one unit per metric whatever the source wrote (the paper's MB/s, PKB's ms)."""
    if df.empty:
        return
    pairs = df[["metric", "unit"]].drop_duplicates().itertuples(index=False, name=None)
    factors = units.canonical_factors(list(pairs))
    for (metric, unit), (factor, target) in factors.items():
        hit = ((df["metric"] == metric) & (df["unit"] == unit)).to_numpy()
        df.loc[hit, "value"] = df.loc[hit, "value"] * factor
        df.loc[hit, "unit"] = target


def read(path) -> pd.DataFrame:
    """Read a record CSV written by :func:`write`; errors name the file and line."""
    df = read_text(path)
    return check(df, where=str(path), lines=lambda: csv_lines(path, len(df)))


def read_text(path) -> pd.DataFrame:
    """A record CSV as written, every column as text (:func:`check` makes the numbers; provenance
    stays as written: "6.10", "0"), unchecked."""
    path = Path(path)
    try:
        df = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=str)
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such record file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise BenchcastError(f"{path}: not a record CSV ({str(exc).splitlines()[0]})") from None
    return df


def csv_lines(path, rows: int) -> list[int]:
    """The line of the file on which each of a CSV file's ``rows`` starts (the header is line 1;
    blank lines, which a table skips, are counted; a quoted field may span lines). Where the file
    does not read as that many rows, row i is taken for line i + 2."""
    import csv

    starts, end = [], 0
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as fh:
            reader = csv.reader(fh)
            for fields in reader:
                if fields:
                    starts.append(end + 1)
                end = reader.line_num
    except (OSError, csv.Error):
        starts = []
    return starts[1:] if len(starts) == rows + 1 else [i + 2 for i in range(rows)]


def read_many(paths) -> pd.DataFrame:
    frames = [read(p) for p in paths]
    if not frames:
        return check(pd.DataFrame(columns=COLUMNS), where="records")
    return check(pd.concat(frames, ignore_index=True), where="records")


def write(df: pd.DataFrame, path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check(df, where=str(path)).to_csv(path, index=False)


def _moved(path, part: Path, final) -> str:
    """``path`` (a file under the temporary folder ``part``) as it will be under ``final``."""
    try:
        return str(Path(final) / Path(str(path)).relative_to(part))
    except ValueError:
        return path


def write_job(df: pd.DataFrame, job: dict, source: str, provenance: dict) -> None:
    """The end of a measuring job (``job``: its ``records`` file and ``raw`` folder): the records,
    labelled with their ``source`` and the device's ``provenance``, written under a temporary name,
    then the raw folder and the records renamed into place, so that a result is whole or absent."""
    from ..core import protect

    df = df.assign(source=source)
    for key, val in provenance.items():
        df[key] = val
    if "raw" in df.columns:  # each raw file where it ends up, not under its temporary name
        part = protect.atomic_path(job["raw"]).resolve()
        df["raw"] = [_moved(v, part, job["raw"]) for v in df["raw"]]
    write(df, protect.atomic_path(job["records"]))
    protect.commit(job["raw"])
    protect.commit(job["records"])
