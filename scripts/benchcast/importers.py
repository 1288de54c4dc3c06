"""Importers: existing results (the paper's tables, later other tools') into tidy records."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import BenchcastError, records
from .workloads import RW_OP

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


def soga2018(fio_csv, app_csv, study: str, source: str, devices=None, benchmark: str = "ycsb") -> pd.DataFrame:
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
    app_rec = pd.DataFrame(
        {
            "device": app["device"],
            "benchmark": benchmark,
            "engine": app["engine"],
            "workload": app["workload"],
            "block_size": 0,
            "threads": 0,
            "data_size": (data_gb * 1e9).round().astype("int64"),
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
