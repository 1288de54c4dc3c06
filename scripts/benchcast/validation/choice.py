"""Which model predicts a series: the paper's choice, the held-out choice and the nested choice.

The paper chooses the feature with the largest in-sample R^2; :func:`select_simple` sets that
choice next to the lowest held-out MAPE (:func:`select_multiple` likewise per pool of multiple
models). Both look at the held-out device's own fold while choosing. :func:`benchcast.validation.nested.nested_choice` measures
the error of choosing by held-out error itself: for each held-out device the model is chosen
without it (:func:`rank_models` over the other devices); :func:`select_nested` makes that choice
on all devices, for the spec cards (:func:`benchcast.prediction.predict.predict_targets_nested`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import fits
from ..fits.positive import positive_rows
from ..features import POOL_PER_WORKLOAD, series_matrix
from ..features.iopath import IO_PATH
from ..records import SERIES_COLUMNS
from .folds import LINE, MODEL_COLUMNS, figures_of
from .intervals import families


def _choose(summary: pd.DataFrame, by, r2_col: str, complete: pd.Series) -> pd.DataFrame:
    """Per group of ``by``: row of max ``r2_col`` (in-sample) and row of min mape among complete models."""
    s = summary.reset_index(drop=True).assign(_order=lambda d: np.arange(len(d)), _complete=complete.to_numpy())
    r2 = s.dropna(subset=[r2_col]).sort_values([r2_col, "_order"], ascending=[False, True]).groupby(by, sort=False).head(1)
    ho = s[s["_complete"]].dropna(subset=["mape"]).sort_values(["mape", "_order"]).groupby(by, sort=False).head(1)
    return r2.set_index(by), ho.set_index(by)


def select_simple(summary: pd.DataFrame) -> pd.DataFrame:
    """Per series: the paper's choice (max in-sample R^2) next to the lowest held-out MAPE.

    Only models predicted in every fold compete on MAPE, and only the paper's straight lines: log-log
    lines (:data:`.folds.LOGLOG`) and lines on relative errors (:data:`.folds.RELATIVE`) compete in the nested
    choice alone, so these two choices stay the paper's kind of model (form :data:`LINE`; a choice's
    feature is the line's one figure, also its label). Columns: series, SERIES_COLUMNS,
    n_candidates, baseline_mape (if in ``summary``), paper_feature, paper_r2, paper_mape, paper_coverage, selected_feature,
    selected_r2, selected_mape, selected_coverage, differ (the two choices differ).
    """
    summary = summary[summary["form"] == LINE.name]
    complete = summary["n_predicted"] == summary["n_folds"]
    r2, ho = _choose(summary, ["series"], "r2", complete)
    base = summary.drop_duplicates("series").set_index("series")[SERIES_COLUMNS]
    base["n_candidates"] = summary.groupby("series", sort=False).size()
    if "baseline_mape" in summary:
        base["baseline_mape"] = summary.groupby("series", sort=False)["baseline_mape"].first()
    cols = {"figures": "feature", "r2": "r2", "mape": "mape", "coverage": "coverage"}
    for prefix, t in (("paper", r2), ("selected", ho)):
        t = t.assign(figures=[figures_of(c)[0] for c in t["figures"]])  # a straight line's one feature
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
    selected_coverage, differ, selected_figures (the selected model's feature keys, the column
    ``figures`` of ``summary``: what :func:`benchcast.prediction.predict.predict_targets_multiple` fits).
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
    base["selected_figures"] = ho["figures"].reindex(base.index)
    return base.reset_index()


KIND_NESTED = "nested choice (simple or multiple)"
KIND_HELDOUT = "simple (held-out choice)"
KIND_PAPER = "simple (paper: max R²)"
KIND_MULTIPLE = "multiple (held-out choice)"


@dataclass(frozen=True)
class Nested:
    """How :func:`benchcast.validation.nested.nested_choice` chooses, and from which models.

    ``top`` (odd): of the ``top`` best-scored models, the one whose prediction for the held-out
    device is the median wins (:func:`median_model`); with fewer models, the largest odd number of
    them; 1 is the best-scored model alone. ``share`` (series columns, e.g. ``("data_size",
    "workload")``): a model's score is the mean of its inner MAPE over the series that differ only
    in those columns (:func:`shared_scores`). ``level``: the level of
    :func:`benchcast.validation.intervals.interval_spread` for the column ``log_spread`` (None: no
    such column). ``loglog``, ``relative`` and ``io_paths`` as in
    :func:`benchcast.validation.folds.loo_simple`; ``pool_by``, ``read_fraction`` and
    ``max_figures`` as in :func:`benchcast.validation.folds.loo_multiple` (the study's
    ``validate.max_figures``, which the schema defaults; None: not given, refused where ``mfolds``
    asks for multiple models)."""
    top: int = 1
    share: tuple[str, ...] = ()
    level: float | None = None
    loglog: bool = False
    relative: bool = False
    anchored: bool = False
    match: bool = False
    io_paths: float | None = None
    pool_by: tuple[str, ...] = tuple(POOL_PER_WORKLOAD)
    read_fraction: Mapping | None = None
    max_figures: int | None = None


def rank_models(table: pd.DataFrame | None, summary: pd.DataFrame | None, mscores: pd.DataFrame | None = None,
                top: int = 1, share=(), scores: pd.DataFrame | None = None, keys: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ``top`` best models of every series of ``table`` by leave-one-device-out MAPE over its
    devices: the choosing step of :func:`benchcast.validation.nested.nested_choice`, which calls it on the devices other than the
    held-out one, and of :func:`benchcast.validation.study.run_study`'s ``nested_selection``, which
    calls it on all devices to choose the models that predict the spec cards.

    ``summary``: :func:`benchcast.validation.folds.loo_simple`'s summary of ``table`` (only models
    predicted in every fold compete); ``mscores``: the multiple models' scores (series, features,
    mape; :func:`fold_scores` of the folds of :func:`benchcast.validation.folds.loo_multiple` or
    :func:`benchcast.validation.folds.multiple_inner`), which compete too (a simple model before a
    multiple one on a tie); ``share`` as in :func:`benchcast.validation.nested.nested_choice`. Columns series,
    features, model, mape (the score, shared where ``share``), _rank (0 the best) and
    :data:`benchcast.validation.folds.MODEL_COLUMNS` (what the model is). ``scores``: the scores
    already made (:func:`benchcast.validation.matching.matched_scores`), instead of ``summary`` and
    ``mscores``; ``keys``: the series' keys (:func:`benchcast.features.series_matrix` of ``table``), where
    known, for ``share``."""
    if scores is None:
        complete = summary["n_predicted"] == summary["n_folds"]
        parts = [summary.loc[complete, ["series", "features", "mape", *MODEL_COLUMNS, "io_path"]].assign(model="simple")]
        if mscores is not None:
            parts.append(mscores.assign(model="multiple", io_path=False))
        scores = pd.concat(parts, ignore_index=True)
    s = scores.dropna(subset=["mape"])
    if share:
        s = shared_scores(s, series_matrix(table)[1] if keys is None else keys, share)
    s = s.assign(_order=np.arange(len(s))).sort_values(["mape", "_order"])
    s = s.assign(_rank=s.groupby("series", sort=False).cumcount())
    return s.loc[s["_rank"] < top, ["series", "features", "model", "mape", "_rank", *MODEL_COLUMNS]]


def fold_scores(mfolds: pd.DataFrame) -> pd.DataFrame:
    """Per series and multiple model of the folds of :func:`benchcast.validation.folds.loo_multiple`,
    the MAPE over its held-out rows (columns series, features, mape, form, figures), for models that
    predicted every row; the same for the folds of :func:`benchcast.validation.folds.multiple_inner`."""
    f = mfolds.assign(_ape=mfolds["pct_error"].abs(), _miss=mfolds["prediction"].isna())
    g = f.groupby(["series", "features", "figures"], sort=False)
    m = pd.DataFrame({"mape": g["_ape"].mean(), "missing": g["_miss"].sum()}).reset_index()
    return m.loc[m["missing"] == 0, ["series", "features", "mape", "figures"]].assign(form=LINE.name)


NESTED_SELECTION_COLUMNS = ["series", *SERIES_COLUMNS, "rank", "model", "features", "score_mape", "log_spread_beyond",
                            "pool", "pool_by", "variables", *MODEL_COLUMNS]


def select_nested(ranked: pd.DataFrame, keys: pd.DataFrame, mfolds: pd.DataFrame | None = None,
                  msummary: pd.DataFrame | None = None, spread: pd.Series | None = None) -> pd.DataFrame:
    """The nested choice's models on all devices, to predict the spec cards by the procedure that
    validation measured: :func:`rank_models` output ``ranked`` (of the whole study) as a table,
    rank 1 the best, with the series' keys (``keys``: index series) and, for a multiple model, its
    pool, how the pool is formed and its variables (from
    :func:`benchcast.validation.folds.loo_multiple`'s ``mfolds`` and ``msummary``), and
    ``log_spread_beyond``: ``spread`` (:func:`benchcast.validation.intervals.interval_spread`; NaN
    without it), and what each model is (``form``, ``figures``: what
    :func:`benchcast.prediction.predict.predict_targets_nested` fits). Columns :data:`NESTED_SELECTION_COLUMNS`."""
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
    """``scores`` (series, model, form, figures, io_path, mape) with each mape replaced by the mean
    of the same model's mape over the series whose keys (``keys``: index series,
    :data:`SERIES_COLUMNS`) differ only in the columns ``share``: the same model is the same kind,
    form and figures. An application's I/O-path figure (``io_path`` true: each application
    workload has its own, :func:`benchcast.features.iopath.io_path_name`; also as a log-log line) is one
    model across workloads."""
    fam = families(keys, share)
    figures = scores["figures"].where(~scores["io_path"].eq(True), IO_PATH)
    family = scores["series"].map(fam).fillna(scores["series"])  # a series unknown to ``keys``: alone
    group = [family, scores["model"], scores["form"], figures]
    return scores.assign(mape=scores.groupby(group)["mape"].transform("mean"))


def median_model(ranked: pd.DataFrame, by=("series",)) -> pd.DataFrame:
    """Per series (per group of the columns ``by``), the row whose ``prediction`` is the median of
    the best-ranked rows: of the largest odd number of them (``_rank`` 0 is the best; 1 row or 2:
    the best alone; equal predictions in rank order). A row whose prediction is missing or at or
    below 0 takes no part (a result that cannot be zero: that model is refused there,
    :mod:`benchcast.fits.positive`). Returns the rows without ``_rank``, in the order of their
    group's first appearance among the rows sorted by rank."""
    ranked = ranked[ranked["prediction"].to_numpy(dtype=float) > 0]
    if ranked.empty:
        return ranked.drop(columns="_rank")
    r = ranked.sort_values("_rank", kind="stable")
    groups = r.groupby(list(by), sort=False)
    code, pos = groups.ngroup().to_numpy(), groups.cumcount().to_numpy()
    n = np.bincount(code)
    odd = n - (1 - n % 2)  # an odd count: the median is one model's row
    keep = pos < odd[code]
    kept, kc = r[keep], code[keep]
    order = np.lexsort((np.arange(len(kept)), kept["prediction"].to_numpy(dtype=float), kc))
    starts = np.r_[0, np.flatnonzero(np.diff(kc[order])) + 1]
    pick = order[starts + odd[kc[order][starts]] // 2]
    return kept.iloc[pick].drop(columns="_rank")


def bag(rows: pd.DataFrame, draws, by=("series", "held_out")) -> pd.DataFrame:
    """``rows`` (one prediction per group of the columns ``by``) with each prediction replaced by the
    median, on the log scale, of it and the same group's predictions in ``draws`` (Series indexed by
    ``by``: the same procedure on noisy copies of the measurement,
    :func:`benchcast.screening.floor.draw`), its interval moved by the same factor; a prediction at
    or below zero takes no part. Where ``rows`` has ``truth``, its errors and coverage are made
    again. Bagging (Breiman 1996): the median of a procedure over draws of its data follows one
    draw's noise less than the procedure does."""
    if rows.empty or not len(draws):
        return rows
    key = pd.MultiIndex.from_frame(rows[list(by)])
    own = pd.Series(rows["prediction"].to_numpy(dtype=float), index=key)
    allp = pd.concat([own, *draws], axis=1).reindex(key)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(allp.where(allp > 0))
    med = np.exp(logs.median(axis=1, skipna=True)).to_numpy()
    ratio = np.where(np.isfinite(med) & (own.to_numpy() > 0), med / own.to_numpy(), 1.0)
    out = rows.assign(prediction=rows["prediction"] * ratio, lower=rows["lower"] * ratio,
                      upper=rows["upper"] * ratio)
    if "truth" in out:
        out["abs_error"] = (out["prediction"] - out["truth"]).abs()
        out["pct_error"] = 100 * (out["prediction"] - out["truth"]) / out["truth"]
        out["covered"] = fits.covered(out["truth"], out["lower"], out["upper"])
    return out


def selected_folds(folds, selection, mfolds, mselection, nested=None) -> pd.DataFrame:
    """The held-out predictions of the selected models only (simple per series, multiple per pool),
    with the paper's choice and the nested choice (:func:`benchcast.validation.nested.nested_choice`) as further kinds: what
    the validity chart, coverage and tier tables are about. No prediction or bound at or below 0
    (:func:`benchcast.fits.positive.positive_rows`: refused, or the lower bound mirrored, and the flag
    says which)."""
    parts = [] if nested is None else [nested.assign(kind=KIND_NESTED)]
    for kind, col in ((KIND_HELDOUT, "selected_feature"), (KIND_PAPER, "paper_feature")):
        # as the folds' text, also when nothing was selected (an empty column reads as numbers)
        sel = selection[["series", col]].rename(columns={col: "features"})
        sel = sel.astype({"features": folds["features"].dtype})
        parts.append(folds.merge(sel, on=["series", "features"]).assign(kind=kind))
    if len(mselection):
        sel = mselection[["pool", "selected_features"]].rename(columns={"selected_features": "features"})
        parts.append(mfolds.merge(sel, on=["pool", "features"]).assign(kind=KIND_MULTIPLE))
    cols = ["kind", "series", *SERIES_COLUMNS, "model", "features", "held_out", "truth", "prediction",
            "lower", "upper", "abs_error", "pct_error", "covered", "interval_flag"]
    out = positive_rows(pd.concat(parts, ignore_index=True))
    return out[[c for c in cols if c in out.columns]]
