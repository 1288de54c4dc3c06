"""The checks of every imported row, each error one line naming the file and the row's place:
(file, where in it), "line N" of a CSV or JSON-lines file (its own line, the header is line 1),
"jobs[K] (name)" of a fio JSON output, "runs[K]" of a config entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ... import BenchcastError, records
from ...core.workloads import RW_OP

#: fio's mixed rw values (their records name the op).
MIXED_RW = ("rw", "readwrite", "randrw")

#: fio's rw values (fio refuses others); an imported fio job or record of another is an error.
FIO_RW = (*RW_OP, *MIXED_RW, "trim", "randtrim", "trimwrite", "randtrimwrite")
#: The largest value an imported row may hold: a least-squares fit squares it (1e300 made the fits
#: of its figure NaN, and the figure dropped out of the screening without a word).
LARGEST = 1e150
#: Metrics no run can measure as 0: mean latencies, bandwidths and rates.
POSITIVE_METRICS = ("lat_mean", "clat_mean", "bw", "iops", "throughput")


def at(place: tuple) -> str:
    return f"{place[0]}: {place[1]}"


def ref(place: tuple, other: tuple) -> str:
    """``other`` as seen from ``place``: its line alone in the same file, else file and line."""
    return other[1] if other[0] == place[0] else at(other)


def line_places(df: pd.DataFrame, path: Path) -> list[tuple]:
    """The place of each row of a CSV file: its own line (:func:`benchcast.records.csv_lines`)."""
    return [(str(path), f"line {n}") for n in records.csv_lines(path, len(df))]


def no_rows(df: pd.DataFrame, path: Path) -> None:
    if df.empty:
        raise BenchcastError(f"{path}: no rows (only a header)")


def known_fields(df: pd.DataFrame, places: list, known: dict) -> None:
    """Fields of known names only (``known``: column -> allowed values)."""
    for col, allowed in known.items():
        bad = ~df[col].astype(str).isin(list(allowed))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise BenchcastError(f"{at(places[i])}: unknown {col} {df[col].iloc[i]!r} "
                                 f"(known: {', '.join(sorted(allowed))})")


def above_zero(df: pd.DataFrame, places: list, values: dict) -> None:
    """Finite numbers, none negative, in each column of ``values`` (column -> the rows, a boolean
    mask, that must be above 0: latencies, bandwidths, sizes; None: every row)."""
    for col, rows in values.items():
        num = pd.to_numeric(df[col].astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
        need = np.ones(len(num), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
        bad = ~np.isfinite(num) | (num < 0) | (need & (num == 0)) | (num > LARGEST)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = ("not finite" if not np.isfinite(num[i]) else "negative" if num[i] < 0 else "zero" if num[i] == 0
                    else "more than a fit can square")
            must = (f"at most {LARGEST:g}" if LARGEST < num[i] < np.inf else "above 0" if need[i]
                    else "a finite number, not negative")
            if {"op", "metric"} <= set(df.columns):  # record rows: say which figure
                must = f"{df['op'].iloc[i]} {df['metric'].iloc[i]}: it must be {must}"
            else:
                must = f"it must be {must}"
            raise BenchcastError(f"{at(places[i])}: column {col}: value is {what}: {df[col].iloc[i]} ({must})")


def repeated(df: pd.DataFrame, places: list, keys: list[str], noun: str = "row", shown=None) -> None:
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
        raise BenchcastError(f"{at(places[i])}: duplicate {noun} (the same as {ref(places[i], places[j])}: {key})")
    raise BenchcastError(f"{at(places[i])}: conflicting duplicate of {ref(places[i], places[j])} ({key}: "
                         f"{', '.join(f'{c} {text.iloc[j][c]} vs {row[c]}' for c in differ)})")


def rows_checked(df: pd.DataFrame, places: list, keys: list[str], values: dict, known: dict) -> None:
    """The checks of one imported table, each error naming the file and the row's place: fields of
    known names (``known``: column -> allowed values), values above 0 (``values``, see
    :func:`above_zero`), and no key (``keys``) given twice (:func:`repeated`)."""
    known_fields(df, places, known)
    above_zero(df, places, values)
    repeated(df, places, keys)


def same_devices(fio: pd.DataFrame, fio_at: list, app: pd.DataFrame, app_at: list) -> None:
    """A device of one of the paper-shaped tables must be in the other (a device without figures or
    without results is no point of any regression)."""
    for df, places, other, other_at in ((fio, fio_at, app, app_at), (app, app_at, fio, fio_at)):
        missing = ~df["device"].isin(set(other["device"]))
        if missing.any():
            i = int(np.flatnonzero(missing.to_numpy())[0])
            raise BenchcastError(f"{at(places[i])}: device {df['device'].iloc[i]!r} has no rows in {other_at[0][0]}")


def known_devices(df: pd.DataFrame, places: list, devices) -> None:
    if devices is None:
        return
    bad = ~df["device"].isin(list(devices))
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise BenchcastError(f"{at(places[i])}: unknown device {df['device'].iloc[i]!r} "
                             f"(study devices: {', '.join(devices)})")
