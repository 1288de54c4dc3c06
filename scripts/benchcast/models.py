"""Simple and multiple OLS models of application results on device figures, with prediction intervals.

Input is the *aggregated* table: the record columns (study, source, device, benchmark, engine,
workload, block_size, threads, data_size, op, metric, unit) with ``value`` (trimmed mean) and ``n``.

* A *feature* is a device figure: the rows of the feature benchmark (``fio``), named by
  :func:`benchcast.screen.feature_name` (``randwrite_64K_lat_mean``). :func:`feature_matrix` gives
  them as a device x feature table.
* A *series* is one application result over devices: one value of
  :data:`benchcast.records.SERIES_COLUMNS`; :func:`series_label` names it.
* A *pool* is the rows of several series that a multiple regression is fitted on together
  (per workload: same benchmark, engine, workload, op, metric, unit, over devices and data sizes;
  or across workloads: same benchmark, engine, op, metric, unit). :func:`pool_table` builds one.
* A *target* is a hypothetical device given as ``{name: {"figures": [{"workload", "block_size",
  "metric", "value"}, ...]}}``.

Fits are statsmodels OLS; prediction intervals are statsmodels' observation intervals
(``get_prediction(X).summary_frame(alpha)`` ``obs_ci_lower``/``obs_ci_upper``). A fit with zero
residual degrees of freedom (a line through two points) predicts, but its interval is undefined:
it is returned as NaN with ``interval_flag`` saying why, never raised.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm

from . import BenchcastError
from .records import SERIES_COLUMNS, parse_size
from .screen import feature_name

FEATURE_BENCHMARK = "fio"

#: Read fraction of the paper's YCSB workloads (Soga et al. 2018, Table 3).
PAPER_READ_FRACTION = {"write-only": 0.0, "write-heavy": 0.5, "read-heavy": 0.95, "read-only": 1.0}

#: Pool keys: per workload (over devices and data sizes) and across workloads.
POOL_PER_WORKLOAD = ["benchmark", "engine", "workload", "op", "metric", "unit"]
POOL_ACROSS_WORKLOADS = ["benchmark", "engine", "op", "metric", "unit"]

#: Workload variables a multiple model may use, in this order; each is used only where it varies.
WORKLOAD_VARIABLES = ["data_gb", "log2_data_gb", "read_fraction", "threads"]

# Interval flags (strings so that a report can print them as they are).
FLAG_ZERO_DF = "zero residual df: interval undefined"
FLAG_NO_DEVICE_DF = "no residual df across devices: interval ignores device-to-device error"

_AGG_NEEDED = ["device", "benchmark", "engine", "workload", "block_size", "threads", "data_size",
               "op", "metric", "unit", "value"]


def _need(df: pd.DataFrame, cols, where: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BenchcastError(f"{where}: missing column(s) {', '.join(missing)}")


# --------------------------------------------------------------------------------------------
# Tables from the aggregated records
# --------------------------------------------------------------------------------------------


def data_size_label(nbytes) -> str:
    """Decimal label of a data size: 16e9 -> '16GB', 2.5e8 -> '250MB', 0 -> '0'."""
    n = int(nbytes)
    for suffix, mult in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def series_label(key: Mapping) -> str:
    """One-line name of a series: 'ycsb/mysql/write-only/write/lat_mean/16GB' (+ '/t8' if threads)."""
    parts = [key["benchmark"], key["engine"] or "-", key["workload"], key["op"], key["metric"],
             data_size_label(key["data_size"])]
    if int(key.get("threads", 0)):
        parts.append(f"t{int(key['threads'])}")
    return "/".join(str(p) for p in parts)


def feature_matrix(agg: pd.DataFrame, benchmark: str = FEATURE_BENCHMARK) -> pd.DataFrame:
    """Device figures as a table: index device, one column per feature id, values float.

    Raises :class:`BenchcastError` when one device has two rows for one feature id (e.g. two
    engines or thread counts): filter the aggregated table to one figure per id first.
    """
    _need(agg, _AGG_NEEDED, "aggregated table")
    f = agg[agg["benchmark"] == benchmark]
    if f.empty:
        return pd.DataFrame(index=pd.Index([], name="device"), dtype=float)
    # the screening's names, so validation and screening speak of the same features (mixed rw name their op)
    fid = [feature_name(w, int(b), op, m) for w, b, op, m in zip(f["workload"], f["block_size"], f["op"], f["metric"])]
    f = f.assign(feature=fid)
    dup = f.duplicated(["device", "feature"], keep=False)
    if dup.any():
        row = f[dup].iloc[0]
        raise BenchcastError(
            f"aggregated table: device {row['device']} has several {benchmark} rows for feature "
            f"{row['feature']} (engines/threads/units differ); keep one per feature"
        )
    wide = f.pivot(index="device", columns="feature", values="value")
    wide.columns.name = None
    return wide.astype(float)


def series_records(agg: pd.DataFrame, feature_benchmark: str = FEATURE_BENCHMARK) -> pd.DataFrame:
    """The application-result rows of ``agg`` with a ``series`` label column added."""
    _need(agg, _AGG_NEEDED, "aggregated table")
    s = agg[agg["benchmark"] != feature_benchmark].copy()
    s["series"] = [series_label(r) for r in s[SERIES_COLUMNS].to_dict("records")]
    dup = s.duplicated(["series", "device"], keep=False)
    if dup.any():
        row = s[dup].iloc[0]
        raise BenchcastError(f"aggregated table: series {row['series']} has several rows for device {row['device']}")
    return s.reset_index(drop=True)


def series_matrix(agg: pd.DataFrame, feature_benchmark: str = FEATURE_BENCHMARK):
    """Application results as (Y, keys): Y has index device and one column per series label;
    keys has index series label and the :data:`SERIES_COLUMNS`."""
    s = series_records(agg, feature_benchmark)
    y = s.pivot(index="device", columns="series", values="value").astype(float)
    y.columns.name = None
    keys = s.drop_duplicates("series").set_index("series")[SERIES_COLUMNS]
    return y, keys.loc[list(y.columns)]


def target_figures(targets: Mapping) -> pd.DataFrame:
    """Target spec cards as a table: index target name, one column per feature id (NaN if absent).

    ``block_size`` may be bytes or a size string ('64K').
    """
    from .predict import spec_features  # the one reading of spec cards, as the simple predictions use

    cards = {name: card for name, card in targets.items() if isinstance(card, Mapping) and card.get("figures")}
    spec = spec_features(cards) if cards else pd.DataFrame(columns=["target", "feature", "x"])
    out = spec.pivot(index="target", columns="feature", values="x").astype(float).reindex(list(targets))
    out.columns.name = None
    out.index.name = "target"
    return out


def candidate_features(series: str, key: Mapping, candidates, available) -> list[str]:
    """The candidate feature ids of one series, in candidate order, restricted to ``available``.

    ``candidates`` is None (every available feature), a dict {series label: [feature ids]}, a
    DataFrame with columns ``series`` and ``feature``, or a callable(key dict) -> [feature ids].
    """
    available = list(available)
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


# --------------------------------------------------------------------------------------------
# Design matrices and OLS
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


def design_matrix(df: pd.DataFrame, columns, intercept: bool = True) -> pd.DataFrame:
    """Design matrix: ``const`` (if intercept) then ``columns`` of ``df`` as float, same index."""
    cols = list(columns)
    _need(df, cols, "design matrix")
    X = df[cols].astype(float).copy()
    if intercept:
        X.insert(0, "const", 1.0)
    return X


@dataclass
class OLSFit:
    """A fitted OLS model: the statsmodels results plus what prediction needs."""

    result: object  # statsmodels RegressionResults
    columns: list[str]  # design columns, 'const' first when there is an intercept
    n: int
    resid_df: float
    rsquared: float
    rsquared_adj: float
    params: pd.Series = field(repr=False)


def fit_ols(X: pd.DataFrame, y) -> OLSFit:
    """Fit OLS of ``y`` on design matrix ``X`` (build it with :func:`design_matrix`).

    Raises :class:`BenchcastError` if ``X`` is rank-deficient or has fewer rows than columns.
    """
    X = pd.DataFrame(X).astype(float)
    y = np.asarray(y, dtype=float)
    if len(y) != len(X):
        raise BenchcastError(f"fit_ols: {len(X)} design rows but {len(y)} results")
    if len(X) < X.shape[1] or np.linalg.matrix_rank(X.to_numpy()) < X.shape[1]:
        raise BenchcastError(f"fit_ols: design of {len(X)} rows x {X.shape[1]} columns is rank-deficient")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-df fits warn about division by zero
        res = sm.OLS(y, X.to_numpy()).fit()
        r2 = float(res.rsquared) if res.df_resid >= 0 else np.nan
        r2a = float(res.rsquared_adj) if res.df_resid > 0 else np.nan
    return OLSFit(res, list(X.columns), len(y), float(res.df_resid), r2, r2a,
                  pd.Series(res.params, index=list(X.columns)))


def predict_ols(fit: OLSFit, X_new: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Predict new rows with a (1 - alpha) prediction interval.

    ``X_new`` needs the fit's design columns (``const`` is added if missing). Returns a DataFrame
    with the index of ``X_new`` and columns prediction, lower, upper, resid_df, interval_flag
    (empty, or :data:`FLAG_ZERO_DF` with NaN bounds when the fit has no residual df).
    """
    X_new = pd.DataFrame(X_new).copy()
    if "const" in fit.columns and "const" not in X_new:
        X_new["const"] = 1.0
    X = X_new[fit.columns].astype(float).to_numpy()
    if fit.resid_df > 0:
        sf = fit.result.get_prediction(X).summary_frame(alpha=alpha)
        pred, lo, hi, flag = sf["mean"].to_numpy(), sf["obs_ci_lower"].to_numpy(), sf["obs_ci_upper"].to_numpy(), ""
    else:
        pred = X @ fit.params.to_numpy()
        lo = hi = np.full(len(X), np.nan)
        flag = FLAG_ZERO_DF
    return pd.DataFrame(
        {"prediction": pred, "lower": lo, "upper": hi, "resid_df": fit.resid_df, "interval_flag": flag},
        index=X_new.index,
    )


def fit_simple(x, y) -> OLSFit:
    """Simple regression y = a + b x (column names const, x)."""
    return fit_ols(design_matrix(pd.DataFrame({"x": np.asarray(x, dtype=float)}), ["x"]), y)


def predict_simple(fit: OLSFit, x_new, alpha: float = 0.05) -> pd.DataFrame:
    """Predictions of a :func:`fit_simple` model at ``x_new`` (see :func:`predict_ols`)."""
    return predict_ols(fit, pd.DataFrame({"x": np.atleast_1d(np.asarray(x_new, dtype=float))}), alpha)


# --------------------------------------------------------------------------------------------
# Multiple regression pools and the device-figure rule
# --------------------------------------------------------------------------------------------


def max_device_figures(n_devices: int) -> int:
    """The most device figures a model fitted over ``n_devices`` devices may use.

    Rule: device-figure count k <= n_devices - 2. Device figures vary only between devices, so
    however many data sizes or workloads are pooled, their coefficients (and the intercept) are
    identified by the n_devices device points alone; k figures plus the intercept on n_devices
    points leaves n_devices - k - 1 residual df across devices, and the rule keeps that >= 1 (the
    devices outnumber the figures by at least two). Workload variables (data size, read fraction,
    threads) vary within a device and do not count against it.
    """
    return max(int(n_devices) - 2, 0)


def check_device_figures(k: int, n_devices: int) -> str | None:
    """None if ``k`` device figures are allowed over ``n_devices`` devices, else the refusal reason."""
    if k <= max_device_figures(n_devices):
        return None
    return (f"{k} device figure(s) need at least {k + 2} devices (rule: figures <= devices - 2); "
            f"the pool has {n_devices}")


def pool_table(agg: pd.DataFrame, pool_by=POOL_PER_WORKLOAD, read_fraction: Mapping | None = None,
               feature_benchmark: str = FEATURE_BENCHMARK) -> pd.DataFrame:
    """Application results in long form, one row per (series, device), with a ``pool`` label,
    the workload variables of :func:`workload_variables`, and every feature id as a column."""
    s = series_records(agg, feature_benchmark)
    F = feature_matrix(agg, feature_benchmark)
    s["pool"] = ["/".join(str(v) if v != "" else "-" for v in r) for r in s[list(pool_by)].itertuples(index=False)]
    s = s.join(workload_variables(s, read_fraction).drop(columns="threads"))  # threads: the record column
    s = s.merge(F, left_on="device", right_index=True, how="left")
    return s


def feature_sets(candidates, max_figures: int = 2) -> list[tuple[str, ...]]:
    """Single features and (if max_figures >= 2) pairs, ... from a candidate list, in order."""
    cands = list(dict.fromkeys(candidates))
    out = []
    for k in range(1, max_figures + 1):
        out.extend(itertools.combinations(cands, k))
    return out


# --------------------------------------------------------------------------------------------
# Extrapolation guard
# --------------------------------------------------------------------------------------------


def feature_ranges(F: pd.DataFrame) -> pd.DataFrame:
    """Measured range of each feature over the training devices: index feature, columns min, max."""
    return pd.DataFrame({"min": F.min(axis=0), "max": F.max(axis=0)}).rename_axis("feature")


def extrapolation_flags(x_new: pd.DataFrame, ranges: pd.DataFrame, data_size=None, max_data_size=None,
                        factor: float = 2.0) -> pd.DataFrame:
    """Flag predictions that extrapolate.

    ``x_new``: one row per prediction, a column per feature id the model uses (NaN/absent columns
    are ignored). ``ranges``: :func:`feature_ranges` of the training devices. A feature value
    outside [min, max] is flagged. ``data_size`` (bytes, scalar or per row) beyond ``factor`` x
    ``max_data_size`` (the largest measured data size, scalar or per row) is flagged too.

    Returns a DataFrame with the index of ``x_new`` and columns feature_out_of_range (bool),
    out_of_range_features (';'-joined 'feature=value not in [min, max]'), data_size_extrapolated
    (bool) and extrapolation (bool: either).
    """
    x_new = pd.DataFrame(x_new)
    out_any = np.zeros(len(x_new), dtype=bool)
    notes = [[] for _ in range(len(x_new))]
    for col in x_new.columns:
        if col not in ranges.index:
            continue
        v = x_new[col].to_numpy(dtype=float)
        lo, hi = float(ranges.at[col, "min"]), float(ranges.at[col, "max"])
        bad = np.isfinite(v) & ((v < lo) | (v > hi))
        out_any |= bad
        for i in np.flatnonzero(bad):
            notes[i].append(f"{col}={v[i]:g} not in [{lo:g}, {hi:g}]")
    if data_size is not None and max_data_size is not None:
        ds = np.broadcast_to(np.asarray(data_size, dtype=float), (len(x_new),))
        mx = np.broadcast_to(np.asarray(max_data_size, dtype=float), (len(x_new),))
        ds_bad = np.isfinite(ds) & np.isfinite(mx) & (ds > factor * mx)
    else:
        ds_bad = np.zeros(len(x_new), dtype=bool)
    return pd.DataFrame(
        {"feature_out_of_range": out_any, "out_of_range_features": ["; ".join(n) for n in notes],
         "data_size_extrapolated": ds_bad, "extrapolation": out_any | ds_bad},
        index=x_new.index,
    )


# --------------------------------------------------------------------------------------------
# Predictions for targets
# --------------------------------------------------------------------------------------------


def predict_targets_simple(agg: pd.DataFrame, selection: pd.DataFrame, targets: Mapping, alpha: float = 0.05,
                           choice: str = "heldout", feature_benchmark: str = FEATURE_BENCHMARK):
    """Predict every series of ``selection`` for every target with its chosen simple model.

    ``selection`` is :func:`benchcast.validate.select_simple` output; ``choice`` is ``heldout``
    (lowest held-out MAPE, column selected_feature) or ``paper`` (max in-sample R^2, column
    paper_feature). The model is refitted on all devices of the series. A target lacking the
    model's figure is skipped.

    Returns (predictions, skipped). predictions columns: series, SERIES_COLUMNS, choice, model,
    features, target, x, prediction, lower, upper, resid_df, interval_flag, n_devices,
    feature_out_of_range, out_of_range_features, data_size_extrapolated, extrapolation.
    skipped columns: series, choice, model, features, target, reason.
    """
    col = {"heldout": "selected_feature", "paper": "paper_feature"}[choice]
    F = feature_matrix(agg, feature_benchmark)
    Y, keys = series_matrix(agg, feature_benchmark)
    T = target_figures(targets)
    rows, skipped = [], []
    for _, sel in selection.iterrows():
        series, fid = sel["series"], sel[col]
        if not isinstance(fid, str) or not fid:
            continue
        y = Y[series]
        ok = y.notna() & F[fid].notna()
        fit = fit_simple(F.loc[ok, fid], y[ok])
        rng = feature_ranges(F.loc[ok, [fid]])
        for tname in T.index:
            xv = T.at[tname, fid] if fid in T.columns else np.nan
            if not np.isfinite(xv):
                skipped.append({"series": series, "choice": choice, "model": "simple", "features": fid,
                                "target": tname, "reason": f"target has no figure {fid}"})
                continue
            p = predict_simple(fit, [xv], alpha).iloc[0]
            g = extrapolation_flags(pd.DataFrame({fid: [xv]}), rng).iloc[0]
            rows.append({"series": series, **keys.loc[series].to_dict(), "choice": choice, "model": "simple",
                         "features": fid, "target": tname, "x": xv, **p.to_dict(), "n_devices": int(ok.sum()),
                         **g.to_dict()})
    return pd.DataFrame(rows), pd.DataFrame(skipped, columns=["series", "choice", "model", "features", "target", "reason"])


def predict_targets_multiple(agg: pd.DataFrame, selection: pd.DataFrame, targets: Mapping, alpha: float = 0.05,
                             read_fraction: Mapping | None = None, data_sizes=(), factor: float = 2.0,
                             feature_benchmark: str = FEATURE_BENCHMARK):
    """Predict with the selected multiple model of each pool, for every target.

    ``selection`` is :func:`benchcast.validate.select_multiple` output (columns pool, pool_by,
    selected_features, variables). Each model is refitted on its whole pool and predicts, for each
    target, every (workload, threads, data size) of the pool, plus each of ``data_sizes`` (bytes or
    size strings) for every (workload, threads) of the pool. A target lacking a figure the model
    uses is skipped.

    Returns (predictions, skipped). predictions columns: pool, benchmark, engine, workload, op,
    metric, unit, threads, data_size, model, features, variables, target, prediction, lower, upper,
    resid_df, interval_flag, n_devices, measured_size (bool), feature_out_of_range,
    out_of_range_features, data_size_extrapolated, extrapolation. skipped: pool, model, features,
    target, reason.
    """
    T = target_figures(targets)
    extra = [parse_size(d, what="data size") for d in data_sizes]
    rows, skipped = [], []
    cache: dict[tuple, pd.DataFrame] = {}
    for _, sel in selection.iterrows():
        # a pool with no selected model (too few devices) has NaN here: nothing to predict
        feats = [] if pd.isna(sel["selected_features"]) else [f for f in str(sel["selected_features"]).split("+") if f]
        if not feats:
            continue
        pool_by = tuple(str(sel["pool_by"]).split(","))
        if pool_by not in cache:
            cache[pool_by] = pool_table(agg, list(pool_by), read_fraction, feature_benchmark)
        P = cache[pool_by]
        P = P[(P["pool"] == sel["pool"])].dropna(subset=feats + ["value"])
        variables = [] if pd.isna(sel["variables"]) else [v for v in str(sel["variables"]).split("+") if v]
        fit = fit_ols(design_matrix(P, feats + variables), P["value"])
        rng = feature_ranges(P.drop_duplicates("device").set_index("device")[feats])
        max_size = float(P["data_size"].max())
        settings = P[["benchmark", "engine", "workload", "op", "metric", "unit", "threads", "data_size"]].drop_duplicates()
        settings = settings.assign(measured_size=True)
        if extra:
            base = settings.drop(columns=["data_size", "measured_size"]).drop_duplicates()
            more = pd.concat([base.assign(data_size=d) for d in extra], ignore_index=True)
            more = more.merge(settings[["workload", "threads", "data_size"]], how="left", indicator=True,
                              on=["workload", "threads", "data_size"])
            more = more[more["_merge"] == "left_only"].drop(columns="_merge").assign(measured_size=False)
            settings = pd.concat([settings, more], ignore_index=True)
        settings = settings.reset_index(drop=True)
        wv = workload_variables(settings, read_fraction)
        for tname in T.index:
            missing = [f for f in feats if f not in T.columns or not np.isfinite(T.at[tname, f])]
            if missing:
                skipped.append({"pool": sel["pool"], "model": "multiple", "features": "+".join(feats),
                                "target": tname, "reason": f"target has no figure {', '.join(missing)}"})
                continue
            X = wv.copy()
            for f in feats:
                X[f] = T.at[tname, f]
            p = predict_ols(fit, X[feats + variables], alpha)
            g = extrapolation_flags(X[feats], rng, settings["data_size"], max_size, factor)
            out = pd.concat([settings, p, g], axis=1)
            out.insert(0, "pool", sel["pool"])
            out["model"], out["features"], out["variables"] = "multiple", "+".join(feats), "+".join(variables)
            out["target"], out["n_devices"] = tname, P["device"].nunique()
            rows.append(out)
    cols = ["pool", "benchmark", "engine", "workload", "op", "metric", "unit", "threads", "data_size", "model",
            "features", "variables", "target", "prediction", "lower", "upper", "resid_df", "interval_flag",
            "n_devices", "measured_size", "feature_out_of_range", "out_of_range_features",
            "data_size_extrapolated", "extrapolation"]
    pred = pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)
    return pred, pd.DataFrame(skipped, columns=["pool", "model", "features", "target", "reason"])
