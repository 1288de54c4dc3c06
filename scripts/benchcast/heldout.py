"""Held-out-device validation of simple and multiple models, and model selection by held-out error.

Every fold holds out one device (scikit-learn ``LeaveOneGroupOut`` with the devices as groups),
fits on the other devices and predicts the held-out one. For a multiple model pooled over data
sizes (and workloads) all rows of the held-out device are held out together. Simple folds are
:func:`benchcast.fits.simple` with the held-out device masked (all candidate features of a series
at once); multiple folds are :func:`benchcast.fits.fit_ols`.

Fold tables have one row per held-out row: truth, prediction, abs_error, pct_error (signed, 100 *
(prediction - truth) / truth), the prediction interval (lower, upper), covered (truth inside the
interval; <NA> where the interval is undefined) and interval_flag. Summary tables have per (series
or pool, model): mape (mean |pct_error| over the folds), coverage (share of defined intervals that
hold the truth) and the in-sample fit on all devices.

With 3 devices each simple fold fits a line through 2 points: it predicts, but its residual df is
0, so its interval is NaN with interval_flag :data:`benchcast.fits.FLAG_ZERO_DF`, and coverage is
NaN for that model. The paper chooses the feature with the largest in-sample R^2; :func:`select_simple`
sets that choice next to the lowest held-out MAPE. :func:`nested_choice` measures the error of
choosing by held-out error itself (the choice made without the held-out device); :func:`select_nested`
makes that choice on all devices, for the spec cards (:func:`benchcast.predict.predict_targets_nested`).
:func:`run` does all of it for a study.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.model_selection import LeaveOneGroupOut

from . import blockio, fits, floor, ratecap
from .features import (
    IO_PATH,
    POOL_ACROSS_WORKLOADS,
    POOL_PER_WORKLOAD,
    WORKLOAD_VARIABLES,
    candidate_features,
    feature_matrix,
    feature_sets,
    io_path_figures,
    io_path_min_per_op,
    io_path_weights,
    multiple_candidates,
    pool_table,
    profile_candidates,
    series_label,
    series_matrix,
    series_table,
    simple_candidates,
    study_table,
    varying_workload_variables,
)
from .records import SERIES_COLUMNS
from .workloads import read_fractions

FLAG_TOO_FEW = "too few training devices"
FLAG_CONSTANT = "feature constant over training devices"
FLAG_RANK = "design rank-deficient in this fold"
FLAG_BAND = "no interval of the model's own: the band of held-out errors beyond the measured devices"

SIMPLE_FOLD_COLUMNS = ["series", *SERIES_COLUMNS, "model", "features", "held_out", "x", "truth", "prediction",
                       "lower", "upper", "abs_error", "pct_error", "covered", "n_train", "resid_df", "interval_flag"]
SIMPLE_SUMMARY_COLUMNS = ["series", *SERIES_COLUMNS, "model", "features", "n_devices", "n_folds", "n_predicted",
                          "mape", "coverage", "n_intervals", "r2", "slope", "intercept", "baseline_mape"]


def baseline_pct_error(y) -> np.ndarray:
    """Percent error of the baseline: each device predicted by the mean of the other devices'
    results (no feature at all), 100 * (prediction - truth) / truth, for the values ``y``."""
    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * ((y.sum() - y) / (len(y) - 1) - y) / y


#: A candidate figure must be measured on at least this many of a series' devices (two to fit on,
#: one to hold out); where the first candidate source leaves none, the next is tried.
MIN_COVERED = 3


def _io_path_folds(agg: pd.DataFrame, F: pd.DataFrame, devices, min_per_op: float | None):
    """(F with the I/O-path figures, {device: those figures weighted without that device's own
    counters}); (F, {}) where ``min_per_op`` is None or no application reads and commits."""
    if min_per_op is None:
        return F, {}
    weights = io_path_weights(agg, None, min_per_op)
    if weights.empty:
        return F, {}
    plain = F
    F = F.join(io_path_figures(plain, weights))
    return F, {d: io_path_figures(plain, io_path_weights(agg[agg["device"] != d], None, min_per_op))
               .reindex(columns=list(weights["name"].unique())) for d in devices}


#: Label prefix of a log-log line's features: ``log(y) = a log(x) + b``, a power law ``y = e^b x^a``.
LOGLOG = "log-log "
#: Label prefix of a straight line fitted on relative errors (weights 1 / y^2).
RELATIVE = "relative "


def loo_simple(agg: pd.DataFrame, candidates=None, alpha: float = 0.05, io_paths: float | None = None,
               loglog: bool = False, relative: bool = False):
    """Leave-one-device-out validation of every simple model y = a + b x (x one candidate feature).

    ``candidates``: see :func:`benchcast.features.candidate_features` (None: all features). The
    computation is vectorised over the candidate features of a series; intervals are the textbook
    simple-regression prediction intervals (identical to statsmodels' obs_ci).

    ``io_paths`` (a ``min_per_op``, or None for none): the applications' I/O-path figures
    (:func:`benchcast.features.io_path_figures`) are candidates too, from the ``device`` records in
    ``agg``; in each fold their weights come from the other devices' counters alone, so the
    held-out device's own application runs never enter its prediction.

    ``loglog``: every candidate is also fitted as a log-log line (a power law y = e^b x^a, least
    squares on the logs of positive values), its features labelled ``LOGLOG + feature``; the
    prediction and its interval are the log-space ones taken back (exp), errors are on y itself.
    Its summary's ``slope`` is the exponent a, ``intercept`` b and ``r2`` the log-space R².

    ``relative``: every candidate is also fitted as a straight line by least squares on relative
    errors (weights 1 / y^2, :func:`benchcast.fits.relative_weights`), its features labelled
    ``RELATIVE + feature``: the line a percent error judges, which a slow device's large result
    does not pull away from the fast ones; its interval's spread scales with the prediction.

    Returns (folds, summary) with columns :data:`SIMPLE_FOLD_COLUMNS` and
    :data:`SIMPLE_SUMMARY_COLUMNS`. ``baseline_mape`` (one per series) is the held-out MAPE of
    predicting each device by the mean of the other devices' results (no feature at all): a model
    is only informative where it beats it. Where Y hardly varies over devices a near-flat line
    (R^2 ~ 0) has a small MAPE too, so compare with the baseline before trusting a low MAPE.
    """
    F = feature_matrix(agg)
    Y, keys = series_matrix(agg)
    devices = F.index.union(Y.index)
    F, Y = F.reindex(devices), Y.reindex(devices)
    F, path_folds = _io_path_folds(agg, F, devices, io_paths)
    logo = LeaveOneGroupOut()
    acc: dict[str, list] = {c: [] for c in ("series", "features", "held_out", "x", "truth", "prediction", "lower",
                                            "upper", "n_train", "resid_df", "interval_flag")}
    whole_acc: dict[str, list] = {c: [] for c in ("series", "features", "n_devices", "r2", "slope", "intercept",
                                                  "baseline_mape")}
    # (label prefix, log space, relative weights) of each form of line
    forms = [("", False, False)] + [(LOGLOG, True, False)] * loglog + [(RELATIVE, False, True)] * relative
    measured = F.notna().to_numpy()
    for series in Y.columns:
        key = keys.loc[series].to_dict()
        y = Y[series]
        present = y.notna().to_numpy()
        # figures measured on enough of the series' devices for a held-out fit (a fit on two, one held out)
        covered = F.columns[measured[present].sum(axis=0) >= MIN_COVERED]
        cands = candidate_features(series, key, candidates, covered)
        if not cands or present.sum() < 2:
            continue
        yv = y.to_numpy()[present]
        Xv = F[cands].to_numpy()[present]
        devs = devices[present]
        A = np.isfinite(Xv)
        XT = np.where(A, Xv, np.nan).T  # features x devices
        baseline_mape = float(np.mean(np.abs(baseline_pct_error(yv))))
        paths = [j for j, c in enumerate(cands) if path_folds and c in path_folds[devs[0]].columns]
        # per fold (the held-out device's position), the figures it is fitted and predicted on: the
        # I/O-path figures weighted without the held-out device's counters
        fold_X = {}
        for _, test in logo.split(Xv, yv, groups=devs):
            i = int(test[0])
            fold_X[i] = XT
            if paths:
                fold_X[i] = XT.copy()
                fold_X[i][paths] = path_folds[devs[i]].reindex(devs)[[cands[j] for j in paths]].to_numpy().T
        for prefix, log, rel in forms:
            t = fits.log_positive if log else np.asarray  # the space the line is fitted in
            back = np.exp if log else np.asarray
            names = np.asarray([prefix + c for c in cands], dtype=object)
            yt, Xt = t(yv), t(XT)
            w = fits.relative_weights(yv)[None, :] if rel else None
            whole = fits.simple(yt[None, :], Xt, min_n=2, weights=w)
            for i, XF in fold_X.items():
                y_train = yt.copy()
                y_train[i] = np.nan
                XFt = t(XF) if paths else Xt
                fit = fits.simple(y_train[None, :], XFt, min_n=2, weights=w)
                x0, x0t = XF[:, i], XFt[:, i]
                pred, lo, hi, df = (v[0] for v in fits.simple_predict(fit, x0t[None, :], alpha, relative=rel))
                pred, lo, hi = back(pred), back(lo), back(hi)
                m = fit.n[0]
                const = (m >= 2) & np.isnan(fit.a[0])
                flag = np.select([m < 2, const, df <= 0], [FLAG_TOO_FEW, FLAG_CONSTANT, fits.FLAG_ZERO_DF], "")
                keep = np.isfinite(x0t)  # no row where the held-out device lacks the figure
                k = int(keep.sum())
                truth = yv[i]
                acc["series"].append(np.repeat(series, k))
                acc["features"].append(names[keep])
                acc["held_out"].append(np.repeat(devs[i], k))
                acc["x"].append(x0[keep])
                acc["truth"].append(np.repeat(truth, k))
                acc["prediction"].append(pred[keep])
                acc["lower"].append(lo[keep])
                acc["upper"].append(hi[keep])
                acc["n_train"].append(m[keep].astype(int))
                acc["resid_df"].append(df[keep].astype(float))
                acc["interval_flag"].append(flag[keep])
            whole_acc["series"].append(np.repeat(series, len(names)))
            whole_acc["features"].append(names)
            whole_acc["n_devices"].append(np.isfinite(Xt).sum(axis=1))
            whole_acc["r2"].append(whole.r2[0])
            whole_acc["slope"].append(whole.a[0])
            whole_acc["intercept"].append(whole.b[0])
            whole_acc["baseline_mape"].append(np.repeat(baseline_mape, len(names)))
    if not whole_acc["series"]:
        return pd.DataFrame(columns=SIMPLE_FOLD_COLUMNS), pd.DataFrame(columns=SIMPLE_SUMMARY_COLUMNS)
    folds = pd.DataFrame({c: np.concatenate(v) for c, v in acc.items()})
    folds["covered"] = fits.covered(folds["truth"], folds["lower"], folds["upper"])
    folds["abs_error"] = (folds["prediction"] - folds["truth"]).abs()
    folds["pct_error"] = 100 * (folds["prediction"] - folds["truth"]) / folds["truth"]
    folds["model"] = "simple"
    folds = folds.join(keys, on="series")[SIMPLE_FOLD_COLUMNS]
    summ = _summarise(folds, ["series", "features"])
    base = pd.DataFrame({c: np.concatenate(v) for c, v in whole_acc.items()}).join(keys, on="series")
    base["model"] = "simple"
    summary = base.merge(summ, on=["series", "features"], how="left")
    summary["n_folds"] = summary["n_devices"]  # one fold per device that has the figure and the result
    summary["n_predicted"] = summary["n_predicted"].fillna(0).astype(int)
    return folds, summary[SIMPLE_SUMMARY_COLUMNS]


def _summarise(folds: pd.DataFrame, by) -> pd.DataFrame:
    f = folds.assign(
        _ape=folds["pct_error"].abs(),
        _pred=folds["prediction"].notna(),
        _int=folds["covered"].notna(),
        _cov=folds["covered"].astype("Float64"),
    )
    g = f.groupby(by, sort=False)
    out = pd.DataFrame({
        "n_predicted": g["_pred"].sum().astype(int),
        "mape": g["_ape"].mean(),
        "coverage": g["_cov"].mean().astype(float),
        "n_intervals": g["_int"].sum().astype(int),
    })
    return out.reset_index()


MULTI_FOLD_COLUMNS = ["pool", "series", *SERIES_COLUMNS, "model", "features", "variables", "held_out", "truth",
                      "prediction", "lower", "upper", "abs_error", "pct_error", "covered", "n_train",
                      "n_train_devices", "resid_df", "device_df", "interval_flag"]
MULTI_SUMMARY_COLUMNS = ["pool", "pool_by", "model", "features", "variables", "n_figures", "n_devices", "n_rows",
                         "n_folds", "n_predicted", "mape", "coverage", "n_intervals", "rsquared", "rsquared_adj"]
REFUSAL_COLUMNS = ["pool", "pool_by", "model", "features", "n_figures", "n_devices", "reason"]


def _pool_models(agg: pd.DataFrame, candidates, pool_by, read_fraction, max_figures, refusals: list):
    """The multiple models of :func:`loo_multiple`, one at a time: (pool, keys, rows, features,
    variables, X, y, groups) with ``keys`` the pool's result rows' ``series`` and
    :data:`SERIES_COLUMNS` (arrays by column name), ``rows`` the mask of those that have every
    feature, and X the design matrix as an array (const, features, variables) over them; the models
    not fitted go to ``refusals``. Arrays, not frames: the nested choice asks for tens of thousands
    of models."""
    pool_by_s = ",".join(pool_by)
    P = pool_table(agg, pool_by, read_fraction)
    F = feature_matrix(agg)
    for pool, G in P.groupby("pool", sort=False):
        # candidate features common to every series of the pool, measured on enough of its devices
        on_pool = F.reindex(sorted(G["device"].unique()))
        feats_all = list(F.columns[(on_pool.notna().sum() >= MIN_COVERED).to_numpy()])
        cands = None
        for series, row in G.drop_duplicates("series").set_index("series").iterrows():
            c = candidate_features(series, row[SERIES_COLUMNS].to_dict(), candidates, feats_all)
            cands = c if cands is None else [f for f in cands if f in c]
        cands = cands or []
        if not cands:  # listed, so that every pool of the study has a row in the selection
            refusals.append({"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": "",
                             "n_figures": 0, "n_devices": G["device"].nunique(),
                             "reason": "no candidate figure common to the pool's series"})
            continue
        variables = varying_workload_variables(G[WORKLOAD_VARIABLES])
        unknown_rf = sorted(G.loc[G["read_fraction"].isna(), "workload"].unique())
        if G["workload"].nunique() > 1 and unknown_rf:
            reason = f"read fraction unknown for workload(s) {', '.join(unknown_rf)}"
            for fs in feature_sets(cands, max_figures):
                refusals.append({"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": "+".join(fs),
                                 "n_figures": len(fs), "n_devices": G["device"].nunique(), "reason": reason})
            continue
        G = G.reset_index(drop=True)
        values = G[cands + variables + ["value"]].astype(float)
        known = values.notna().to_numpy()
        col = {c: i for i, c in enumerate(values.columns)}
        A = values.to_numpy()
        devices = G["device"].to_numpy()
        device_codes = pd.factorize(devices)[0]  # counted per model in integers, not strings
        keys = {c: G[c].to_numpy() for c in ["series", *SERIES_COLUMNS]}
        var_idx = [col[v] for v in variables]
        for fs in feature_sets(cands, max_figures):
            fs = list(fs)
            rows = known[:, [col[f] for f in fs] + [col["value"]]].all(axis=1)
            n_dev = np.count_nonzero(np.bincount(device_codes[rows]))
            reason = fits.check_device_figures(len(fs), n_dev)
            columns = ["const", *fs, *variables]
            if not reason:
                X = np.column_stack([np.ones(rows.sum()), A[rows][:, [col[f] for f in fs] + var_idx]])
                if rows.sum() < X.shape[1] or fits.matrix_rank(X) < X.shape[1]:
                    reason = f"design rank-deficient ({rows.sum()} rows, columns {', '.join(columns)})"
            if reason:
                refusals.append({"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": "+".join(fs),
                                 "n_figures": len(fs), "n_devices": n_dev, "reason": reason})
                continue
            yield pool, keys, rows, fs, variables, X, A[rows, col["value"]], devices[rows]


def loo_multiple(agg: pd.DataFrame, candidates=None, alpha: float = 0.05, pool_by=POOL_PER_WORKLOAD,
                 read_fraction: Mapping | None = None, max_figures: int = 2,
                 ):
    """Leave-one-device-out validation of multiple models pooled over devices and data sizes.

    A pool is the result rows sharing ``pool_by`` (default per workload: benchmark, engine,
    workload, op, metric, unit; :data:`benchcast.features.POOL_ACROSS_WORKLOADS` pools the
    workloads too). Each model is ``value ~ const + device figures + workload variables``:
    the device figures are each single candidate and each pair (up to ``max_figures``) of the
    candidates common to the pool's series; the workload variables are those of data_gb,
    log2_data_gb, read_fraction (``read_fraction[workload]``), threads that vary in the pool.

    A feature set with more device figures than the pool's devices support
    (:func:`benchcast.features.max_device_figures`: figures <= devices - 2, checked on the devices
    of the whole pool) is not fitted: it gets a refusal record. Each fold then fits on one device
    fewer; where that leaves no residual df across devices (devices - 1 - figures - 1 < 1) the
    statsmodels interval only reflects within-device (data-size) scatter, and the fold row says
    so (interval_flag :data:`benchcast.features.fits.FLAG_NO_DEVICE_DF`, column device_df).

    Returns (folds, summary, refusals) with columns :data:`MULTI_FOLD_COLUMNS`,
    :data:`MULTI_SUMMARY_COLUMNS` and :data:`REFUSAL_COLUMNS`.
    """
    pool_by = list(pool_by)
    pool_by_s = ",".join(pool_by)
    folds, summaries, refusals = [], [], []
    for pool, keys, rows, fs, variables, X, y, groups in _pool_models(agg, candidates, pool_by, read_fraction,
                                                                      max_figures, refusals):
        n_dev = len(pd.unique(groups))
        label = "+".join(fs)
        full = fits.fit_ols(pd.DataFrame(X, columns=["const", *fs, *variables]), y)
        loo = fits.ols_loo(X, y, groups, alpha)
        device_df = n_dev - 1 - len(fs) - 1
        flag = np.select([~loo.fitted, loo.resid_df <= 0, device_df < 1],
                         [FLAG_RANK, fits.FLAG_ZERO_DF, fits.FLAG_NO_DEVICE_DF], "")
        _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
        order = np.argsort(groups, kind="stable")  # fold by fold, as LeaveOneGroupOut
        n = len(y)
        folds.append({
            "pool": np.full(n, pool, dtype=object), **{c: keys[c][rows] for c in ["series", *SERIES_COLUMNS]},
            "model": np.full(n, "multiple", dtype=object), "features": np.full(n, label, dtype=object),
            "variables": np.full(n, "+".join(variables), dtype=object), "held_out": groups,
            "truth": y, "prediction": loo.prediction, "lower": loo.lower, "upper": loo.upper,
            "n_train": n - counts[inverse], "n_train_devices": np.full(n, n_dev - 1),
            "device_df": np.full(n, device_df), "resid_df": loo.resid_df, "interval_flag": flag,
            "_order": order,
        })
        summaries.append({"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": label,
                          "variables": "+".join(variables), "n_figures": len(fs), "n_devices": n_dev,
                          "n_rows": n, "n_folds": n_dev, "rsquared": full.rsquared,
                          "rsquared_adj": full.rsquared_adj})
    ref = pd.DataFrame(refusals, columns=REFUSAL_COLUMNS)
    if not folds:
        return pd.DataFrame(columns=MULTI_FOLD_COLUMNS), pd.DataFrame(columns=MULTI_SUMMARY_COLUMNS), ref
    # one frame from the models' columns (a frame per model costs more than the fits)
    folds_df = pd.DataFrame({c: np.concatenate([f[c][f["_order"]] for f in folds])
                             for c in folds[0] if c != "_order"})
    folds_df["abs_error"] = (folds_df["prediction"] - folds_df["truth"]).abs()
    folds_df["pct_error"] = 100 * (folds_df["prediction"] - folds_df["truth"]) / folds_df["truth"]
    folds_df["covered"] = fits.covered(folds_df["truth"], folds_df["lower"], folds_df["upper"])
    folds_df = folds_df[MULTI_FOLD_COLUMNS]
    summ = pd.DataFrame(summaries).merge(_summarise(folds_df, ["pool", "features"]), on=["pool", "features"],
                                         how="left")
    return folds_df, summ[MULTI_SUMMARY_COLUMNS], ref


def _multiple_inner(agg: pd.DataFrame, candidates, pool_by, read_fraction, max_figures) -> pd.DataFrame:
    """Leave-one-device-out predictions of every multiple model of :func:`loo_multiple` (columns
    series, features, held_out, prediction, pct_error; prediction NaN where a fold could not
    fit): the same fits without intervals, fold tables or in-sample fits (what
    :func:`nested_choice` scores its inner folds by, :func:`fold_scores`)."""
    series, features, held_out, pred, pct = [], [], [], [], []
    for _, keys, rows, fs, _, X, y, groups in _pool_models(agg, candidates, list(pool_by), read_fraction,
                                                           max_figures, []):
        loo = fits.ols_loo(X, y, groups, None)
        p = np.where(loo.fitted, loo.prediction, np.nan)
        series.append(keys["series"][rows])
        features.append(np.full(len(y), "+".join(fs), dtype=object))
        held_out.append(np.asarray(groups))
        pred.append(p)
        pct.append(100 * (p - y) / y)
    if not series:
        return pd.DataFrame(columns=["series", "features", "held_out", "prediction", "pct_error"])
    return pd.DataFrame({"series": np.concatenate(series), "features": np.concatenate(features),
                         "held_out": np.concatenate(held_out), "prediction": np.concatenate(pred),
                         "pct_error": np.concatenate(pct)})


def _choose(summary: pd.DataFrame, by, r2_col: str, complete: pd.Series) -> pd.DataFrame:
    """Per group of ``by``: row of max ``r2_col`` (in-sample) and row of min mape among complete models."""
    s = summary.reset_index(drop=True).assign(_order=lambda d: np.arange(len(d)), _complete=complete.to_numpy())
    r2 = s.dropna(subset=[r2_col]).sort_values([r2_col, "_order"], ascending=[False, True]).groupby(by, sort=False).head(1)
    ho = s[s["_complete"]].dropna(subset=["mape"]).sort_values(["mape", "_order"]).groupby(by, sort=False).head(1)
    return r2.set_index(by), ho.set_index(by)


def select_simple(summary: pd.DataFrame) -> pd.DataFrame:
    """Per series: the paper's choice (max in-sample R^2) next to the lowest held-out MAPE.

    Only models predicted in every fold compete on MAPE, and only the paper's straight lines: log-log
    lines (:data:`LOGLOG`) and lines on relative errors (:data:`RELATIVE`) compete in the nested
    choice alone, so these two choices stay the paper's kind of model. Columns: series, SERIES_COLUMNS,
    n_candidates, baseline_mape (if in ``summary``), paper_feature, paper_r2, paper_mape, paper_coverage, selected_feature,
    selected_r2, selected_mape, selected_coverage, differ (the two choices differ).
    """
    summary = summary[~summary["features"].str.startswith((LOGLOG, RELATIVE))]
    complete = summary["n_predicted"] == summary["n_folds"]
    r2, ho = _choose(summary, ["series"], "r2", complete)
    base = summary.drop_duplicates("series").set_index("series")[SERIES_COLUMNS]
    base["n_candidates"] = summary.groupby("series", sort=False).size()
    if "baseline_mape" in summary:
        base["baseline_mape"] = summary.groupby("series", sort=False)["baseline_mape"].first()
    cols = {"features": "feature", "r2": "r2", "mape": "mape", "coverage": "coverage"}
    for prefix, t in (("paper", r2), ("selected", ho)):
        for c, n in cols.items():
            base[f"{prefix}_{n}"] = t[c].reindex(base.index)
    base["differ"] = base["paper_feature"].ne(base["selected_feature"]) & base["selected_feature"].notna()
    return base.reset_index()


def select_multiple(summary: pd.DataFrame, refusals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per pool: the model with max in-sample adjusted R^2 next to the lowest held-out MAPE.

    Only models predicted for every held-out row compete on MAPE; pools whose every model was
    refused are listed with empty choices (see the refusals). Columns: pool, pool_by, variables,
    n_candidates (models fitted), n_refused, r2_features, r2_rsquared_adj,
    r2_mape, r2_coverage, selected_features, selected_rsquared_adj, selected_mape,
    selected_coverage, differ.
    """
    complete = summary["n_predicted"] == summary["n_rows"]  # every held-out row predicted
    r2, ho = _choose(summary, ["pool"], "rsquared_adj", complete)
    base = summary.drop_duplicates("pool").set_index("pool")[["pool_by", "variables"]]
    if refusals is not None and len(refusals):
        only = refusals.drop_duplicates("pool").set_index("pool")[["pool_by"]]
        base = pd.concat([base, only[~only.index.isin(base.index)].assign(variables="")])
        nref = refusals.groupby("pool").size()
    else:
        nref = pd.Series(dtype=int)
    base["n_candidates"] = summary.groupby("pool", sort=False).size().reindex(base.index).fillna(0).astype(int)
    base["n_refused"] = nref.reindex(base.index).fillna(0).astype(int)
    for prefix, t in (("r2", r2), ("selected", ho)):
        base[f"{prefix}_features"] = t["features"].reindex(base.index)
        base[f"{prefix}_rsquared_adj"] = t["rsquared_adj"].reindex(base.index)
        base[f"{prefix}_mape"] = t["mape"].reindex(base.index)
        base[f"{prefix}_coverage"] = t["coverage"].reindex(base.index)
    base["differ"] = base["r2_features"].ne(base["selected_features"]) & base["selected_features"].notna()
    return base.reset_index()


KIND_NESTED = "nested choice (simple or multiple)"
KIND_HELDOUT = "simple (held-out choice)"
KIND_PAPER = "simple (paper: max R²)"
KIND_MULTIPLE = "multiple (held-out choice)"


def nested_choice(table: pd.DataFrame, folds: pd.DataFrame, candidates, mfolds: pd.DataFrame | None = None,
                  mcandidates=None, pool_by=POOL_PER_WORKLOAD, read_fraction: Mapping | None = None,
                  max_figures: int = 2, io_paths: float | None = None, top: int = 1,
                  loglog: bool = False, share=(), level: float | None = None,
                  relative: bool = False) -> pd.DataFrame:
    """Held-out predictions of a device the model never saw, not even to choose the model.

    The held-out choices (:func:`select_simple`, :func:`select_multiple`) pick the model with the
    lowest MAPE over all folds, the held-out device's own fold included, so their MAPE flatters.
    Here, for each device d, every candidate model of a series (each simple feature of
    ``candidates``; with ``mfolds``, each multiple model of :func:`loo_multiple` with
    ``mcandidates``) is scored by leave-one-out MAPE over the *other* devices alone (a simple model
    before a multiple one on a tie), and d's prediction is a model's fold fitted without d (the row
    of ``folds`` or ``mfolds``). Only models predicted in every inner fold compete.

    ``top`` (odd): of the ``top`` best-scored models, the one whose prediction for d is the median
    wins (:func:`median_model`); with fewer models, the largest odd number of them. ``top=1`` is
    the best-scored model alone. A choice by five inner folds is noisy: the median of the few best
    models does not follow one lucky score.

    Rows as ``folds``, with ``model`` saying which kind won; ``io_paths``, ``loglog`` and
    ``relative`` as in :func:`loo_simple` (the inner folds weigh the I/O-path figures by the other
    devices' counters; with ``loglog`` and ``relative`` those lines of ``folds`` compete too).

    ``share`` (series columns, e.g. ``("data_size", "workload")``): a model's score is the mean of
    its inner MAPE over the series that differ only in those columns (each application's
    I/O-path figure counts as one model, :func:`shared_scores`): series of one engine and
    operation choose from more inner folds, each still fitted on its own.

    ``level``: each row also gets the column ``log_spread`` for :func:`widen`: where its prediction
    lies beyond the other devices' results (extrapolation), :func:`interval_spread` of the inner
    folds' errors of the ranked models, else NaN (None: no such column)."""
    parts = []
    multiple = mfolds is not None and len(mfolds) > 0
    for d in pd.unique(folds["held_out"]):
        rest = table[table["device"] != d]
        ifolds, inner = loo_simple(rest, candidates, io_paths=io_paths, loglog=loglog, relative=relative)
        minner = _multiple_inner(rest, mcandidates, pool_by, read_fraction, max_figures) if multiple else None
        s = rank_models(rest, inner, None if minner is None else fold_scores(minner), top=top, share=share)
        rows = []
        for model, outer in (("simple", folds), ("multiple", mfolds)):
            chosen = s.loc[s["model"] == model, ["series", "features", "_rank"]]
            if outer is not None and len(chosen):
                rows.append(outer[outer["held_out"] == d].merge(chosen, on=["series", "features"]))
        if rows:
            got = median_model(pd.concat(rows, ignore_index=True))
            if level is not None:
                Yr, kr = series_matrix(rest)
                spread = interval_spread(inner_errors(ifolds, minner), s, Yr, kr, share, level)
                got["log_spread"] = spread_of(got, spread, Yr)
            parts.append(got)
    if not parts:
        return folds.iloc[:0]
    return pd.concat(parts, ignore_index=True)


def rank_models(table: pd.DataFrame, summary: pd.DataFrame, mscores: pd.DataFrame | None = None, top: int = 1,
                share=()) -> pd.DataFrame:
    """The ``top`` best models of every series of ``table`` by leave-one-device-out MAPE over its
    devices: the choosing step of :func:`nested_choice`, which calls it on the devices other than the
    held-out one, and of :func:`run`'s ``nested_selection``, which calls it on all devices to
    choose the models that predict the spec cards.

    ``summary``: :func:`loo_simple`'s summary of ``table`` (only models predicted in every fold
    compete); ``mscores``: the multiple models' scores (series, features, mape; :func:`fold_scores`
    of :func:`loo_multiple`'s or :func:`_multiple_inner`'s folds), which compete too (a simple
    model before a multiple one on a tie); ``share`` as in :func:`nested_choice`. Columns series,
    features, model, mape (the score, shared where ``share``), _rank (0 the best)."""
    complete = summary["n_predicted"] == summary["n_folds"]
    scores = [summary.loc[complete, ["series", "features", "mape"]].assign(model="simple")]
    if mscores is not None:
        scores.append(mscores.assign(model="multiple"))
    s = pd.concat(scores, ignore_index=True).dropna(subset=["mape"])
    if share:
        s = shared_scores(s, series_matrix(table)[1], share)
    s = s.assign(_order=np.arange(len(s))).sort_values(["mape", "_order"])
    s = s.assign(_rank=s.groupby("series", sort=False).cumcount())
    return s.loc[s["_rank"] < top, ["series", "features", "model", "mape", "_rank"]]


def fold_scores(mfolds: pd.DataFrame) -> pd.DataFrame:
    """Per series and multiple model of :func:`loo_multiple`'s folds, the MAPE over its held-out
    rows (columns series, features, mape), for models that predicted every row; the same for
    :func:`_multiple_inner`'s folds."""
    f = mfolds.assign(_ape=mfolds["pct_error"].abs(), _miss=mfolds["prediction"].isna())
    g = f.groupby(["series", "features"], sort=False)
    m = pd.DataFrame({"mape": g["_ape"].mean(), "missing": g["_miss"].sum()}).reset_index()
    return m.loc[m["missing"] == 0, ["series", "features", "mape"]]


def inner_errors(folds: pd.DataFrame, mfolds: pd.DataFrame | None = None) -> pd.DataFrame:
    """The held-out errors of simple (``folds``) and multiple (``mfolds``) models as one table:
    series, model, features, held_out, prediction, pct_error."""
    cols = ["series", "features", "held_out", "prediction", "pct_error"]
    parts = [folds[cols].assign(model="simple")]
    if mfolds is not None and len(mfolds):
        parts.append(mfolds[cols].assign(model="multiple"))
    return pd.concat(parts, ignore_index=True)


def families(keys: pd.DataFrame, share) -> pd.Series:
    """Per series (``keys``: index series, :data:`SERIES_COLUMNS`), a label shared by the series
    whose keys differ only in the columns ``share``."""
    return keys[[c for c in SERIES_COLUMNS if c not in set(share)]].astype(str).agg("|".join, axis=1)


def within_range(Y: pd.DataFrame, series, held_out, prediction) -> np.ndarray:
    """Whether each prediction lies within the results of the series' other devices (``Y``: device
    x series; the devices other than ``held_out``, all of them where ``held_out`` is not one of
    ``Y``'s devices): what a model knows when it predicts, interpolation or not."""
    j = Y.columns.get_indexer(pd.Index(series))
    A = Y.to_numpy(dtype=float)[:, np.maximum(j, 0)]  # devices x rows
    n = np.isfinite(A).sum(axis=0)
    A[np.asarray(Y.index, dtype=object)[:, None] == np.asarray(held_out, dtype=object)[None, :]] = np.nan
    lo, hi = np.fmin.reduce(A, axis=0), np.fmax.reduce(A, axis=0)  # NaN ignored
    p = np.asarray(prediction, dtype=float)
    return (j >= 0) & (n >= 2) & (lo <= p) & (p <= hi)


def interval_spread(errors: pd.DataFrame, ranked: pd.DataFrame, Y: pd.DataFrame, keys: pd.DataFrame, share,
                    level: float) -> pd.Series:
    """How far the nested choice misses where it extrapolates, for an interval that says so: per
    series of ``ranked`` (:func:`rank_models`), the split-conformal quantile at ``level`` of
    |log(prediction / truth)| over the leave-one-device-out errors ``errors`` (:func:`inner_errors`)
    of the ranked models of every series of its family (the series whose keys, ``keys`` index
    series, differ only in the columns ``share``; each series alone without ``share``) on devices
    whose result lies beyond the other devices' results (``Y``, :func:`within_range`; all of the
    family's errors where none does): of n errors the ceil((n + 1) level)-th smallest (the largest
    where that is beyond n). Index series; NaN for a series without errors."""
    fam = families(keys, share)
    e = errors.merge(ranked[["series", "model", "features"]], on=["series", "model", "features"])
    with np.errstate(invalid="ignore", divide="ignore"):
        truth = e["prediction"] / (1 + e["pct_error"].astype(float) / 100)
        e = e.assign(_r=np.abs(np.log1p(e["pct_error"].astype(float) / 100)), _f=e["series"].map(fam),
                     _in=within_range(Y, e["series"], e["held_out"], truth))
    e = e[np.isfinite(e["_r"])]

    def quantile(r):
        v = np.sort(r.to_numpy())
        return v[min(len(v), int(np.ceil((len(v) + 1) * level))) - 1]

    q = e[~e["_in"]].groupby("_f")["_r"].agg(quantile)
    q = q.combine_first(e.groupby("_f")["_r"].agg(quantile))
    f = pd.Series(pd.unique(ranked["series"]))
    return pd.Series(f.map(fam).map(q).to_numpy(dtype=float), index=f.to_numpy())


def spread_of(rows: pd.DataFrame, spread: pd.Series, Y: pd.DataFrame, at: str = "held_out") -> np.ndarray:
    """Per row of ``rows`` (series, prediction, the predicted device or target in column ``at``), the
    series' ``spread`` (:func:`interval_spread`) where the prediction lies beyond the results of the
    devices it was fitted on (``Y``, :func:`within_range`), NaN where it lies within them."""
    inside = within_range(Y, rows["series"], rows[at], rows["prediction"])
    return np.where(inside, np.nan, spread.reindex(rows["series"]).to_numpy(dtype=float))


def widen(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (predictions with lower, upper and the column ``log_spread``, :func:`interval_spread`)
    with each interval widened to hold prediction * exp(-log_spread) .. prediction * exp(log_spread)
    (a model's own interval kept where it is wider; where it has none, the band alone, and
    ``interval_flag`` says so: :data:`FLAG_BAND`), without ``log_spread``; ``covered`` recomputed
    where the rows have a truth. Rows without a spread or a
    positive prediction keep their interval. A positive prediction's lower bound below zero is
    zero: every result is a positive quantity (a latency, a rate), whatever a straight line's
    symmetric interval says."""
    if "log_spread" not in rows.columns:
        return rows
    out = rows.drop(columns="log_spread")
    q = rows["log_spread"].astype(float).to_numpy()
    p = rows["prediction"].astype(float).to_numpy()
    ok = np.isfinite(q) & (p > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        lo, hi = p * np.exp(-q), p * np.exp(q)
    lower = np.where(ok, np.fmin(rows["lower"].astype(float), lo), rows["lower"].astype(float))
    out["lower"] = np.where((p > 0) & (lower < 0), 0.0, lower)
    out["upper"] = np.where(ok, np.fmax(rows["upper"].astype(float), hi), rows["upper"].astype(float))
    if "interval_flag" in out.columns:
        band_only = ok & rows["lower"].isna().to_numpy() & rows["upper"].isna().to_numpy()
        out["interval_flag"] = np.where(band_only, FLAG_BAND, out["interval_flag"])
    if "truth" in out.columns and "covered" in out.columns:
        out["covered"] = fits.covered(out["truth"], out["lower"], out["upper"])
    return out


NESTED_SELECTION_COLUMNS = ["series", *SERIES_COLUMNS, "rank", "model", "features", "score_mape", "log_spread_beyond",
                            "pool", "pool_by", "variables"]


def select_nested(ranked: pd.DataFrame, keys: pd.DataFrame, mfolds: pd.DataFrame | None = None,
                  msummary: pd.DataFrame | None = None, spread: pd.Series | None = None) -> pd.DataFrame:
    """The nested choice's models on all devices, to predict the spec cards by the procedure that
    validation measured: :func:`rank_models` output ``ranked`` (of the whole study) as a table,
    rank 1 the best, with the series' keys (``keys``: index series) and, for a multiple model, its
    pool, how the pool is formed and its variables (from :func:`loo_multiple`'s ``mfolds`` and
    ``msummary``), and ``log_spread_beyond``: ``spread`` (:func:`interval_spread`; NaN without it).
    Columns :data:`NESTED_SELECTION_COLUMNS`."""
    out = ranked.rename(columns={"mape": "score_mape"}).assign(rank=ranked["_rank"] + 1).drop(columns="_rank")
    out["log_spread_beyond"] = np.nan if spread is None else out["series"].map(spread).astype(float)
    out = out.join(keys, on="series")
    if mfolds is not None and len(mfolds):
        pools = mfolds[["series", "pool"]].drop_duplicates("series")
        how = msummary[["pool", "features", "pool_by", "variables"]].drop_duplicates(["pool", "features"])
        multi = out[out["model"] == "multiple"].merge(pools, on="series", how="left")
        multi = multi.merge(how, on=["pool", "features"], how="left")
        out = pd.concat([out[out["model"] != "multiple"], multi], ignore_index=True)
    out = out.reindex(columns=NESTED_SELECTION_COLUMNS)
    return out.sort_values(["series", "rank"], kind="stable").reset_index(drop=True)


def shared_scores(scores: pd.DataFrame, keys: pd.DataFrame, share) -> pd.DataFrame:
    """``scores`` (series, features, model, mape) with each mape replaced by the mean of the same
    model's mape over the series whose keys (``keys``: index series, :data:`SERIES_COLUMNS`) differ
    only in the columns ``share``. An I/O-path figure (``io_path[engine/workload]``, also inside a
    multiple model or a log-log line) is one model across workloads."""
    fam = families(keys, share)
    label = scores["features"].str.replace(re.escape(IO_PATH) + r"\[[^\]]*\]", IO_PATH, regex=True)
    group = [scores["series"].map(fam).fillna(scores["series"]), scores["model"], label]  # unknown: alone
    return scores.assign(mape=scores.groupby(group)["mape"].transform("mean"))


def median_model(ranked: pd.DataFrame, by=("series",)) -> pd.DataFrame:
    """Per series (per group of the columns ``by``), the row whose ``prediction`` is the median of
    the best-ranked rows: of the largest odd number of them (``_rank`` 0 is the best; 1 row or 2:
    the best alone). Returns the rows without ``_rank``, in the order of their group's first
    appearance."""
    if ranked.empty:
        return ranked.drop(columns="_rank")
    out = []
    for _, g in ranked.sort_values("_rank", kind="stable").groupby(list(by), sort=False):
        g = g.iloc[:len(g) - (1 - len(g) % 2)]  # an odd count: the median is one model's row
        out.append(g.iloc[[int(np.argsort(g["prediction"].to_numpy(), kind="stable")[len(g) // 2])]])
    return pd.concat(out).drop(columns="_rank")


TIER_COLUMNS = ["series", *SERIES_COLUMNS, "held_out", "position", "truth", "truth_cv_pct", "truth_se_pct",
                "baseline_pct_error",
                "nested_model", "nested_features", "nested_pct_error", "heldout_features", "heldout_pct_error",
                "paper_features", "paper_pct_error", "multiple_features", "multiple_pct_error"]
_TIER_KINDS = {KIND_NESTED: "nested", KIND_HELDOUT: "heldout", KIND_PAPER: "paper", KIND_MULTIPLE: "multiple"}


def tiers(chosen: pd.DataFrame, agg: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per series and held-out device (tier): the held-out percent error of each kind of model and
    of the baseline (the mean of the other devices), and the tier's position: ``interior`` when
    its result lies inside the other devices' range (the model interpolates), ``extreme`` when it
    is the lowest or highest (extrapolation). ``truth_cv_pct``: the coefficient of variation of the
    held-out result's own runs, in percent, from the aggregated rows ``agg`` (NaN without them);
    ``truth_se_pct``: the standard error of its trimmed mean, in percent (:func:`floor.truth_se`): a
    miss of that size is the measurement's noise, not the model's. Rows interior first; columns
    :data:`TIER_COLUMNS`."""
    if chosen.empty:
        return pd.DataFrame(columns=TIER_COLUMNS)
    t = chosen.drop_duplicates(["series", "held_out"])[["series", *SERIES_COLUMNS, "held_out", "truth"]].copy()
    t["truth_cv_pct"] = t["truth_se_pct"] = np.nan
    if agg is not None and "cv" in agg.columns:
        s = series_table(agg)
        at, rows = (pd.MultiIndex.from_arrays(a) for a in ([s["series"], s["device"]], [t["series"], t["held_out"]]))
        t["truth_cv_pct"] = pd.Series(100 * s["cv"].to_numpy(dtype=float), index=at).reindex(rows).to_numpy()
        if {"std", "n", "k"} <= set(s.columns):
            t["truth_se_pct"] = floor.truth_se(s).reindex(rows).to_numpy()
    g = t.groupby("series")["truth"]
    t["baseline_pct_error"] = g.transform(baseline_pct_error)
    t["position"] = np.where((t["truth"] == g.transform("min")) | (t["truth"] == g.transform("max")),
                             "extreme", "interior")
    for kind, short in _TIER_KINDS.items():
        k = chosen[chosen["kind"] == kind][["series", "held_out", "model", "features", "pct_error"]]
        k = k.rename(columns={"model": f"{short}_model", "features": f"{short}_features",
                              "pct_error": f"{short}_pct_error"})
        k = k.drop(columns=[] if short == "nested" else [f"{short}_model"])
        t = t.merge(k.drop_duplicates(["series", "held_out"]), on=["series", "held_out"], how="left")
    t["_pos"] = (t["position"] != "interior").astype(int)
    t = t.sort_values(["_pos", "series", "truth"], kind="mergesort")
    return t[TIER_COLUMNS].reset_index(drop=True)


VERDICT_PREDICTABLE = "predictable from device figures"
VERDICT_INDEPENDENT = "device-independent"
VERDICT_OFF_PATH = "device-independent: its operations do not reach the device"
#: The verdicts that label a series device-independent (by its results, or by its device requests).
DEVICE_INDEPENDENT = (VERDICT_INDEPENDENT, VERDICT_OFF_PATH)
VERDICT_BETTER = "device-dependent; the model beats the baseline but misses the tolerance"
VERDICT_NONE = "not predictable: no better than the mean of the other devices"
VERDICT_FEW = "too few devices to judge (a nested choice needs 4, an interior tier 3)"
VERDICT_COLUMNS = ["series", *SERIES_COLUMNS, "n_devices", "n_interior", "spread", "feature",
                   "interior_mape", "interior_baseline_mape", "baseline_mape", "extreme_mape",
                   "extreme_baseline_mape", "multiple_interior_mape", "interior_floor_mape", "device_requests_per_op",
                   "verdict"]


def verdicts(tier_table: pd.DataFrame, tolerance: float, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per series, what held-out validation says: MAPE on interior and extreme tiers of the
    nested-choice model (:func:`nested_choice`) and of the baseline, the spread of the
    results over devices (max / min), and a verdict: device-independent (the baseline is within
    ``tolerance`` % on every tier taken together: the device hardly matters; or, from
    ``requests`` (:func:`benchcast.blockio.requests_per_op`), the workload's operations sent fewer
    than :data:`benchcast.blockio.OFF_PATH_BELOW` device requests each on every device that counts
    them, at least :data:`MIN_COVERED` of the series' devices (a tmpfs has no counters): what
    differs between devices is not the device), predictable (beats the baseline on the
    interior tiers, interior MAPE <= ``tolerance`` %), better than the baseline but outside the
    tolerance, not predictable, or too few devices to judge. ``interior_floor_mape``: the MAPE a
    perfect model would still have on the interior tiers, from the truths' standard errors alone
    (:func:`floor.expected_abs_error`). Columns :data:`VERDICT_COLUMNS`."""
    if tier_table.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    keys = ["benchmark", "engine", "workload", "threads"]
    req = {} if requests is None else {
        tuple(key): (per_op, set(devices))
        for *key, per_op, devices in requests[[*keys, "requests_per_op", "devices"]].itertuples(index=False)}
    rows = []
    for series, t in tier_table.groupby("series", sort=False):
        inner, outer = t[t["position"] == "interior"], t[t["position"] != "interior"]
        mape = lambda df, c: float(df[c].abs().mean()) if df[c].notna().any() else np.nan  # noqa: E731
        m, b = mape(inner, "nested_pct_error"), mape(inner, "baseline_pct_error")
        b_all = mape(t, "baseline_pct_error")
        per_op, counted = req.get(tuple(t.iloc[0][keys]), (np.nan, set()))
        if b_all <= tolerance:
            verdict = VERDICT_INDEPENDENT
        elif per_op < blockio.OFF_PATH_BELOW and len(set(t["held_out"]) & counted) >= MIN_COVERED:
            verdict = VERDICT_OFF_PATH
        elif len(inner) == 0 or np.isnan(b) or np.isnan(m):
            verdict = VERDICT_FEW
        elif m < b and m <= tolerance:
            verdict = VERDICT_PREDICTABLE
        elif m < b:
            verdict = VERDICT_BETTER
        else:
            verdict = VERDICT_NONE
        feats = t["nested_features"].dropna()
        rows.append({
            "series": series, **t.iloc[0][SERIES_COLUMNS].to_dict(), "n_devices": len(t), "n_interior": len(inner),
            "spread": float(t["truth"].max() / t["truth"].min()) if t["truth"].min() > 0 else np.nan,
            "feature": feats.mode().iloc[0] if len(feats) else "", "interior_mape": m,
            "interior_baseline_mape": b, "baseline_mape": b_all,
            "extreme_mape": mape(outer, "nested_pct_error"),
            "extreme_baseline_mape": mape(outer, "baseline_pct_error"),
            "multiple_interior_mape": mape(inner, "multiple_pct_error"),
            "interior_floor_mape": float(np.nanmean(floor.expected_abs_error(inner["truth_se_pct"])))
            if "truth_se_pct" in inner and inner["truth_se_pct"].notna().any() else np.nan,
            "device_requests_per_op": per_op,
            "verdict": verdict,
        })
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def run(agg, screened, features, series, pairing, settings: dict):
    """All validation tables of a study, as a dict name -> DataFrame."""
    alpha = 1 - settings["level"]
    table = study_table(agg, features, series)
    candidates, mcandidates = simple_candidates(screened), multiple_candidates(agg, features, pairing)
    io_paths = io_path_min_per_op(settings)
    if settings["candidates"] == "profile":  # what the application does, else the pairing rules
        shaped = profile_candidates(agg, features, io_paths)
        # tried in order, after leaving out figures some device of the series lacks
        candidates, mcandidates = (shaped, candidates), (shaped, mcandidates)
    relative = settings["relative"]
    folds, summary = loo_simple(table, candidates, alpha=alpha, io_paths=io_paths, loglog=settings["loglog"],
                                relative=relative)
    selection = select_simple(summary)
    pool_by = POOL_PER_WORKLOAD if settings["pool"] == "workload" else POOL_ACROSS_WORKLOADS
    rf = read_fractions()
    mfolds, msummary, refusals = loo_multiple(table, mcandidates, alpha=alpha, pool_by=pool_by,
                                              read_fraction=rf, max_figures=settings["max_figures"])
    nested = nested_choice(table, folds, candidates, mfolds, mcandidates, pool_by=pool_by, read_fraction=rf,
                           max_figures=settings["max_figures"], io_paths=io_paths, top=settings["nested_top"],
                           loglog=settings["loglog"], share=settings["nested_share"], level=settings["level"],
                           relative=relative)
    Y, keys = series_matrix(table)
    nested = ratecap.apply(nested, agg, feature_matrix(table), Y, keys, settings["cap_ratio"], io_paths, alpha)
    nested = widen(nested)
    mselection = select_multiple(msummary, refusals)
    ranked = rank_models(table, summary, fold_scores(mfolds) if len(mfolds) else None, top=settings["nested_top"],
                         share=settings["nested_share"])
    spread = interval_spread(inner_errors(folds, mfolds), ranked, Y, keys, settings["nested_share"], settings["level"])
    chosen = selected_folds(folds, selection, mfolds, mselection, nested)
    tier_table = tiers(chosen, table)
    return {
        "chosen_folds": chosen,
        "tiers": tier_table,
        "verdicts": verdicts(tier_table, settings["tolerance"], blockio.requests_per_op(agg)),
        "simple_folds": folds,
        "simple_summary": summary,
        "simple_selection": selection,
        "multiple_folds": mfolds,
        "multiple_summary": msummary,
        "multiple_refusals": refusals,
        "multiple_selection": mselection,
        "nested_selection": select_nested(ranked, keys, mfolds, msummary, spread),
    }


def selected_folds(folds, selection, mfolds, mselection, nested=None) -> pd.DataFrame:
    """The held-out predictions of the selected models only (simple per series, multiple per pool),
    with the paper's choice and the nested choice (:func:`nested_choice`) as further kinds: what
    the validity chart, coverage and tier tables are about."""
    parts = [] if nested is None else [nested.assign(kind=KIND_NESTED)]
    for kind, col in ((KIND_HELDOUT, "selected_feature"), (KIND_PAPER, "paper_feature")):
        sel = selection[["series", col]].rename(columns={col: "features"})
        parts.append(folds.merge(sel, on=["series", "features"]).assign(kind=kind))
    if len(mselection):
        sel = mselection[["pool", "selected_features"]].rename(columns={"selected_features": "features"})
        parts.append(mfolds.merge(sel, on=["pool", "features"]).assign(kind=KIND_MULTIPLE))
    cols = ["kind", "series", *SERIES_COLUMNS, "model", "features", "held_out", "truth", "prediction",
            "lower", "upper", "abs_error", "pct_error", "covered", "interval_flag"]
    out = pd.concat(parts, ignore_index=True)
    return out[[c for c in cols if c in out.columns]]
