"""Features and series: what the analysis regresses on what, read from the aggregated records.

Input is the *aggregated* table (:mod:`benchcast.aggregate`): the record key columns with ``value``
(trimmed mean) and ``n``.

* A *feature* is a device figure: a row of the feature benchmark (``fio``) with the columns
  :data:`FEATURE_KEYS` (workload, block size, op, metric, iodepth, numjobs, engine, setting),
  named by :func:`feature_name` alone (``randwrite_64K_lat_mean``; a mixed workload names its op:
  ``randrw_4K_read_lat_mean``). A name is made, never read back: whoever needs what a feature is
  reads those columns (:func:`feature_table`, joined by the name where only a name travels).
  :func:`feature_table` lists them long, :func:`feature_matrix` as a device x feature table.
* A *series* is one application result over devices: one value of
  :data:`benchcast.records.SERIES_COLUMNS`; :func:`series_label` names it, :func:`series_table`
  lists the rows, :func:`series_matrix` gives a device x series table.
* A *pool* is the rows of several series that a multiple regression is fitted on together
  (per workload: same benchmark, engine, workload, op, metric, unit, over devices and data sizes;
  or across workloads: same benchmark, engine, op, metric, unit). :func:`pool_table` builds one,
  with the workload variables (:func:`workload_variables`) and the features as columns.
* A *target* is a hypothetical device given as a spec card ``{name: {"figures": [{"workload",
  "block_size", "metric", "value"[, "op", "iodepth", "numjobs"]}, ...]}}``; :func:`spec_features` reads the cards.
* The study's ``pairing`` rules say which features may explain which series
  (:func:`match_rule`, :func:`multiple_candidates`); what an application did to the device (its
  ``device`` records) can say it instead (:mod:`benchcast.features.iopath`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import BenchcastError, config, records
from ..core.vocabulary import OOC_BENCHMARK, OOC_REFERENCE_MODE, PAGING_OP
from ..records import blockio
from ..core.units import figure_value, size_label
from ..config.settings import match_rule  # noqa: F401  (re-exported)
from ..core.workloads import feature_name, rw_op  # noqa: F401  (feature_name: re-exported)

FEATURE_BENCHMARK = "fio"

#: fio engines that read and write the device with system calls: on an engine axis, their figures
#: keep the plain name (randread_4K_lat_mean) unless two of them measure the same figure.
PLAIN_ENGINES = {"psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio"}

#: Pool keys: per workload (over devices and data sizes) and across workloads.
POOL_PER_WORKLOAD = ["benchmark", "engine", "workload", "op", "metric", "unit"]
POOL_ACROSS_WORKLOADS = ["benchmark", "engine", "op", "metric", "unit"]

#: Workload variables a multiple model may use, in this order; each is used only where it varies.
WORKLOAD_VARIABLES = ["data_gb", "log2_data_gb", "read_fraction", "threads"]

#: What a feature is: the columns its name is made of (:func:`feature_name`, in its argument order).
#: ``engine`` is the ioengine the name carries (an engine axis), '' for the plain figure;
#: ``setting`` the other options it carries ('direct0'), '' for none.
FEATURE_KEYS = ["workload", "block_size", "op", "metric", "iodepth", "engine", "numjobs", "setting"]

FEATURE_TABLE_COLUMNS = ["feature", "device", "value", "workload", "block_size", "op", "metric", "unit", "iodepth",
                         "numjobs", "engine", "setting"]

#: The keys of an application workload's device profile (:mod:`benchcast.features.iopath`).
PROFILE_KEYS = ["benchmark", "engine", "workload", "threads"]

_AGG_NEEDED = ["device", "benchmark", "engine", "workload", "block_size", "threads", "data_size",
               "op", "metric", "unit", "value"]


def _need(df: pd.DataFrame, cols, where: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BenchcastError(f"{where}: missing column(s) {', '.join(missing)}")


def _select(df: pd.DataFrame, col: str, values) -> pd.DataFrame:
    return df if values is None else df[df[col].isin(list(values))]


# --------------------------------------------------------------------------------------------
# Naming
# --------------------------------------------------------------------------------------------


def series_label(key: Mapping) -> str:
    """One-line name of a series: 'ycsb/mysql/write-only/write/lat_mean/16GB' (+ '/t8' if threads)."""
    parts = [key["benchmark"], key["engine"] or "-", key["workload"], key["op"], key["metric"],
             size_label(key["data_size"], decimal=True)]
    if int(key.get("threads", 0)):
        parts.append(f"t{int(key['threads'])}")
    return "/".join(str(p) for p in parts)


# --------------------------------------------------------------------------------------------
# Feature and series tables from the aggregated records
# --------------------------------------------------------------------------------------------


def feature_table(agg: pd.DataFrame, features: Mapping | None = None) -> pd.DataFrame:
    """The candidate device figures: one row per (feature, device) with columns
    :data:`FEATURE_TABLE_COLUMNS`.

    ``features`` is the study's ``features`` setting (benchmark, workloads, block_sizes, metrics);
    None or a missing key selects every figure of the feature benchmark. One device with two values
    for one feature (two engines, thread counts or sources) is an error.
    """
    _need(agg, _AGG_NEEDED, "aggregated table")
    features = features or {}
    df = agg[agg["benchmark"] == features.get("benchmark", FEATURE_BENCHMARK)]
    df = _select(df, "workload", features.get("workloads"))
    if features.get("block_sizes") is not None:
        bs = [records.parse_size(s, what="features.block_sizes") for s in features["block_sizes"]]
        df = _select(df, "block_size", bs)
    df = _select(df, "metric", features.get("metrics")).copy()
    # records before iodepth and numjobs were columns: threads was the queue depth
    df["iodepth"] = df["iodepth"] if "iodepth" in df else df["threads"]
    df["numjobs"] = df["numjobs"] if "numjobs" in df else 1
    df = df.rename(columns={"engine": "record_engine"}).assign(engine="", setting="")
    df["feature"] = _names(df)
    # an ioengine axis: where one device has a figure under several engines, the figures of an
    # engine that does not read and write the device by system calls (mmap, libpmem) carry the
    # engine in their name, so spec cards keep naming the plain figures; where two of those
    # plain engines remain (psync and libaio), every engine of the figure is named, on every
    # device. Engines that differ only between devices (imported results of another tool) do not
    # split a figure.
    for named in (~df["record_engine"].isin(PLAIN_ENGINES), pd.Series(True, index=df.index)):
        engines = df.groupby(["feature", "device"])["record_engine"].transform("nunique")
        on_axis = df["feature"].isin(df.loc[engines > 1, "feature"].unique()) & named
        df.loc[on_axis, "engine"] = df.loc[on_axis, "record_engine"]
        df.loc[on_axis, "feature"] = _names(df.loc[on_axis])
    if "cell" in df:
        df["setting"] = _settings(df)
        df["feature"] = _names(df)
    dup = df.duplicated(["feature", "device"], keep=False)
    if dup.any():
        row = df[dup].iloc[0]
        cells = sorted(set(df.loc[dup & (df["feature"] == row["feature"]), "cell"])) if "cell" in df else []
        where = f" (cells {', '.join(map(repr, cells))})" if len(cells) > 1 else ""
        raise BenchcastError(
            f"features: device {row['device']!r} has several values for feature {row['feature']!r}{where} "
            f"(different engines, settings or sources); restrict the study's features or sources"
        )
    return df[FEATURE_TABLE_COLUMNS].reset_index(drop=True)


def _names(df: pd.DataFrame) -> list[str]:
    """The feature names of the rows of ``df`` (columns :data:`FEATURE_KEYS`)."""
    return [feature_name(*r) for r in df[FEATURE_KEYS].itertuples(index=False)]


def _cell_options(cell: str) -> dict | None:
    """The options of an imported fio cell label ('rw=randread bs=4K ...'), None for another cell
    (a grid's cell id)."""
    terms = cell.split(" ")
    if not cell or not all("=" in t for t in terms):
        return None
    return dict(t.split("=", 1) for t in terms)


def _settings(df: pd.DataFrame) -> list[str]:
    """The ``setting`` of each row where one device has several cells of one figure that differ in
    options the name does not carry (imported files that differ in ``direct``, ``fsync`` ...):
    those options, on every device's figure ('direct0': 'randread_4K_direct0_lat_mean'); cells
    that do not say their options (a grid's cell ids) keep '' and meet the duplicate check."""
    settings = df["setting"].copy()
    cells = df.groupby(["feature", "device"])["cell"].transform("nunique")
    for feature in df.loc[cells > 1, "feature"].unique():
        rows = df[df["feature"] == feature]
        opts = [_cell_options(c) for c in rows["cell"]]
        if any(o is None for o in opts):
            continue
        keys = sorted({k for o in opts for k in o if len({p.get(k, "") for p in opts}) > 1})
        settings[rows.index] = ["_".join(f"{k}{o.get(k, '')}".replace("_", "") for k in keys) for o in opts]
    return list(settings)


def feature_matrix(agg: pd.DataFrame, features: Mapping | None = None) -> pd.DataFrame:
    """Device figures as a table: index device, one column per feature id, values float
    (the rows of :func:`feature_table`)."""
    f = feature_table(agg, features)
    if f.empty:
        return pd.DataFrame(index=pd.Index([], name="device"), dtype=float)
    wide = f.pivot(index="device", columns="feature", values="value")
    wide.columns.name = None
    return wide.astype(float)


def series_table(agg: pd.DataFrame, features: Mapping | None = None, series: Mapping | None = None) -> pd.DataFrame:
    """The application results (aggregated rows of every benchmark but the feature benchmark), with
    a ``series`` label column (:func:`series_label`).

    ``series`` is the study's ``series`` setting (benchmarks, metrics); None or a missing key
    selects all. One device with two results for one series (two sources) is an error.
    """
    _need(agg, _AGG_NEEDED, "aggregated table")
    series = series or {}
    df = agg[agg["benchmark"] != (features or {}).get("benchmark", FEATURE_BENCHMARK)]
    # what a run did to the device and to memory describes it; it is no result
    df = df[~df["op"].isin([blockio.OP, PAGING_OP])]
    # nor is an out-of-core program's in-memory reference run, whatever device it ran beside
    df = df[~((df["benchmark"] == OOC_BENCHMARK) & (df["engine"] == OOC_REFERENCE_MODE))]
    df = _select(df, "benchmark", series.get("benchmarks"))
    df = _select(df, "metric", series.get("metrics")).copy()
    df["series"] = [series_label(r) for r in df[records.SERIES_COLUMNS].to_dict("records")]
    dup = df.duplicated(["series", "device"], keep=False)
    if dup.any():
        row = df[dup].iloc[0]
        raise BenchcastError(
            f"series: device {row['device']!r} has results from several sources for {row['series']}"
        )
    return df.reset_index(drop=True)


def series_matrix(agg: pd.DataFrame, features: Mapping | None = None, series: Mapping | None = None):
    """Application results as (Y, keys): Y has index device and one column per series label;
    keys has index series label and the :data:`benchcast.records.SERIES_COLUMNS`."""
    s = series_table(agg, features, series)
    y = s.pivot(index="device", columns="series", values="value").astype(float)
    y.columns.name = None
    keys = s.drop_duplicates("series").set_index("series")[records.SERIES_COLUMNS]
    return y, keys.loc[list(y.columns)]


def study_table(agg: pd.DataFrame, features: Mapping, series: Mapping | None) -> pd.DataFrame:
    """The aggregated rows a study's models see: its candidate feature rows, its series rows and
    what the series' runs did to the device (their ``device`` records, :mod:`benchcast.records.blockio`)."""
    feats = feature_table(agg, features)
    keep = agg[agg["benchmark"] == features.get("benchmark", FEATURE_BENCHMARK)].merge(
        feats[["device", "workload", "block_size", "op", "metric"]].drop_duplicates(),
        on=["device", "workload", "block_size", "op", "metric"],
    )
    ser = series_table(agg, features, series).drop(columns="series")
    io = agg[agg["op"] == blockio.OP].merge(ser[PROFILE_KEYS].drop_duplicates(), on=PROFILE_KEYS)
    return pd.concat([keep, ser, io], ignore_index=True)


# --------------------------------------------------------------------------------------------
# Spec cards of the hypothetical devices
# --------------------------------------------------------------------------------------------


def spec_features(targets: Mapping) -> pd.DataFrame:
    """Spec cards as a table: target, feature, x (figure keys as in config).

    A figure's op is its ``op`` key, else the op its workload measures; a figure of a mixed
    workload (``randrw``) must give its op. A value with a unit ("413 MB/s", "8.9 us", "550000
    IOPS") is converted to its metric's canonical unit, the one the records use
    (:func:`benchcast.core.units.figure_value`); a plain number is taken in that unit.
    """
    rows = []
    for name, card in targets.items():
        for (i, f), fig in zip(config.card_figure_ids(name, card), card["figures"]):
            x = figure_value(fig["value"], fig["metric"], where=f"targets.{name}.figures[{i}].value")
            rows.append({"target": name, "feature": f.name, "x": x})
    return pd.DataFrame(rows, columns=["target", "feature", "x"])


def target_figures(targets: Mapping) -> pd.DataFrame:
    """Target spec cards as a table: index target name, one column per feature id (NaN if absent);
    values in the records' units (:func:`spec_features`)."""
    cards = {name: card for name, card in targets.items() if isinstance(card, Mapping) and card.get("figures")}
    spec = spec_features(cards) if cards else pd.DataFrame(columns=["target", "feature", "x"])
    out = spec.pivot(index="target", columns="feature", values="x").astype(float).reindex(list(targets))
    out.columns.name = None
    out.index.name = "target"
    return out


# --------------------------------------------------------------------------------------------
# Which features may explain which series
# --------------------------------------------------------------------------------------------


def simple_candidates(screened: pd.DataFrame) -> pd.DataFrame:
    """Series label -> feature, exactly the pairs the screening fitted (pairing applied)."""
    keys = screened[records.SERIES_COLUMNS].to_dict("records")
    return pd.DataFrame({"series": [series_label(k) for k in keys], "feature": screened["feature"]})


def multiple_candidates(agg: pd.DataFrame, features: Mapping, pairing):
    """A callable: pool key -> the feature ids its pairing rule allows."""
    feats = feature_table(agg, features).drop_duplicates("feature")

    def allowed(key: dict) -> list[str]:
        rule = match_rule(key, pairing)
        if rule < 0:
            return list(feats["feature"])
        return list(feats.loc[feats["workload"].isin(pairing[rule]["workloads"]), "feature"])

    return allowed


def candidate_features(series: str, key: Mapping, candidates, available) -> list[str]:
    """The candidate feature ids of one series, in candidate order, restricted to ``available``.

    ``candidates`` is None (every available feature), a dict {series label: [feature ids]}, a
    DataFrame with columns ``series`` and ``feature``, a callable(key dict) -> [feature ids], or a
    tuple of those tried in order: the first that leaves any available feature wins (figures shaped
    like the application, else the pairing rules).
    """
    available = list(available)
    if isinstance(candidates, tuple):
        for one in candidates:
            found = candidate_features(series, key, one, available)
            if found:
                return found
        return []
    if candidates is None:
        wanted = available
    elif callable(candidates):
        wanted = list(candidates(dict(key)))
    elif isinstance(candidates, pd.DataFrame):
        wanted = list(candidates.loc[candidates["series"] == series, "feature"])
    else:
        wanted = list(candidates.get(series, []))
    have = set(available)
    return [f for f in dict.fromkeys(wanted) if f in have]


def feature_sets(candidates, max_figures: int) -> list[tuple[str, ...]]:
    """Single features and (if max_figures >= 2) pairs, ... from a candidate list, in order."""
    cands = list(dict.fromkeys(candidates))
    out = []
    for k in range(1, max_figures + 1):
        out.extend(itertools.combinations(cands, k))
    return out


# --------------------------------------------------------------------------------------------
# Workload variables and pools of the multiple regressions
# --------------------------------------------------------------------------------------------


def workload_variables(df: pd.DataFrame, read_fraction: Mapping | None = None) -> pd.DataFrame:
    """Workload variables of result rows: data_gb (data_size / 1e9), log2_data_gb, read_fraction
    (from ``read_fraction[workload]``, NaN where unknown) and threads; same index as ``df``."""
    data_gb = df["data_size"].astype(float) / 1e9
    with np.errstate(divide="ignore"):
        log2 = np.where(data_gb > 0, np.log2(data_gb.where(data_gb > 0, 1.0)), np.nan)
    rf = df["workload"].map(dict(read_fraction or {})).astype(float)
    return pd.DataFrame(
        {"data_gb": data_gb, "log2_data_gb": log2, "read_fraction": rf, "threads": df["threads"].astype(float)},
        index=df.index,
    )


def varying_workload_variables(wv: pd.DataFrame) -> list[str]:
    """The workload variables worth a coefficient: data_gb with >= 2 distinct sizes, log2_data_gb
    with >= 3 (two sizes make it collinear with data_gb), read_fraction and threads with >= 2."""
    out = []
    nd = wv["data_gb"].nunique()
    if nd >= 2:
        out.append("data_gb")
    if nd >= 3 and wv["log2_data_gb"].notna().all():
        out.append("log2_data_gb")
    for col in ("read_fraction", "threads"):
        if wv[col].nunique(dropna=False) >= 2:
            out.append(col)
    return out


def pool_table(agg: pd.DataFrame, pool_by=POOL_PER_WORKLOAD, read_fraction: Mapping | None = None) -> pd.DataFrame:
    """Application results in long form, one row per (series, device), with a ``pool`` label,
    the workload variables of :func:`workload_variables`, and every feature id as a column."""
    s = series_table(agg)
    F = feature_matrix(agg)
    s["pool"] = ["/".join(str(v) if v != "" else "-" for v in r) for r in s[list(pool_by)].itertuples(index=False)]
    s = s.join(workload_variables(s, read_fraction).drop(columns="threads"))  # threads: the record column
    s = s.merge(F, left_on="device", right_index=True, how="left")
    return s
