"""Leave-one-device-out folds of simple and multiple models.

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
NaN for that model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .. import fits
from ..features import (
    POOL_PER_WORKLOAD,
    WORKLOAD_VARIABLES,
    candidate_features,
    feature_matrix,
    feature_sets,
    pool_table,
    series_matrix,
    varying_workload_variables,
)
from ..features.iopath import io_path_figures, io_path_weights
from ..records import SERIES_COLUMNS

FLAG_TOO_FEW = "too few training devices"
FLAG_CONSTANT = "feature constant over training devices"
FLAG_RANK = "design rank-deficient in this fold"

SIMPLE_FOLD_COLUMNS = ["series", *SERIES_COLUMNS, "model", "features", "held_out", "x", "truth", "prediction",
                       "lower", "upper", "abs_error", "pct_error", "covered", "n_train", "resid_df", "interval_flag"]
SIMPLE_SUMMARY_COLUMNS = ["series", *SERIES_COLUMNS, "model", "features", "n_devices", "n_folds", "n_predicted",
                          "mape", "coverage", "n_intervals", "r2", "slope", "intercept", "baseline_mape"]
#: What a model is, beside its label (:func:`model_label`): its form of line and its feature keys.
#: The summaries carry them (the simple one also ``io_path``: its figure is an application's
#: I/O-path figure) for the choice and the predictions; the rule ``heldout`` writes the summaries
#: with the columns above alone.
MODEL_COLUMNS = ["form", "figures"]


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


@dataclass(frozen=True)
class Form:
    """A form of line a simple model is fitted as: its ``name`` (the column ``form`` of the summaries
    and selections), the ``prefix`` of its label (:func:`model_label`), whether it is fitted on the
    logs (``log``) and on relative errors (``relative``)."""
    name: str
    prefix: str
    log: bool = False
    relative: bool = False
    anchored: bool = False


#: A straight line y = a x + b (every multiple model's form too).
LINE = Form("line", "")
#: A log-log line ``log(y) = a log(x) + b``, a power law ``y = e^b x^a``.
LOGLOG = Form("log-log", "log-log ", log=True)
#: A straight line fitted on relative errors (weights 1 / y^2).
RELATIVE = Form("relative", "relative ", relative=True)
#: A line through the fastest training device with the median slope to the others
#: (:func:`benchcast.fits.anchored`); its interval is symmetric on the log scale.
ANCHORED = Form("anchored", "anchored ", anchored=True)
#: Each form by its name.
FORMS = {f.name: f for f in (LINE, LOGLOG, RELATIVE, ANCHORED)}


def model_label(figures, form: Form = LINE) -> str:
    """A model's label, the column ``features`` ('randwrite_64K_lat_mean', 'log-log
    randwrite_64K_lat_mean', 'a+b' for a multiple model; also a multiple model's workload
    variables, 'data_gb+log2_data_gb'): made here alone, for people to read and as the model's
    key within a series or pool, and never read back. What a model is travels beside it: the
    columns ``form`` (:data:`FORMS`) and ``figures`` (:func:`figures_cell`)."""
    return form.prefix + "+".join(figures)


def figures_cell(figures) -> str:
    """The column ``figures`` of a model: its feature keys as a JSON list (a key may hold any
    character, a CSV table keeps the list whole)."""
    return json.dumps(list(figures))


def figures_of(cell) -> tuple[str, ...]:
    """The feature keys of a column ``figures`` cell (:func:`figures_cell`); () for an empty cell
    (NaN or '': no model)."""
    return tuple(json.loads(cell)) if isinstance(cell, str) and cell else ()

_FOLD_FIELDS = ("series", "features", "held_out", "x", "truth", "prediction", "lower", "upper", "n_train",
                "resid_df", "interval_flag")
_WHOLE_FIELDS = ("series", "features", "form", "figures", "io_path", "n_devices", "r2", "slope", "intercept",
                 "baseline_mape")


class _Series(NamedTuple):
    """One series' inputs to its simple folds: its candidate features ``cands``, results ``y`` and
    figures ``XT`` (features x devices) on its devices ``devs``, per fold (the held-out device's
    position) the figures it is fitted and predicted on, and which candidates are I/O-path figures;
    ``cells``: each candidate's column ``figures`` (:func:`figures_cell`)."""
    name: str
    cands: list
    cells: np.ndarray
    y: np.ndarray
    XT: np.ndarray
    devs: pd.Index
    fold_X: dict
    paths: list
    baseline_mape: float


def _series_inputs(series: str, cands: list, y: np.ndarray, X: np.ndarray, devs, path_folds: dict) -> _Series:
    """:class:`_Series` of one series: the I/O-path figures of each fold weighted without the
    held-out device's counters."""
    from sklearn.model_selection import LeaveOneGroupOut  # here: 0.3 s of import most jobs never need

    XT = np.where(np.isfinite(X), X, np.nan).T  # features x devices
    baseline_mape = float(np.mean(np.abs(baseline_pct_error(y))))
    paths = [j for j, c in enumerate(cands) if path_folds and c in path_folds[devs[0]].columns]
    fold_X = {}
    for _, test in LeaveOneGroupOut().split(X, y, groups=devs):
        i = int(test[0])
        fold_X[i] = XT
        if paths:
            fold_X[i] = XT.copy()
            fold_X[i][paths] = path_folds[devs[i]].reindex(devs)[[cands[j] for j in paths]].to_numpy().T
    cells = np.asarray([figures_cell([c]) for c in cands], dtype=object)
    return _Series(series, cands, cells, y, XT, devs, fold_X, paths, baseline_mape)


def _fit(form: Form, Y, X, weights=None):
    """The fits of ``form`` of every row of Y on every row of X (in the form's space)."""
    if form.anchored:
        return fits.anchored(Y, X)
    return fits.simple(Y, X, min_n=2, weights=weights)


def _predict(form: Form, fit, x0, alpha: float):
    """(prediction, lower, upper, resid_df) of a fit of :func:`_fit` at ``x0``."""
    if form.anchored:
        return fits.anchored_predict(fit, x0, alpha)
    return fits.simple_predict(fit, x0, alpha, relative=form.relative)


def _fit_form(s: _Series, form: Form, alpha: float, acc: dict, whole_acc: dict) -> None:
    """Every fold of one form of line of the series ``s``, and its fit on all devices, appended to
    ``acc`` and ``whole_acc``."""
    log, rel = form.log, form.relative
    t = fits.log_positive if log else np.asarray  # the space the line is fitted in
    back = np.exp if log else np.asarray
    names = np.asarray([model_label([c], form) for c in s.cands], dtype=object)
    yt, Xt = t(s.y), t(s.XT)
    w = fits.relative_weights(s.y)[None, :] if rel else None
    whole = _fit(form, yt[None, :], Xt, w)
    for i, XF in s.fold_X.items():
        y_train = yt.copy()
        y_train[i] = np.nan
        XFt = t(XF) if s.paths else Xt
        fit = _fit(form, y_train[None, :], XFt, w)
        x0, x0t = XF[:, i], XFt[:, i]
        pred, lo, hi, df = (v[0] for v in _predict(form, fit, x0t[None, :], alpha))
        with np.errstate(over="ignore"):  # a log-log line taken past exp(709): inf, a miss no choice takes
            pred, lo, hi = back(pred), back(lo), back(hi)
        m = fit.n[0]
        const = (m >= 2) & np.isnan(fit.a[0])
        flag = np.select([m < 2, const, df <= 0], [FLAG_TOO_FEW, FLAG_CONSTANT, fits.FLAG_ZERO_DF], "")
        keep = np.isfinite(x0t)  # no row where the held-out device lacks the figure
        k = int(keep.sum())
        acc["series"].append(np.repeat(s.name, k))
        acc["features"].append(names[keep])
        acc["held_out"].append(np.repeat(s.devs[i], k))
        acc["x"].append(x0[keep])
        acc["truth"].append(np.repeat(s.y[i], k))
        acc["prediction"].append(pred[keep])
        acc["lower"].append(lo[keep])
        acc["upper"].append(hi[keep])
        acc["n_train"].append(m[keep].astype(int))
        acc["resid_df"].append(df[keep].astype(float))
        acc["interval_flag"].append(flag[keep])
    whole_acc["series"].append(np.repeat(s.name, len(names)))
    whole_acc["features"].append(names)
    whole_acc["form"].append(np.repeat(form.name, len(names)))
    whole_acc["figures"].append(s.cells)
    whole_acc["io_path"].append(np.isin(np.arange(len(names)), s.paths))
    whole_acc["n_devices"].append(np.isfinite(Xt).sum(axis=1))
    whole_acc["r2"].append(whole.r2[0] if hasattr(whole, "r2") else np.full(len(names), np.nan))
    whole_acc["slope"].append(whole.a[0])
    whole_acc["intercept"].append(whole.b[0])
    whole_acc["baseline_mape"].append(np.repeat(s.baseline_mape, len(names)))


def _simple_tables(acc: dict, whole_acc: dict, keys: pd.DataFrame):
    """(folds, summary) of :func:`loo_simple` from the accumulated arrays."""
    if not whole_acc["series"]:
        return (pd.DataFrame(columns=SIMPLE_FOLD_COLUMNS),
                pd.DataFrame(columns=SIMPLE_SUMMARY_COLUMNS + MODEL_COLUMNS + ["io_path"]))
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
    return folds, summary[SIMPLE_SUMMARY_COLUMNS + MODEL_COLUMNS + ["io_path"]]


def loo_simple(agg: pd.DataFrame, candidates=None, alpha: float = 0.05, io_paths: float | None = None,
               loglog: bool = False, relative: bool = False, anchored: bool = False):
    """Leave-one-device-out validation of every simple model y = a + b x (x one candidate feature).

    ``candidates``: see :func:`benchcast.features.candidate_features` (None: all features). The
    computation is vectorised over the candidate features of a series; intervals are the textbook
    simple-regression prediction intervals (identical to statsmodels' obs_ci).

    ``io_paths`` (a ``min_per_op``, or None for none): the applications' I/O-path figures
    (:func:`benchcast.features.iopath.io_path_figures`) are candidates too, from the ``device`` records in
    ``agg``; in each fold their weights come from the other devices' counters alone, so the
    held-out device's own application runs never enter its prediction.

    ``loglog``: every candidate is also fitted as a log-log line (a power law y = e^b x^a, least
    squares on the logs of positive values), of form :data:`LOGLOG` (labelled 'log-log feature'); the
    prediction and its interval are the log-space ones taken back (exp), errors are on y itself.
    Its summary's ``slope`` is the exponent a, ``intercept`` b and ``r2`` the log-space R².

    ``relative``: every candidate is also fitted as a straight line by least squares on relative
    errors (weights 1 / y^2, :func:`benchcast.fits.relative_weights`), of form :data:`RELATIVE`
    (labelled 'relative feature'): the line a percent error judges, which a slow device's large result
    does not pull away from the fast ones; its interval's spread scales with the prediction.

    ``anchored``: every candidate is also fitted as a line through the training device of smallest
    figure with the median slope to the others (:func:`benchcast.fits.anchored`), of form
    :data:`ANCHORED`: the application's own time where the figure is smallest, plus the figure's
    difference times one slope that one quirky device cannot pull; ``r2`` NaN.

    Returns (folds, summary) with columns :data:`SIMPLE_FOLD_COLUMNS` and
    :data:`SIMPLE_SUMMARY_COLUMNS`, :data:`MODEL_COLUMNS` and ``io_path``. ``baseline_mape``
    (one per series) is the held-out MAPE of predicting each device by the mean of the other
    devices' results (no feature at all): a model is only informative where it beats it. Where Y
    hardly varies over devices a near-flat line (R^2 ~ 0) has a small MAPE too, so compare with the
    baseline before trusting a low MAPE.
    """
    F = feature_matrix(agg)
    Y, keys = series_matrix(agg)
    devices = F.index.union(Y.index)
    F, Y = F.reindex(devices), Y.reindex(devices)
    F, path_folds = _io_path_folds(agg, F, devices, io_paths)
    acc: dict[str, list] = {c: [] for c in _FOLD_FIELDS}
    whole_acc: dict[str, list] = {c: [] for c in _WHOLE_FIELDS}
    forms = [LINE] + [LOGLOG] * loglog + [RELATIVE] * relative + [ANCHORED] * anchored
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
        s = _series_inputs(series, cands, y.to_numpy()[present], F[cands].to_numpy()[present], devices[present],
                           path_folds)
        for form in forms:
            _fit_form(s, form, alpha, acc, whole_acc)
    return _simple_tables(acc, whole_acc, keys)


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
def _pool_candidates(G: pd.DataFrame, F: pd.DataFrame, candidates) -> list:
    """The candidate features common to every series of the pool ``G``, measured on enough of its
    devices."""
    on_pool = F.reindex(sorted(G["device"].unique()))
    feats_all = list(F.columns[(on_pool.notna().sum() >= MIN_COVERED).to_numpy()])
    cands = None
    for series, row in G.drop_duplicates("series").set_index("series").iterrows():
        c = candidate_features(series, row[SERIES_COLUMNS].to_dict(), candidates, feats_all)
        cands = c if cands is None else [f for f in cands if f in c]
    return cands or []


def _pool_refusal(pool, pool_by_s: str, features: str, n_figures: int, n_devices: int, reason: str) -> dict:
    return {"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": features,
            "n_figures": n_figures, "n_devices": n_devices, "reason": reason}


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
        cands = _pool_candidates(G, F, candidates)
        if not cands:  # listed, so that every pool of the study has a row in the selection
            refusals.append(_pool_refusal(pool, pool_by_s, "", 0, G["device"].nunique(),
                                          "no candidate figure common to the pool's series"))
            continue
        variables = varying_workload_variables(G[WORKLOAD_VARIABLES])
        unknown_rf = sorted(G.loc[G["read_fraction"].isna(), "workload"].unique())
        if G["workload"].nunique() > 1 and unknown_rf:
            reason = f"read fraction unknown for workload(s) {', '.join(unknown_rf)}"
            for fs in feature_sets(cands, max_figures):
                refusals.append(_pool_refusal(pool, pool_by_s, model_label(fs), len(fs), G["device"].nunique(), reason))
            continue
        yield from _fitted_models(pool, pool_by_s, G.reset_index(drop=True), cands, variables, max_figures, refusals)


def _fitted_models(pool, pool_by_s: str, G: pd.DataFrame, cands: list, variables: list, max_figures,
                   refusals: list):
    """The models of one pool ``G`` (rows from 0) that can be fitted, as :func:`_pool_models`
    yields them; the others go to ``refusals``."""
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
            refusals.append(_pool_refusal(pool, pool_by_s, model_label(fs), len(fs), n_dev, reason))
            continue
        yield pool, keys, rows, fs, variables, X, A[rows, col["value"]], devices[rows]


def loo_multiple(agg: pd.DataFrame, candidates=None, alpha: float = 0.05, pool_by=POOL_PER_WORKLOAD,
                 read_fraction: Mapping | None = None, *, max_figures: int):
    """Leave-one-device-out validation of multiple models pooled over devices and data sizes.

    A pool is the result rows sharing ``pool_by`` (default per workload: benchmark, engine,
    workload, op, metric, unit; :data:`benchcast.features.POOL_ACROSS_WORKLOADS` pools the
    workloads too). Each model is ``value ~ const + device figures + workload variables``:
    the device figures are each single candidate and each pair (up to ``max_figures``, the study's
    ``validate.max_figures``: the schema gives its default, this function none) of the
    candidates common to the pool's series; the workload variables are those of data_gb,
    log2_data_gb, read_fraction (``read_fraction[workload]``), threads that vary in the pool.

    A feature set with more device figures than the pool's devices support
    (:func:`benchcast.features.max_device_figures`: figures <= devices - 2, checked on the devices
    of the whole pool) is not fitted: it gets a refusal record. Each fold then fits on one device
    fewer; where that leaves no residual df across devices (devices - 1 - figures - 1 < 1) the
    statsmodels interval only reflects within-device (data-size) scatter, and the fold row says
    so (interval_flag :data:`benchcast.features.fits.FLAG_NO_DEVICE_DF`, column device_df).

    Returns (folds, summary, refusals) with columns :data:`MULTI_FOLD_COLUMNS` and ``figures``,
    :data:`MULTI_SUMMARY_COLUMNS` and :data:`MODEL_COLUMNS`, and :data:`REFUSAL_COLUMNS`.
    """
    pool_by = list(pool_by)
    pool_by_s = ",".join(pool_by)
    folds, summaries, refusals = [], [], []
    for pool, keys, rows, fs, variables, X, y, groups in _pool_models(agg, candidates, pool_by, read_fraction,
                                                                      max_figures, refusals):
        n_dev = len(pd.unique(groups))
        label, cell = model_label(fs), figures_cell(fs)
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
            "figures": np.full(n, cell, dtype=object), "variables": np.full(n, model_label(variables), dtype=object),
            "held_out": groups,
            "truth": y, "prediction": loo.prediction, "lower": loo.lower, "upper": loo.upper,
            "n_train": n - counts[inverse], "n_train_devices": np.full(n, n_dev - 1),
            "device_df": np.full(n, device_df), "resid_df": loo.resid_df, "interval_flag": flag,
            "_order": order,
        })
        summaries.append({"pool": pool, "pool_by": pool_by_s, "model": "multiple", "features": label,
                          "form": LINE.name, "figures": cell, "variables": model_label(variables),
                          "n_figures": len(fs), "n_devices": n_dev,
                          "n_rows": n, "n_folds": n_dev, "rsquared": full.rsquared,
                          "rsquared_adj": full.rsquared_adj})
    ref = pd.DataFrame(refusals, columns=REFUSAL_COLUMNS)
    if not folds:
        return (pd.DataFrame(columns=MULTI_FOLD_COLUMNS + ["figures"]),
                pd.DataFrame(columns=MULTI_SUMMARY_COLUMNS + MODEL_COLUMNS), ref)
    # one frame from the models' columns (a frame per model costs more than the fits)
    folds_df = pd.DataFrame({c: np.concatenate([f[c][f["_order"]] for f in folds])
                             for c in folds[0] if c != "_order"})
    folds_df["abs_error"] = (folds_df["prediction"] - folds_df["truth"]).abs()
    folds_df["pct_error"] = 100 * (folds_df["prediction"] - folds_df["truth"]) / folds_df["truth"]
    folds_df["covered"] = fits.covered(folds_df["truth"], folds_df["lower"], folds_df["upper"])
    folds_df = folds_df[MULTI_FOLD_COLUMNS + ["figures"]]
    summ = pd.DataFrame(summaries).merge(_summarise(folds_df, ["pool", "features"]), on=["pool", "features"],
                                         how="left")
    return folds_df, summ[MULTI_SUMMARY_COLUMNS + MODEL_COLUMNS], ref


def multiple_inner(agg: pd.DataFrame, candidates, pool_by, read_fraction, max_figures) -> pd.DataFrame:
    """Leave-one-device-out predictions of every multiple model of :func:`loo_multiple` (columns
    series, features, figures, held_out, prediction, pct_error; prediction NaN where a fold could not
    fit): the same fits without intervals, fold tables or in-sample fits (what
    :func:`benchcast.validation.choice.nested_choice` scores its inner folds by,
    :func:`benchcast.validation.choice.fold_scores`)."""
    series, features, figures, held_out, pred, pct = [], [], [], [], [], []
    for _, keys, rows, fs, _, X, y, groups in _pool_models(agg, candidates, list(pool_by), read_fraction,
                                                           max_figures, []):
        loo = fits.ols_loo(X, y, groups, None)
        p = np.where(loo.fitted, loo.prediction, np.nan)
        series.append(keys["series"][rows])
        features.append(np.full(len(y), model_label(fs), dtype=object))
        figures.append(np.full(len(y), figures_cell(fs), dtype=object))
        held_out.append(np.asarray(groups))
        pred.append(p)
        pct.append(100 * (p - y) / y)
    if not series:
        return pd.DataFrame(columns=["series", "features", "figures", "held_out", "prediction", "pct_error"])
    return pd.DataFrame({"series": np.concatenate(series), "features": np.concatenate(features),
                         "figures": np.concatenate(figures), "held_out": np.concatenate(held_out),
                         "prediction": np.concatenate(pred), "pct_error": np.concatenate(pct)})


