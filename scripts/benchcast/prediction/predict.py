"""Predictions for the hypothetical devices (targets) from their spec cards.

* :func:`predict`: the screening's choice per series (the paper's Table 12): the best-R^2 feature
  the spec card has, ``Y = a X + b``.
* :func:`extrapolate`: each device's results (measured and predicted) regressed over data size to
  predict sizes that were never run (the paper's second regression, Tables 13-14).
* :func:`with_intervals`: the models chosen by held-out validation (:mod:`benchcast.validation`),
  refitted on all devices, with prediction intervals and extrapolation flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import BenchcastError, fits, records
from ..screening import floor, ratecap
from ..fits.positive import FLAG_REFUSED, positive_rows
from ..features import WORKLOAD_VARIABLES, feature_matrix, pool_table, series_matrix, spec_features
from ..features import study_table, target_figures, varying_workload_variables, workload_variables
from ..features.iopath import io_path_figures, io_path_min_per_op, io_path_weights
from ..validation.choice import bag, median_model
from ..validation.folds import FORMS, LINE, figures_of, model_label
from ..validation.intervals import spread_of, widen
from ..core.workloads import read_fractions

PREDICT_COLUMNS = ["target"] + records.SERIES_COLUMNS + [
    "feature",
    "choice",
    "a",
    "b",
    "r2",
    "n",
    "x",
    "x_min",
    "x_max",
    "outside_range",
    "value",
]


def predict(screened: pd.DataFrame, targets: dict) -> pd.DataFrame:
    """Predict every series for every target device.

    Per series the best-R^2 feature is used when the spec card has it (``choice`` = ``best``);
    otherwise the best-R^2 feature the card provides (``best in spec``); a series with no fitted
    feature in the card gets no row. A line that predicts the card at or below 0 is refused (a
    result cannot be zero, :mod:`benchcast.fits.positive`): the next feature by R^2 the card has
    predicts it, ``best in spec``. ``outside_range`` flags a spec figure outside the range the
    fit was measured on.
    """
    keys = records.SERIES_COLUMNS
    spec = spec_features(targets)
    fitted = screened[screened["r2"].notna()]
    cand = fitted.merge(spec, on="feature", how="inner")
    if cand.empty:
        return pd.DataFrame(columns=PREDICT_COLUMNS)
    cand = cand.assign(value=cand["a"] * cand["x"] + cand["b"])
    cand = cand[cand["value"] > 0]  # a line that reaches 0 there is refused (benchcast.fits.positive)
    cand = cand.sort_values(keys + ["target", "rank"], kind="mergesort")
    chosen = cand.groupby(keys + ["target"], sort=False).head(1).copy()
    chosen["choice"] = np.where(chosen["rank"] == 1, "best", "best in spec")
    chosen["outside_range"] = (chosen["x"] < chosen["x_min"]) | (chosen["x"] > chosen["x_max"])
    order = {t: i for i, t in enumerate(targets)}
    chosen["_o"] = chosen["target"].map(order)
    chosen = chosen.sort_values(["_o"] + keys, kind="mergesort")
    return chosen[PREDICT_COLUMNS].reset_index(drop=True)


def _x(sizes, how: str) -> np.ndarray:
    gbs = np.asarray(sizes, dtype=float) / 1e9
    if how == "log2":
        return np.log2(gbs)
    if how == "linear":
        return gbs
    raise BenchcastError(f"extrapolate.x: unknown {how!r} (linear or log2)")


def extrapolate(measured: pd.DataFrame, predicted: pd.DataFrame, data_sizes, how: str = "linear"):
    """Regress each device's results over data size and predict the given sizes.

    ``measured``: aggregated series rows (device, series columns, value); ``predicted``: the output of
    :func:`predict` (target devices). Each (device, series family without data size) with at least
    three sizes is fitted Y = a * size + b, sizes in GB (``how='log2'``: on log2 of the size).
    Returns ``(fits, points)``: fits has a, b, r2, n, the measured size range and ``kind``
    (measured/target); points has the predicted values at ``data_sizes`` with a flag where the size
    is beyond twice the largest size fitted, and ``refused`` where the line reaches 0 or below there
    (no value: a result cannot be zero, :mod:`benchcast.fits.positive`).
    """
    fam = [c for c in records.SERIES_COLUMNS if c != "data_size"]
    m = measured[["device"] + records.SERIES_COLUMNS + ["value"]].assign(kind="measured")
    p = predicted.rename(columns={"target": "device"})[["device"] + records.SERIES_COLUMNS + ["value"]]
    allv = pd.concat([m, p.assign(kind="target")], ignore_index=True)
    allv = allv[allv["data_size"] > 0]
    sizes = [records.parse_size(s, what="extrapolate.data_sizes") for s in data_sizes]
    fit_rows, points = [], []
    for key, g in allv.groupby(["device", "kind"] + fam, sort=False):
        g = g.sort_values("data_size")
        if g["data_size"].nunique() < 3:
            continue
        x = _x(g["data_size"], how)
        fit = fits.simple(g["value"].to_numpy(float)[None, :], x[None, :])
        a, b, r2 = float(fit.a[0, 0]), float(fit.b[0, 0]), float(fit.r2[0, 0])
        base = dict(zip(["device", "kind"] + fam, key))
        fit_rows.append(
            {**base, "a": a, "b": b, "r2": r2, "n": len(g),
             "size_min": int(g["data_size"].min()), "size_max": int(g["data_size"].max())}
        )
        for s in sizes:
            value = a * _x([s], how)[0] + b
            points.append(
                {**base, "data_size": s, "value": value if value > 0 or np.isnan(value) else np.nan,
                 "beyond_2x": s > 2 * int(g["data_size"].max()), "refused": not (value > 0 or np.isnan(value))}
            )
    fit_cols = ["device", "kind"] + fam + ["a", "b", "r2", "n", "size_min", "size_max"]
    pt_cols = ["device", "kind"] + fam + ["data_size", "value", "beyond_2x", "refused"]
    return pd.DataFrame(fit_rows, columns=fit_cols), pd.DataFrame(points, columns=pt_cols)


#: Columns of :func:`with_intervals`' tables, simple and multiple predictions together.
TARGET_PREDICTION_COLUMNS = [
    "kind", "choice", "pool", "series", *records.SERIES_COLUMNS, "model", "features", "variables", "target", "x",
    "prediction", "lower", "upper", "resid_df", "interval_flag", "n_devices", "measured_size",
    "feature_out_of_range", "out_of_range_features", "data_size_extrapolated", "extrapolation",
]
TARGET_SKIPPED_COLUMNS = ["kind", "series", "pool", "choice", "model", "features", "target", "reason"]


@dataclass(frozen=True)
class Selections:
    """What held-out validation chose: the outputs of :func:`benchcast.validation.choice.select_simple`
    (``simple``), :func:`benchcast.validation.choice.select_multiple` (``multiple``) and
    :func:`benchcast.validation.choice.select_nested` (``nested``; None: no nested choice), and the
    nested choice's models on each noisy copy of the measurement (``draws``, column ``draw``: the
    ``nested_draws`` of :func:`benchcast.validation.run_study`; None or empty: no bagging)."""

    simple: pd.DataFrame
    multiple: pd.DataFrame
    nested: pd.DataFrame | None = None
    draws: pd.DataFrame | None = None


def with_intervals(agg, features, series, chosen: Selections, targets, settings, data_sizes):
    """Predictions with intervals for the hypothetical devices: the paper's choice, the held-out
    choice (simple), the selected multiple model per pool and, with ``chosen.nested``, the nested
    choice (:func:`predict_targets_nested`: the procedure whose held-out error validation reports);
    plus what was skipped and why.

    ``settings`` the study's ``validate`` setting (``level``). Returns (predictions, skipped).
    """
    selection, mselection, nested = chosen.simple, chosen.multiple, chosen.nested
    alpha = 1 - settings["level"]
    table = study_table(agg, features, series)
    preds, skipped = [], []
    io_paths = io_path_min_per_op(settings)
    for choice in ("paper", "heldout"):
        p, s = predict_targets_simple(table, selection, targets, alpha=alpha, choice=choice, io_paths=io_paths)
        preds.append(p.assign(kind="simple"))
        skipped.append(s.assign(kind="simple"))
    if len(mselection):
        p, s = predict_targets_multiple(
            table, mselection, targets, alpha=alpha, read_fraction=read_fractions(), data_sizes=data_sizes
        )
        preds.append(p.assign(kind="multiple", choice="heldout"))
        skipped.append(s.assign(kind="multiple"))
    if nested is not None and len(nested):
        p, s = nested_cards(agg, table, nested, targets, settings)
        # as validation measured it: the median of the same procedure on the noisy copies (bagging)
        draws = chosen.draws if chosen.draws is not None else pd.DataFrame(columns=["draw"])
        got = []
        for d, models in draws.groupby("draw", sort=True):
            a = floor.draw(agg, int(d))
            cards, _ = nested_cards(a, study_table(a, features, series), models, targets, settings)
            got.append(cards.set_index(["series", "target"])["prediction"])
        preds.append(widened(bag(p, got, by=("series", "target")), nested, table))
        skipped.append(s)
    # one column order whichever kinds predicted anything (which models are chosen depends on the data)
    preds = pd.concat(preds, ignore_index=True).reindex(columns=TARGET_PREDICTION_COLUMNS)
    preds, refused = refuse_nonpositive(preds)
    return preds, pd.concat([*skipped, refused], ignore_index=True).reindex(columns=TARGET_SKIPPED_COLUMNS)


def nested_cards(agg, table, nested, targets, settings):
    """(predictions, skipped) of the cards by the nested choice's models ``nested`` on ``table``
    (:func:`predict_targets_nested`), a card with a rate cap's signature by the rate-cap rule, as
    for a held-out capped device; ``settings`` the study's ``validate``. Not yet widened
    (:func:`widened`)."""
    alpha, io_paths = 1 - settings["level"], io_path_min_per_op(settings)
    p, s = predict_targets_nested(table, nested, targets, alpha=alpha, io_paths=io_paths,
                                  read_fraction=read_fractions())
    Y, keys = series_matrix(table)
    F, T = feature_matrix(table), target_figures(targets)
    rule = ratecap.Rule(settings["cap_ratio"], io_paths, alpha, settings["cap_fit"])
    p = ratecap.apply(p, agg, F, Y, keys, rule, new=T, at="target")
    return p, s


def widened(p: pd.DataFrame, nested: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The cards' predictions ``p`` whose value lies beyond the measured results with the interval
    at least as wide as the procedure's held-out errors there (``nested``'s ``log_spread_beyond``,
    :func:`benchcast.validation.intervals.interval_spread`); a prediction its model gives no interval
    (an anchored line at or below zero at a measured device has no log residuals) gets that band
    within the measured results too: no answer without its interval."""
    Y, _ = series_matrix(table)
    spread = nested.drop_duplicates("series").set_index("series")["log_spread_beyond"]
    band = spread_of(p, spread, Y, at="target")
    none = (p["lower"].isna() & p["upper"].isna()).to_numpy()
    band = np.where(none, spread.reindex(p["series"]).to_numpy(dtype=float), band)
    return widen(p.assign(log_spread=band))


def refuse_nonpositive(preds: pd.DataFrame):
    """(predictions, skipped rows): a prediction at or below 0 refused and moved to the skipped rows
    with the value it had; a lower bound at or below 0 mirrored on the log scale
    (:func:`benchcast.fits.positive.positive_rows`)."""
    bad = ~(preds["prediction"].to_numpy(dtype=float) > 0) & preds["prediction"].notna().to_numpy()
    refused = preds[bad].assign(reason=[f"predicted {v:.4g} {u}: at or below 0, refused ({FLAG_REFUSED})"
                                        for v, u in zip(preds.loc[bad, "prediction"], preds.loc[bad, "unit"])])
    return positive_rows(preds[~bad]).reset_index(drop=True), refused


def predict_targets_nested(agg: pd.DataFrame, nested: pd.DataFrame, targets: Mapping, alpha: float = 0.05,
                           io_paths: float | None = None, read_fraction: Mapping | None = None):
    """Predict every series for every target by the nested choice's procedure on all devices.

    ``nested`` is :func:`benchcast.validation.choice.select_nested` output: per series its
    best-ranked models by leave-one-device-out error (straight or log-log lines, multiple models). Each is
    refitted on all devices (:func:`predict_targets_simple`, :func:`predict_targets_multiple`)
    and predicts the target; the prediction is the one whose value is the median of the
    best-ranked models that could predict it (the largest odd number of them,
    :func:`benchcast.validation.choice.median_model`), with that model's interval and flags: what
    :func:`benchcast.validation.choice.nested_choice` did for each held-out device.

    Returns (predictions, skipped) as :func:`with_intervals`, ``choice`` ``nested`` and ``kind``
    the winning model's; a target that no ranked model can predict is skipped (one row per model).
    """
    Y, keys = series_matrix(agg)
    preds, skipped = [], []
    simple = nested[nested["model"] == "simple"]
    if len(simple):
        p, s = predict_targets_simple(agg, simple, targets, alpha=alpha, choice="nested", io_paths=io_paths)
        preds.append(p.assign(kind="simple"))
        skipped.append(s.assign(kind="simple"))
    multi = nested[nested["model"] == "multiple"].dropna(subset=["pool"])
    if len(multi):
        msel = multi.rename(columns={"features": "selected_features", "figures": "selected_figures"})
        msel = msel.drop_duplicates(["pool", "selected_features"])
        p, s = predict_targets_multiple(agg, msel, targets, alpha=alpha, read_fraction=read_fraction)
        # the pool's rows of the series measured (a model predicts every series of its pool)
        ids = keys.rename_axis("series").reset_index()
        p = p[p["measured_size"].astype(bool)].merge(ids, on=records.SERIES_COLUMNS)
        p = p.merge(multi[["series", "features"]], on=["series", "features"])
        preds.append(p.assign(kind="multiple", choice="nested"))
        skipped.append(s.assign(kind="multiple", choice="nested"))
    cols = [c for c in TARGET_PREDICTION_COLUMNS if c != "series"]
    if not preds:
        return pd.DataFrame(columns=TARGET_PREDICTION_COLUMNS), pd.DataFrame(columns=TARGET_SKIPPED_COLUMNS)
    p = pd.concat(preds, ignore_index=True).reindex(columns=["series", *cols])
    p = p.astype({c: keys[c].dtype for c in records.SERIES_COLUMNS})  # as the series' keys, whichever kind
    p = p.merge(nested[["series", "model", "features", "rank"]], on=["series", "model", "features"])
    p = median_model(p.assign(_rank=p.pop("rank") - 1), by=("series", "target"))
    skipped = pd.concat(skipped, ignore_index=True)
    done = set(zip(p["series"], p["target"])) if len(p) else set()
    if "series" in skipped and len(skipped):  # a model that could not predict a target another one did
        skipped = skipped[[(a, b) not in done for a, b in zip(skipped["series"], skipped["target"])]]
    return p.reindex(columns=TARGET_PREDICTION_COLUMNS).reset_index(drop=True), skipped


def predict_targets_simple(agg: pd.DataFrame, selection: pd.DataFrame, targets: Mapping, alpha: float = 0.05,
                           choice: str = "heldout", io_paths: float | None = None):
    """Predict every series of ``selection`` for every target with its chosen simple model.

    ``selection`` is :func:`benchcast.validation.choice.select_simple` output; ``choice`` is
    ``heldout`` (lowest held-out MAPE, column selected_feature) or ``paper`` (max in-sample R^2, column
    paper_feature), straight lines; or :func:`benchcast.validation.choice.select_nested` output
    with ``choice`` ``nested`` (each model's form and figure from its columns ``form`` and
    ``figures``). The model is refitted on all devices of the series. A target lacking the
    model's figure is skipped. With ``io_paths`` (a ``min_per_op``) the applications' I/O-path
    figures are computed for the devices and the targets alike, weighted by the requests per
    operation the devices counted (:func:`benchcast.features.iopath.io_path_weights`).

    Returns (predictions, skipped). predictions columns: series, SERIES_COLUMNS, choice, model,
    features, target, x, prediction, lower, upper, resid_df, interval_flag, n_devices,
    feature_out_of_range, out_of_range_features, data_size_extrapolated, extrapolation.
    skipped columns: series, choice, model, features, target, reason.
    """
    F = feature_matrix(agg)
    Y, keys = series_matrix(agg)
    T = target_figures(targets)
    if io_paths is not None:
        weights = io_path_weights(agg, None, io_paths)
        F, T = F.join(io_path_figures(F, weights)), T.join(io_path_figures(T, weights))
    rows, skipped = [], []
    for series, fid, form, fig in _simple_models(selection, choice):
        log, rel = form.log, form.relative  # a power law fitted on the logs (taken back); relative errors
        t = fits.log_positive if log else np.asarray
        d = pd.DataFrame({"y": Y[series], "x": F[fig]})  # the devices with both, in the fit's space
        ok = np.isfinite(t(d["y"])) & np.isfinite(t(d["x"]))
        if form.anchored:
            fit = fits.anchored(d.loc[ok, "y"].to_numpy()[None, :], d.loc[ok, "x"].to_numpy()[None, :])
        else:
            fit = fits.fit_ols(fits.design_matrix(pd.DataFrame({fig: t(d.loc[ok, "x"])}), [fig]), t(d.loc[ok, "y"]),
                               relative=rel)
        rng = fits.feature_ranges(d.loc[ok, ["x"]].rename(columns={"x": fig}))
        for tname in T.index:
            xv = T.at[tname, fig] if fig in T.columns else np.nan
            if not np.isfinite(t(xv)):
                skipped.append({"series": series, "choice": choice, "model": "simple", "features": fid,
                                "target": tname, "reason": f"target has no figure {fig}"})
                continue
            p = _anchored_row(fit, xv, alpha) if form.anchored else fits.predict_ols(fit, pd.DataFrame({fig: [t(xv)]}), alpha).iloc[0]
            if log:
                p[["prediction", "lower", "upper"]] = np.exp(p[["prediction", "lower", "upper"]].astype(float))
            g = fits.extrapolation_flags(pd.DataFrame({fig: [xv]}), rng).iloc[0]
            rows.append({"series": series, **keys.loc[series].to_dict(), "choice": choice, "model": "simple",
                         "features": fid, "target": tname, "x": xv, **p.to_dict(), "n_devices": int(ok.sum()),
                         **g.to_dict()})
    return pd.DataFrame(rows), pd.DataFrame(skipped, columns=["series", "choice", "model", "features", "target", "reason"])


def _anchored_row(fit: fits.AnchoredFits, x0: float, alpha: float) -> pd.Series:
    """One prediction of an anchored line (:func:`benchcast.fits.anchored_predict`) as
    :func:`benchcast.fits.predict_ols` gives one row."""
    pred, lo, hi, df = (float(v[0, 0]) for v in fits.anchored_predict(fit, np.array([[x0]]), alpha))
    return pd.Series({"prediction": pred, "lower": lo, "upper": hi, "resid_df": df,
                      "interval_flag": "" if df > 0 else fits.FLAG_ZERO_DF})


def _simple_models(selection: pd.DataFrame, choice: str):
    """(series, label, form, feature key) of each simple model of ``selection`` for ``choice`` (see
    :func:`predict_targets_simple`), read from its columns, never from its label."""
    if choice == "nested":
        for series, label, form, cell in selection[["series", "features", "form", "figures"]].itertuples(index=False):
            figures = figures_of(cell)
            if len(figures) == 1:
                yield series, label, FORMS[form], figures[0]
        return
    col = {"heldout": "selected_feature", "paper": "paper_feature"}[choice]
    for series, fig in selection[["series", col]].itertuples(index=False):
        if isinstance(fig, str) and fig:  # a straight line, labelled by its feature (select_simple)
            yield series, model_label([fig], LINE), LINE, fig


def predict_targets_multiple(agg: pd.DataFrame, selection: pd.DataFrame, targets: Mapping, alpha: float = 0.05,
                             read_fraction: Mapping | None = None, data_sizes=(), factor: float = 2.0):
    """Predict with the selected multiple model of each pool, for every target.

    ``selection`` is :func:`benchcast.validation.choice.select_multiple` output (columns pool,
    pool_by, selected_features, selected_figures: the model's label and its feature keys). Each
    model, value ~ const + its figures + the workload variables that vary in the pool (as
    :func:`benchcast.validation.folds.loo_multiple` fitted it), is refitted on its whole pool and predicts, for each
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
    extra = [records.parse_size(d, what="data size") for d in data_sizes]
    rows, skipped = [], []
    cache: dict[tuple, pd.DataFrame] = {}
    for _, sel in selection.iterrows():
        feats = list(figures_of(sel["selected_figures"]))  # none: a pool with no selected model
        if not feats:
            continue
        label = sel["selected_features"]
        pool_by = tuple(str(sel["pool_by"]).split(","))
        if pool_by not in cache:
            cache[pool_by] = pool_table(agg, list(pool_by), read_fraction)
        P = cache[pool_by]
        P = P[(P["pool"] == sel["pool"])]
        variables = varying_workload_variables(P[WORKLOAD_VARIABLES])
        P = P.dropna(subset=feats + ["value"])
        fit = fits.fit_ols(fits.design_matrix(P, feats + variables), P["value"])
        rng = fits.feature_ranges(P.drop_duplicates("device").set_index("device")[feats])
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
                skipped.append({"pool": sel["pool"], "model": "multiple", "features": label,
                                "target": tname, "reason": f"target has no figure {', '.join(missing)}"})
                continue
            X = wv.copy()
            for f in feats:
                X[f] = T.at[tname, f]
            p = fits.predict_ols(fit, X[feats + variables], alpha)
            g = fits.extrapolation_flags(X[feats], rng, settings["data_size"], max_size, factor)
            out = pd.concat([settings, p, g], axis=1)
            out.insert(0, "pool", sel["pool"])
            out["model"], out["features"], out["variables"] = "multiple", label, model_label(variables)
            out["target"], out["n_devices"] = tname, P["device"].nunique()
            rows.append(out)
    cols = ["pool", "benchmark", "engine", "workload", "op", "metric", "unit", "threads", "data_size", "model",
            "features", "variables", "target", "prediction", "lower", "upper", "resid_df", "interval_flag",
            "n_devices", "measured_size", "feature_out_of_range", "out_of_range_features",
            "data_size_extrapolated", "extrapolation"]
    pred = pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)
    return pred, pd.DataFrame(skipped, columns=["pool", "model", "features", "target", "reason"])
