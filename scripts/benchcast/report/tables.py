"""Reading the analysis outputs back, and the report's tables: the paper's Tables 8-14 and the
validity tables (held-out coverage, refusals, target intervals)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import BenchcastError, records
from ..core.vocabulary import OOC_BENCHMARK, OOC_REFERENCE_MODE
from ..records.blockio import memory_of
from ..features import FEATURE_BENCHMARK
from ..core.units import size_label

STRINGS = {c: str for c in records.STR_COLUMNS + ["feature", "target", "choice", "kind", "feature_workload",
                                                   "feature_op", "feature_metric", "feature_unit", "setting"]}


def read_table(path, required=()) -> pd.DataFrame:
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=STRINGS, keep_default_na=False, na_values={"a": [""], "value": [""]})
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise BenchcastError(f"{path}: not a CSV table ({str(exc).splitlines()[0]})") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise BenchcastError(f"{path}: missing column(s) {', '.join(missing)}")
    for col in df.columns:
        if col not in STRINGS and (df[col].dtype == object or pd.api.types.is_string_dtype(df[col])):
            vals = set(df[col].unique())
            if vals <= {"True", "False", ""}:  # booleans with missing values (e.g. interval coverage)
                df[col] = df[col].map({"True": True, "False": False, "": np.nan})
                continue
            num = pd.to_numeric(df[col].replace("", np.nan), errors="coerce")
            if num.notna().sum() == (df[col] != "").sum():
                df[col] = num
    return df


def significant(values, digits: int = 6) -> np.ndarray:
    """Floats rounded to ``digits`` significant digits (NaN and infinities kept)."""
    fmt = f"{{:.{digits}g}}".format
    return np.array([float(fmt(v)) for v in np.asarray(values, dtype=float)])


def write_report_table(df: pd.DataFrame, path, digits: int = 6) -> None:
    """Write a report table as CSV, floats to ``digits`` significant digits, written plainly
    (22355100.0, not 2.23551e+07): a large study's tables are embedded in the report;
    aggregated.csv keeps every digit."""
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = significant(out[c].to_numpy(), digits)
    out.to_csv(path, index=False)


def read_aggregated(path) -> pd.DataFrame:
    """An aggregated table; one written before iodepth, numjobs and cell were keys (another tree's,
    for a comparison) gets them (:func:`benchcast.records.fill_settings`)."""
    required = [c for c in records.KEY_COLUMNS if c not in records.SETTING_COLUMNS]
    return records.fill_settings(read_table(path, required + ["value", "n"]))


def read_screen(path) -> pd.DataFrame:
    return read_table(path, records.SERIES_COLUMNS + ["feature", "a", "b", "r2", "rank"])


def read_predictions(path) -> pd.DataFrame:
    return read_table(path, ["target"] + records.SERIES_COLUMNS + ["feature", "value"])


def select(df: pd.DataFrame, focus: dict) -> pd.DataFrame:
    """Rows matching every key of ``focus`` (record fields)."""
    mask = np.ones(len(df), dtype=bool)
    for key, val in (focus or {}).items():
        mask &= df[key].astype(str).to_numpy() == str(val)
    return df[mask]


def default_focus(best: pd.DataFrame, focus: dict | None) -> dict:
    """The configured focus, completed from the first series that matches it."""
    if best.empty:
        raise BenchcastError("report: no result series was screened (each needs results on screen.min_devices "
                             "devices), so there is no focus to chart")
    sel = select(best, focus or {})
    if sel.empty:
        raise BenchcastError(f"report.focus: no result series matches {focus}")
    first = sel.iloc[0]
    return {k: first[k] for k in ("benchmark", "engine", "workload", "op", "metric")}


def _gb(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.insert(list(df.columns).index("data_size"), "data_size_gb", df["data_size"] / 1e9)
    return df.drop(columns="data_size")


def focus_size(screened: pd.DataFrame, focus: dict, size) -> int:
    sizes = sorted(select(screened, focus)["data_size"].unique())
    if size is None:
        return int(sizes[len(sizes) // 2])
    want = records.parse_size(size, what="report.focus_data_size")
    if want not in sizes:
        raise BenchcastError(
            f"report.focus_data_size: {size} was not measured for {focus} "
            f"(sizes: {', '.join(size_label(s, decimal=True) for s in sizes)})"
        )
    return want


def table08(screened: pd.DataFrame, focus: dict, size) -> pd.DataFrame:
    """R^2 of every candidate feature for one series (paper Table 8)."""
    sel = select(screened, focus)
    sel = sel[sel["data_size"] == focus_size(screened, focus, size)]
    cols = ["benchmark", "engine", "workload", "data_size", "op", "metric", "feature", "r2", "a", "b", "n", "rank"]
    return _gb(sel[cols]).reset_index(drop=True)


def table09_10(best: pd.DataFrame) -> pd.DataFrame:
    """Best feature and its R^2 for every series (paper Tables 9 and 10)."""
    cols = ["benchmark", "engine", "workload", "threads", "data_size", "op", "metric", "feature", "r2", "a", "b", "n"]
    out = best[cols].sort_values(["benchmark", "engine", "op", "workload", "data_size"], kind="mergesort")
    return _gb(out).reset_index(drop=True)


def table11(best: pd.DataFrame) -> pd.DataFrame:
    """Mean of the best R^2 per engine and op (paper Table 11)."""
    g = best.groupby(["benchmark", "engine", "op", "metric"], sort=True)["r2"]
    return g.agg(mean_best_r2="mean", series="size", fitted="count").reset_index()


def table12(pred: pd.DataFrame, focus: dict) -> pd.DataFrame:
    """a, b and predictions per data size for the hypothetical devices (paper Table 12)."""
    sel = select(pred, focus)
    cols = ["data_size", "target", "feature", "choice", "a", "b", "r2", "x", "value", "outside_range"]
    out = sel[cols].rename(columns={"value": "prediction", "x": "spec_value"})
    return _gb(out.sort_values(["data_size"], kind="mergesort")).reset_index(drop=True)


def table13(points: pd.DataFrame, focus: dict) -> pd.DataFrame:
    """Extrapolated results at data sizes never run, one column per device (paper Table 13)."""
    sel = select(points, focus)
    if sel.empty:
        return pd.DataFrame(columns=["data_size_gb", "beyond_2x"])
    order = list(dict.fromkeys(list(sel.loc[sel["kind"] == "target", "device"]) + list(sel["device"])))
    # a refused value (NaN, see benchcast.fits.positive) keeps its device's column, empty
    wide = sel.pivot_table(index="data_size", columns="device", values="value", aggfunc="first", dropna=False)
    wide = wide.reindex(columns=order)
    wide.columns.name = None
    flag = sel.groupby("data_size")["beyond_2x"].any().rename("beyond_2x")
    wide = wide.join(flag).reset_index()
    return _gb(wide)


def table14(fits: pd.DataFrame, focus: dict) -> pd.DataFrame:
    """R^2 of the data-size regression per device, measured and hypothetical (paper Table 14)."""
    sel = select(fits, focus)
    cols = ["device", "kind", "r2", "a", "b", "n", "size_min", "size_max"]
    return sel[cols].reset_index(drop=True)


def series_aggregation(agg: pd.DataFrame) -> pd.DataFrame:
    """How each series' values were aggregated over repeats (the ``aggregation`` column of
    :func:`benchcast.aggregate.aggregate`): one label, or the labels found joined by " + " when the
    devices differ (some devices' runs kept histograms, others did not)."""
    keys = records.SERIES_COLUMNS
    if "aggregation" not in agg:
        return pd.DataFrame(columns=keys + ["aggregation"])
    out = agg.groupby(keys, sort=False)["aggregation"].agg(lambda s: " + ".join(sorted(set(s))))
    return out.reset_index()


def validity_verdicts(verdicts: pd.DataFrame, agg: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict per series (:func:`benchcast.validation.verdicts.verdicts`), data size in GB,
    MAPEs rounded to 0.1 %; with the aggregated table, which aggregation the series' values had
    (trimmed mean, or percentiles of merged histograms), after the unit."""
    if agg is not None:
        how = series_aggregation(agg)
        verdicts = verdicts.merge(how, on=records.SERIES_COLUMNS, how="left")
        verdicts.insert(verdicts.columns.get_loc("unit") + 1, "aggregation",
                        verdicts.pop("aggregation").fillna(""))
    out = _gb(verdicts).drop(columns="series")
    for c in ("interior_mape", "interior_baseline_mape", "baseline_mape", "extreme_mape",
              "extreme_baseline_mape", "multiple_interior_mape", "interior_floor_mape"):
        out[c] = out[c].astype(float).round(1)
    out["spread"] = out["spread"].astype(float).round(2)
    return out.reset_index(drop=True)


def validity_tiers(tier_table: pd.DataFrame, labels=None) -> pd.DataFrame:
    """Held-out percent error per tier and series (:func:`benchcast.validation.verdicts.tiers`):
    interior tiers first, extreme tiers marked, percent errors and the truth's CV and standard error
    rounded to 0.1 %."""
    out = _gb(tier_table).drop(columns="series")
    out.insert(out.columns.get_loc("held_out") + 1, "label", out["held_out"].map(dict(labels or {})).fillna(""))
    for c in [c for c in out.columns if c.endswith("_pct_error") or c in ("truth_cv_pct", "truth_se_pct")]:
        out[c] = out[c].astype(float).round(1)
    return out.reset_index(drop=True)


def validity_data_size(summary: pd.DataFrame) -> pd.DataFrame:
    """The data-size validation (:func:`benchcast.screening.sizes.summarise`) as a report table: sizes in GB,
    MAPEs rounded to 0.1 %, the size hold-out before the two-stage chain."""
    out = summary.copy()
    out.insert(out.columns.get_loc("held_out_size"), "held_out_gb", out.pop("held_out_size") / 1e9)
    out.insert(out.columns.get_loc("memory"), "memory_gb", out.pop("memory").astype(float) / 1e9)
    for c in [c for c in out.columns if c.endswith("mape")]:
        out[c] = out[c].astype(float).round(1)
    out["_k"] = (out["kind"] != "size").astype(int)
    return out.sort_values("_k", kind="mergesort").drop(columns="_k").reset_index(drop=True)


def validity_coverage(chosen: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per benchmark and model kind: held-out MAPE and median absolute percent error (one absurd
    extrapolation of a three-device series moves the mean, not the median), and how often the
    held-out truth fell inside the interval."""
    rows = []
    for bench, part in chosen.groupby("benchmark"):
        for kind, df in part.groupby("kind", sort=False):
            has = df["covered"].notna()
            n = int(has.sum())
            ape = df["pct_error"].abs()
            rows.append(
                {
                    "benchmark": bench,
                    "model": kind,
                    "nominal_level": level,
                    "held_out_predictions": len(df),
                    "with_interval": n,
                    "coverage": float(df.loc[has, "covered"].astype(bool).mean()) if n else np.nan,
                    "mape": float(ape.mean()),
                    "median_ape": float(ape.median()),
                }
            )
    return pd.DataFrame(rows, columns=["benchmark", "model", "nominal_level", "held_out_predictions",
                                       "with_interval", "coverage", "mape", "median_ape"])


def validity_refusals(refusals: pd.DataFrame) -> pd.DataFrame:
    """Models refused, counted per pool, number of device figures and reason."""
    cols = ["pool", "n_figures", "n_devices", "reason"]
    if refusals.empty:
        return pd.DataFrame(columns=cols + ["models"])
    return refusals.groupby(cols, sort=True).size().rename("models").reset_index()


def validity_intervals(preds: pd.DataFrame) -> pd.DataFrame:
    """Target predictions with intervals and extrapolation flags, one row per model and setting."""
    cols = ["kind", "choice", "target", "benchmark", "engine", "workload", "op", "metric", "unit", "threads",
            "data_size", "features", "prediction", "lower", "upper", "interval_flag", "feature_out_of_range",
            "data_size_extrapolated", "extrapolation"]
    out = _gb(preds[[c for c in cols if c in preds.columns]])
    return out.sort_values(["kind", "choice", "target", "engine", "workload", "op",
                                                      "data_size_gb"], kind="mergesort").reset_index(drop=True)


def ooc_relative(agg: pd.DataFrame, limits: dict) -> pd.DataFrame:
    """Out-of-core runs relative to the in-memory baseline (the paper's Figures 5 and 6): per
    device, mode (swap, mmap), kernel and working set, the mean pass time, the same device's
    ``memory`` mode pass time at that working set, their ratio (``relative``), and the working set
    over the memory limit (``ratio``; ``limits``: record source -> limit in bytes, as
    :func:`benchcast.config.settings.memory_lines` gives them)."""
    cols = ["source", "device", "engine", "workload", "data_size", "ratio", "value", "cv", "n", "memory_value",
            "relative"]
    runs = agg[(agg["benchmark"] == OOC_BENCHMARK) & (agg["op"] == "pass") & (agg["metric"] == "lat_mean")]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    keys = ["source", "device", "workload", "data_size"]
    base = runs[runs["engine"] == OOC_REFERENCE_MODE][keys + ["value"]].rename(columns={"value": "memory_value"})
    out = runs[runs["engine"] != OOC_REFERENCE_MODE].merge(base, on=keys, how="left")
    out["ratio"] = out["data_size"] / out["source"].map(lambda s: float(limits.get(s, np.nan)))
    out["relative"] = out["value"] / out["memory_value"]
    return out[cols].sort_values(["source", "device", "engine", "workload", "data_size"],
                                 kind="mergesort").reset_index(drop=True)


NOISE_COLUMNS = ["source", "device", "benchmark", "engine", "workload", "block_size", "threads", "iodepth", "numjobs",
                 "data_size", "op", "metric", "unit", "value", "n", "cv", "min", "max", "cell"]


def noisy_cells(agg: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Cells whose repeats spread more than ``threshold`` (coefficient of variation, std / mean),
    noisiest first; cells run once have no CV and are never listed."""
    cv = pd.to_numeric(agg["cv"], errors="coerce") if "cv" in agg else pd.Series(np.nan, index=agg.index)
    out = agg[(agg["n"] >= 2) & (cv > threshold)]
    out = out[[c for c in NOISE_COLUMNS if c in out.columns]]
    return out.sort_values(["cv", "benchmark", "device"], ascending=[False, True, True],
                           kind="mergesort").reset_index(drop=True)


#: The columns of :func:`machine_speed`.
SPEED_COLUMNS = ["device", "cells", "relative_time", "min", "max"]


def machine_speed(agg: pd.DataFrame) -> pd.DataFrame:
    """How fast the machine itself was while each device was measured, timed by the
    out-of-core programs' in-memory reference runs (the same arithmetic on every device, no device
    I/O): per device, the median over the program x working-set cells of the reference run's
    trimmed mean relative to that cell's median over the devices (1 = typical, 1.1 = the same work
    took 10 % longer), with its smallest and largest value. Empty without reference runs."""
    ref = agg[(agg["benchmark"] == OOC_BENCHMARK) & (agg["engine"] == OOC_REFERENCE_MODE)
              & (agg["metric"] == "lat_mean")]
    cells = ref.pivot_table(index=["workload", "data_size", "threads", "op"], columns="device",
                            values="value", aggfunc="first")
    cells = cells[cells.count(axis=1) >= 2]
    if cells.empty:
        return pd.DataFrame(columns=SPEED_COLUMNS)
    rel = cells.div(cells.median(axis=1), axis=0)
    out = pd.DataFrame({"cells": rel.count(), "relative_time": rel.median(), "min": rel.min(), "max": rel.max()})
    out = out[out["cells"] > 0].rename_axis("device").reset_index()
    out["cells"] = out["cells"].astype(int)
    return out[SPEED_COLUMNS].sort_values("device", kind="mergesort").reset_index(drop=True)


#: What the application overview shows: throughput, and mean and tail latency.
APP_METRICS = ("throughput", "lat_mean", "lat_p95", "lat_p99")
APP_COLUMNS = ["benchmark", "engine", "workload", "data_size", "threads", "op", "metric", "unit", "device", "value",
               "n", "cv", "min", "max"]


def app_overview(agg: pd.DataFrame, metrics=APP_METRICS) -> pd.DataFrame:
    """The application results themselves (every benchmark but fio): per engine, workload, data
    size, op and metric, each device's trimmed mean with its repeat spread (runs, CV, fastest and
    slowest run)."""
    df = agg[(agg["benchmark"] != FEATURE_BENCHMARK) & agg["metric"].isin(list(metrics))]
    df = df[[c for c in APP_COLUMNS if c in df.columns]]
    order = {m: i for i, m in enumerate(metrics)}
    return df.assign(_m=df["metric"].map(order)).sort_values(
        ["benchmark", "engine", "workload", "op", "_m", "data_size", "device"], kind="mergesort"
    ).drop(columns="_m").reset_index(drop=True)


LATENCY_SIZE_COLUMNS = ["benchmark", "engine", "workload", "op", "device", "data_size", "value", "kind",
                        "memory_limit"]


def latency_over_size(agg: pd.DataFrame, memory: dict, folds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each application's mean latency over data size per device (measured at two sizes or more),
    with ``memory_limit`` the memory its runs could use (``memory``: record source label -> bytes;
    NaN where none was set) and, from the data-size validation's folds (:func:`benchcast.screening.sizes.validate`,
    kind ``size``), the held-out size's prediction from the smaller sizes (``kind`` ``predicted``)."""
    df = agg[(agg["benchmark"] != FEATURE_BENCHMARK) & (agg["metric"] == "lat_mean") & (agg["data_size"] > 0)]
    keys = ["benchmark", "engine", "workload", "op"]
    df = df[df.groupby(keys + ["device"])["data_size"].transform("nunique") >= 2]
    df = df.assign(kind="measured", memory_limit=[memory_of(memory, s, e) for s, e in zip(df["source"], df["engine"])])
    parts = [df]
    if folds is not None and len(folds):
        f = folds[(folds["kind"] == "size") & (folds["metric"] == "lat_mean")]
        f = f.rename(columns={"held_out_size": "data_size", "prediction": "value", "memory": "memory_limit"})
        parts.append(f.assign(kind="predicted", memory_limit=f["memory_limit"].astype(float)))
    out = pd.concat(parts, ignore_index=True)[LATENCY_SIZE_COLUMNS]
    return out.sort_values(keys + ["device", "kind", "data_size"], kind="mergesort").reset_index(drop=True)


#: The records' provenance columns the inventory lists, in its order: the machine, the software
#: (and any other ``*_version`` column a source writes), the devices.
INVENTORY = {
    "host": ["hostname", "kernel", "cpu_model"],
    "software": ["fio_version", "ycsb_version", "binding", "binding_lib", "mariadb_version"],
    "device": ["device_model", "mount_options", "read_ahead_kb", "memory_limit", "swap_size", "other_swap",
               "mariadb_innodb_buffer_pool_size", "mariadb_innodb_lru_scan_depth"],
}


def inventory(recs: pd.DataFrame) -> pd.DataFrame:
    """What machine, software and devices produced a study's records, from the provenance each
    source wrote beside its records: one row per item and value, with the devices and sources it
    holds for (``(all)``: every device that has the item)."""
    cols = ["scope", "item", "value", "devices", "sources"]
    known = [c for items in INVENTORY.values() for c in items]
    extra = sorted(c for c in recs.columns if c.endswith("_version") and c not in known)
    order = INVENTORY["host"] + INVENTORY["software"] + extra + INVENTORY["device"]
    have = [c for c in order if c in recs.columns]
    if not have:
        return pd.DataFrame(columns=cols)
    long = recs[["device", "source"] + have].melt(id_vars=["device", "source"], var_name="item")
    long = long[long["value"].notna() & (long["value"].astype(str) != "")]
    rows = []
    for item, by_item in long.groupby("item", sort=False):
        scope = next((s for s, items in INVENTORY.items() if item in items), "software")
        with_item = set(by_item["device"])
        for value, part in by_item.groupby("value", sort=True):
            devs = sorted(set(part["device"]))
            rows.append({"scope": scope, "item": item, "value": value,
                         "devices": "(all)" if set(devs) == with_item and len(with_item) > 1 else " ".join(devs),
                         "sources": " ".join(sorted(set(part["source"])))})
    out = pd.DataFrame(rows, columns=cols)
    rank = {item: i for i, item in enumerate(order)}
    return out.assign(_r=out["item"].map(rank)).sort_values(["_r", "devices"], kind="mergesort").drop(
        columns="_r").reset_index(drop=True)


#: The columns that name one cell across two result trees (no study or source: the same cell of two
#: studies, or of two runs of one, has the same key).
COMPARE_KEY = ["benchmark", "engine", "workload", "block_size", "threads", "iodepth", "numjobs", "data_size", "op",
               "metric", "unit", "device"]
COMPARE_SPREAD = ["value", "n", "cv", "min", "max", "corrected"]


def compare_cells(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Two aggregated tables side by side, one row per cell both have (:data:`COMPARE_KEY`; a key a
    side holds more than once, under several sources, is paired in source order): each side's
    trimmed mean, runs, CV, fastest and slowest run (``*_a``, ``*_b``), ``ratio`` = value_b / value_a,
    and ``outside_spread``: the two sides' ranges of runs do not overlap. Sorted by how far the
    ratio is from 1 (log scale), largest first."""
    def side(df, tag):
        df = records.fill_settings(df).copy()
        for c in COMPARE_SPREAD:
            if c not in df.columns:
                df[c] = df["value"] if c in ("min", "max") else np.nan
        df = df.sort_values(COMPARE_KEY + ["source"], kind="mergesort")
        df["pair"] = df.groupby(COMPARE_KEY, sort=False).cumcount()
        cols = COMPARE_KEY + ["pair"] + [c for c in ["study", "source"] if c in df.columns] + COMPARE_SPREAD
        return df[cols].rename(columns={c: f"{c}_{tag}" for c in ["study", "source"] + COMPARE_SPREAD})

    out = side(a, "a").merge(side(b, "b"), on=COMPARE_KEY + ["pair"], how="inner").drop(columns="pair")
    out["ratio"] = out["value_b"] / out["value_a"].astype(float).where(out["value_a"] != 0)
    out["outside_spread"] = (out["min_b"] > out["max_a"]) | (out["max_b"] < out["min_a"])
    out["corrected_ratio"] = out["corrected_b"].astype(float) / out["corrected_a"].astype(float).where(
        out["corrected_a"] != 0)
    out["speed_explained"] = speed_explained(out["ratio"], out["corrected_ratio"])
    dist = np.abs(np.log(out["ratio"].where(out["ratio"] > 0)))
    return out.assign(_d=dist.fillna(-1.0)).sort_values(
        ["_d"] + COMPARE_KEY, ascending=[False] + [True] * len(COMPARE_KEY), kind="mergesort"
    ).drop(columns="_d").reset_index(drop=True)


def speed_explained(ratio, corrected_ratio) -> pd.Series:
    """How much of the change between two runs the speed reference explains, per cell: the share of
    the log ratio that stating both at the reference speed removes, 1 - log(corrected ratio) /
    log(ratio) (1: all of it, 0: none, below 0: the correction made the change larger, above 1: it
    overshot); NaN where a side has no corrected value or nothing changed."""
    r, c = (pd.to_numeric(pd.Series(x), errors="coerce").astype(float) for x in (ratio, corrected_ratio))
    lr, lc = np.log(r.where(r > 0)), np.log(c.where(c > 0))
    return (1 - lc / lr.where(lr != 0)).rename("speed_explained")


def compare_summary(a: pd.DataFrame, b: pd.DataFrame, cells: pd.DataFrame) -> dict:
    """How many cells each side has, how many both have, and how many changed beyond the spread."""
    keys = lambda df: set(map(tuple, records.fill_settings(df)[COMPARE_KEY].astype(str).to_numpy()))  # noqa: E731
    ka, kb = keys(a), keys(b)
    return {"cells_a": len(ka), "cells_b": len(kb), "both": len(ka & kb), "only_a": len(ka - kb),
            "only_b": len(kb - ka), "outside_spread": int(cells["outside_spread"].sum())}


SPREAD_COLUMNS = ["benchmark", "engine", "op", "metric", "device", "cells", "mean_abs_pct", "median_abs_pct",
                  "p90_abs_pct", "median_pct", "median_abs_pct_corrected", "median_pct_corrected"]


def compare_spread(cells: pd.DataFrame) -> pd.DataFrame:
    """How far two runs' trimmed means lie apart (:func:`compare_cells`): per benchmark and metric,
    then per engine and operation, then per device of those (``all`` where a level pools), the cells
    and their percent difference ``100 (value_b / value_a - 1)``: mean and median of its size, its
    90th percentile, and its signed median (a drift of every cell one way). Two default runs on one
    machine: how well a device is measured again, the floor of any held-out prediction error."""
    d = cells.loc[cells["ratio"].notna(), ["benchmark", "engine", "op", "metric", "device"]].astype(str)
    d["pct"] = 100 * (cells["ratio"].dropna().astype(float) - 1)
    d["abs"] = d["pct"].abs()
    ok = cells["ratio"].notna().to_numpy()
    corrected = cells["corrected_ratio"] if "corrected_ratio" in cells else pd.Series(np.nan, index=cells.index)
    d["pct_c"] = 100 * (pd.to_numeric(corrected, errors="coerce").to_numpy(dtype=float)[ok] - 1)
    d["abs_c"] = d["pct_c"].abs()
    parts = []
    for by in (["benchmark", "metric"], ["benchmark", "engine", "op", "metric"],
               ["benchmark", "engine", "op", "metric", "device"]):
        g = d.groupby(by, sort=True)
        part = pd.DataFrame({"cells": g.size(), "mean_abs_pct": g["abs"].mean(), "median_abs_pct": g["abs"].median(),
                             "p90_abs_pct": g["abs"].quantile(0.9), "median_pct": g["pct"].median(),
                             "median_abs_pct_corrected": g["abs_c"].median(),
                             "median_pct_corrected": g["pct_c"].median()}).reset_index()
        parts.append(part.assign(**{c: "all" for c in SPREAD_COLUMNS[:5] if c not in by}))
    out = pd.concat(parts, ignore_index=True)[SPREAD_COLUMNS] if len(d) else pd.DataFrame(columns=SPREAD_COLUMNS)
    return out.sort_values(SPREAD_COLUMNS[:5], key=lambda c: c.map(lambda v: (v != "all", v)),
                           kind="mergesort").reset_index(drop=True)


def aggregated_path(path) -> str:
    """The absolute path of an aggregated table given as a file or as a folder holding
    ``aggregated.csv`` (a study's ``results/<study>``): absolute, so that it matches no rule's output
    and a comparison never plans what made it."""
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / "aggregated.csv"
    return str(path.resolve())
