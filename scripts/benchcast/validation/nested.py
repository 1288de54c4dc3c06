"""The nested choice: each held-out device's model chosen without it, from every model or from those
whose figures a spec card gives.

The held-out choices (:func:`benchcast.validation.choice.select_simple`, ``select_multiple``) pick
the model with the lowest MAPE over all folds, the held-out device's own fold included, so their MAPE
flatters. The nested choice measures the error of choosing by held-out error itself: for each
held-out device d, every candidate model of a series is scored by leave-one-out MAPE over the other
devices alone (:func:`benchcast.validation.choice.rank_models`), and d's prediction is the median of
the best models' folds fitted without d (:func:`benchcast.validation.choice.median_model`).

A card that gives only some figures can only be predicted by the models of those figures: its
answer is the nested choice *restricted* to them, and the error printed beside it must be that
procedure's. :func:`scored` fits every model once, those of every candidate source (with
``candidates: profile``, the figures shaped like the application and, after them, the pairing rules'),
keeps each fold's scores, and :func:`choose` makes the choice for any set of allowed figures
(None: every model the study's candidates give, :func:`nested_choice`). Restricted, a series takes
its models from the first candidate source that leaves any allowed figure, fold by fold, as the
unrestricted choice takes them from the first source the study measures; an application's I/O-path
figure is allowed where its component figures are; a multiple model where all its figures are,
among the figures allowed to every series of its pool. :func:`rank` makes the same choice on all
devices, for the card.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import BenchcastError
from ..features import candidate_features, feature_matrix, series_matrix
from ..features.iopath import io_path_figures, io_path_weights
from .choice import Nested, fold_scores, median_model, rank_models
from .folds import LINE, MODEL_COLUMNS, figures_of, loo_multiple, loo_simple, multiple_inner
from .intervals import inner_errors, interval_spread, spread_of
from .matching import SCORE_COLUMNS, matched_scores


@dataclass(frozen=True)
class Outer:
    """The study's leave-one-device-out folds on all devices: simple ``folds`` and their ``summary``
    (:func:`benchcast.validation.folds.loo_simple`), multiple ``mfolds`` and ``msummary``
    (``loo_multiple``; None or empty: no multiple models)."""
    folds: pd.DataFrame
    summary: pd.DataFrame
    mfolds: pd.DataFrame | None = None
    msummary: pd.DataFrame | None = None


@dataclass(frozen=True)
class _Index:
    """Where a score table's models are: each simple model's rows by (series, figure), each multiple
    model's by (pool, figures); the figures each series has fitted models of, simple and multiple."""
    simple: dict
    multiple: dict
    have: dict
    mhave: dict

    @classmethod
    def of(cls, scores: pd.DataFrame, pools: dict) -> _Index:
        simple, multiple = defaultdict(list), defaultdict(list)
        have, mhave = defaultdict(set), defaultdict(set)
        for i, (ser, model, cell) in enumerate(scores[["series", "model", "figures"]].itertuples(index=False)):
            figs = figures_of(cell)
            if model == "simple":
                simple[ser, figs[0]].append(i)
                have[ser].add(figs[0])
            else:
                multiple[pools.get(ser, ser), frozenset(figs)].append(i)
                mhave[ser].update(figs)
        return cls(dict(simple), dict(multiple), dict(have), dict(mhave))


@dataclass(frozen=True)
class _Fold:
    """One choosing step: the held-out ``device`` (None: all devices, for the cards), the complete
    models' ``scores`` (:data:`SCORE_COLUMNS` and ``main``: a model of the study's first candidate
    source, what the unrestricted choice ranks; in the order it ranks ties), the series' ``keys`` and
    results ``Y`` of the devices it chose on, the I/O-path figures' components ``paths`` (name ->
    figures, weighted by those devices), the held-out rows of d (``outer``, ``mouter``) and the inner
    folds' ``errors`` (:func:`benchcast.validation.intervals.inner_errors`, for the spread)."""
    device: object
    scores: pd.DataFrame
    index: _Index
    keys: pd.DataFrame
    Y: pd.DataFrame
    paths: dict
    outer: pd.DataFrame | None
    mouter: pd.DataFrame | None
    errors: pd.DataFrame


@dataclass(frozen=True)
class Scored:
    """Every fold's scores (:func:`scored`): one :class:`_Fold` per held-out device (``folds``), the
    whole table's (``whole``), each series' candidate sources in order (``sources``, ``msources``: lists
    of figure names) and its pool (``pools``), and how it chooses (``how``); the folds on all devices
    of every model fitted, simple (``outer``, with its summary ``summary``) and multiple (``mouter``, with its summary ``msummary``)."""
    how: Nested
    folds: list
    whole: _Fold
    sources: dict
    msources: dict
    pools: dict
    outer: pd.DataFrame
    summary: pd.DataFrame
    mouter: pd.DataFrame | None
    msummary: pd.DataFrame | None


def _source_lists(candidates, keys: pd.DataFrame, names) -> dict:
    """Per series, the figure names of each candidate source, in the order they are tried."""
    sources = candidates if isinstance(candidates, tuple) else (candidates,)
    return {s: [tuple(candidate_features(s, k, one, names)) for one in sources]
            for s, k in zip(keys.index, keys.to_dict("records"))}


def _first(lists) -> tuple:
    return next((one for one in lists if one), ())


def _extra(sources: dict, whole: bool) -> dict:
    """The candidates beyond each series' first source: the figures of its later sources (``whole``
    False; a simple model is fitted per figure), or all of its sources' figures where they differ from
    its first (``whole``: a multiple model is fitted per set of figures common to its pool)."""
    out = {}
    for s, lists in sources.items():
        union = list(dict.fromkeys(f for one in lists for f in one))
        first = set(_first(lists))
        out[s] = (union if set(union) != first else []) if whole else [f for f in union if f not in first]
    return out


def _names(table: pd.DataFrame, io_paths) -> list:
    F = feature_matrix(table)
    paths = io_path_weights(table, None, io_paths) if io_paths is not None else pd.DataFrame(columns=["name"])
    return list(F.columns) + list(pd.unique(paths["name"]))


def _paths(table: pd.DataFrame, io_paths) -> dict:
    if io_paths is None:
        return {}
    w = io_path_weights(table, None, io_paths)
    return {n: frozenset(g["feature"]) for n, g in w.groupby("name", sort=False)}


def _joined(main: pd.DataFrame | None, extra: pd.DataFrame | None) -> pd.DataFrame | None:
    """``main`` with ``extra``'s rows after its own (either may be None or empty)."""
    parts = [p for p in (main, extra) if p is not None and len(p)]
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else (parts[0] if parts else main)


def _not_in(extra: pd.DataFrame, main: pd.DataFrame, on=("series", "features")) -> pd.DataFrame:
    """The rows of ``extra`` whose model ``main`` does not have."""
    if extra is None or extra.empty or main is None or main.empty:
        return extra
    have = pd.MultiIndex.from_frame(main[list(on)].drop_duplicates())
    return extra[~pd.MultiIndex.from_frame(extra[list(on)]).isin(have)]


def _simple_scores(summary: pd.DataFrame) -> pd.DataFrame:
    complete = summary["n_predicted"] == summary["n_folds"]
    return summary.loc[complete, ["series", "features", "mape", *MODEL_COLUMNS, "io_path"]].assign(model="simple")


def _multiple_scores(mfolds: pd.DataFrame | None) -> pd.DataFrame | None:
    if mfolds is None or mfolds.empty:
        return None
    return fold_scores(mfolds).assign(model="multiple", io_path=False)


def _score_table(parts, pools: dict) -> tuple[pd.DataFrame, _Index]:
    """``parts`` ((scores, main) in ranking order) as one score table with ``main``, and where its
    models are (:class:`_Index`)."""
    frames = [p.assign(main=m) for p, m in parts if p is not None and len(p)]
    s = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*SCORE_COLUMNS, "main"])
    s = s.dropna(subset=["mape"]).reset_index(drop=True)[[*SCORE_COLUMNS, "main"]]
    return s, _Index.of(s, pools)


def _inner_fits(rest: pd.DataFrame, candidates, mcandidates, how: Nested, multiple: bool):
    """(simple folds, summary, multiple folds) of ``rest`` for ``candidates``."""
    ifolds, inner = loo_simple(rest, candidates, io_paths=how.io_paths, loglog=how.loglog, relative=how.relative,
                               anchored=how.anchored)
    minner = multiple_inner(rest, mcandidates, how.pool_by, how.read_fraction, how.max_figures) if multiple else None
    return ifolds, inner, minner


def _fold(table, d, main, extra, how: Nested, outer: pd.DataFrame, mouter, pools: dict) -> _Fold:
    """The choosing step of held-out device ``d``: the inner fits of the study's candidates
    (``main``) and of the others (``extra``: None, or the extra sources' candidates)."""
    rest = table[table["device"] != d]
    multiple = mouter is not None and len(mouter) > 0
    ifolds, inner, minner = _inner_fits(rest, *main, how, multiple)
    xfolds, xinner, xminner = _inner_fits(rest, *extra, how, multiple) if extra is not None else (None,) * 3
    xfolds, xinner, xminner = _not_in(xfolds, ifolds), _not_in(xinner, inner), _not_in(xminner, minner)
    if how.match:  # scored on the inner folds of d's kind (interior or extreme)
        F = _figures(table, how.io_paths)
        parts = [(matched_scores(_inner_folds(ifolds, inner, minner), F, d), True),
                 (matched_scores(_inner_folds(xfolds, xinner, xminner), F, d) if xfolds is not None else None, False)]
    else:
        parts = [(_simple_scores(inner), True), (_simple_scores(xinner) if xinner is not None else None, False),
                 (_multiple_scores(minner), True), (_multiple_scores(xminner), False)]
    scores, index = _score_table(parts, pools)
    Yr, kr = series_matrix(rest)
    errors = inner_errors(_joined(ifolds, xfolds), _joined(minner, xminner) if multiple else None)
    return _Fold(d, scores, index, kr, Yr, _paths(rest, how.io_paths),
                 outer[outer["held_out"] == d], None if not multiple else mouter[mouter["held_out"] == d], errors)


def scored(table: pd.DataFrame, main: Outer, candidates, mcandidates=None, how: Nested = Nested(),
           restrict: bool = False) -> Scored:
    """Every model's scores, fold by fold, for :func:`choose` and :func:`rank`. ``main``: the study's
    folds on all devices (:class:`Outer`) of its ``candidates`` (and ``mcandidates`` for the multiple
    models, where ``main.mfolds`` has any); ``how`` as for :func:`nested_choice`. ``restrict``: also fit
    the models of every later candidate source, for choices restricted to a card's figures."""
    multiple = main.mfolds is not None and len(main.mfolds) > 0
    if multiple and how.max_figures is None:
        raise BenchcastError("nested choice: multiple models (mfolds) but no max_figures (validate.max_figures)")
    keys = series_matrix(table)[1]
    names = _names(table, how.io_paths)
    sources = _source_lists(candidates, keys, names)
    msources = _source_lists(mcandidates, keys, names) if multiple else {}
    extra, folds, mfolds, summary = None, main.folds, main.mfolds, main.summary
    xsummary = xmfolds = None
    msummary = main.msummary
    if restrict:
        extra = (_extra(sources, False), _extra(msources, True) if multiple else None)
        alpha = 1 - how.level if how.level is not None else 0.05
        xfolds, xsummary = loo_simple(table, extra[0], alpha=alpha, io_paths=how.io_paths, loglog=how.loglog,
                                      relative=how.relative, anchored=how.anchored)
        folds = _joined(folds, _not_in(xfolds, folds))
        xsummary = _not_in(xsummary, summary)
        if multiple:
            xmfolds, xmsummary, _ = loo_multiple(table, extra[1], alpha=alpha, pool_by=how.pool_by,
                                                 read_fraction=how.read_fraction, max_figures=how.max_figures)
            xmfolds = _not_in(xmfolds, mfolds)
            mfolds = _joined(mfolds, xmfolds)
            msummary = _joined(msummary, _not_in(xmsummary, msummary, ("pool", "features")))
    pools = dict(zip(mfolds["series"], mfolds["pool"])) if multiple else {}
    per = [_fold(table, d, (candidates, mcandidates), extra, how, folds, mfolds, pools)
           for d in pd.unique(main.folds["held_out"])]
    parts = [(_simple_scores(summary), True), (_simple_scores(xsummary) if xsummary is not None else None, False),
             (_multiple_scores(main.mfolds) if multiple else None, True), (_multiple_scores(xmfolds), False)]
    s, index = _score_table(parts, pools)
    Y = series_matrix(table)[0]
    whole = _Fold(None, s, index, keys, Y, _paths(table, how.io_paths), None, None,
                  inner_errors(folds, mfolds if multiple else None))
    return Scored(how, per, whole, sources, msources, pools, folds, _joined(summary, xsummary),
                  mfolds if multiple else None, msummary)


def _inner_folds(ifolds: pd.DataFrame, inner: pd.DataFrame, minner: pd.DataFrame | None) -> pd.DataFrame:
    """The inner folds of simple (``ifolds``, what each model is from its summary ``inner``) and
    multiple models (``minner``) as one table for :func:`benchcast.validation.matching.matched_scores`."""
    what = inner[["series", "features", *MODEL_COLUMNS, "io_path"]].drop_duplicates(["series", "features"])
    cols = ["series", "features", "held_out", "prediction", "pct_error"]
    parts = [ifolds[cols].merge(what, on=["series", "features"]).assign(model="simple")]
    if minner is not None and len(minner):
        parts.append(minner[cols + ["figures"]].assign(model="multiple", form=LINE.name, io_path=False))
    return pd.concat(parts, ignore_index=True)


def _figures(table: pd.DataFrame, io_paths: float | None) -> pd.DataFrame:
    """Every device's figures (device x figure), the applications' I/O-path figures among them (weighted
    by all devices' counters: for telling where a device lies, not for predicting it)."""
    F = feature_matrix(table)
    if io_paths is None:
        return F
    weights = io_path_weights(table, None, io_paths)
    return F if weights.empty else F.join(io_path_figures(F, weights))


def _allowed(fold: _Fold, allowed, sc: Scored) -> np.ndarray:
    """Which of ``fold``'s models compete: the study's own (``main``) where ``allowed`` is None; else
    those of the figures ``allowed`` (names), from each series' first candidate source that leaves
    any of them among its fitted models (a multiple model: among the figures allowed to every
    series of its pool)."""
    s, ix = fold.scores, fold.index
    if allowed is None:
        return s["main"].to_numpy(dtype=bool)
    allowed = frozenset(allowed)
    star = allowed | {n for n, parts in fold.paths.items() if parts <= allowed}
    keep = np.zeros(len(s), dtype=bool)
    for ser, have in ix.have.items():
        for f in _first([set(one) & have & star for one in sc.sources.get(ser, [])]):
            keep[ix.simple[ser, f]] = True
    pools: dict = {}
    for ser, have in ix.mhave.items():
        got = set(_first([set(one) & have & allowed for one in sc.msources.get(ser, [])]))
        pool = sc.pools.get(ser, ser)
        pools[pool] = got if pool not in pools else pools[pool] & got
    for (pool, figs), rows in ix.multiple.items():
        if figs <= pools.get(pool, frozenset()):
            keep[rows] = True
    return keep


def _ranked(fold: _Fold, keep: np.ndarray, how: Nested) -> pd.DataFrame:
    cols = SCORE_COLUMNS
    return rank_models(None, None, top=how.top, share=how.share, scores=fold.scores.loc[keep, cols], keys=fold.keys)


def choose(sc: Scored, allowed=None, spread: bool = True) -> pd.DataFrame:
    """The nested choice's held-out predictions (rows of the outer folds, as :func:`nested_choice`),
    from the models of the figures ``allowed`` (names; None: the study's own candidates, every
    model). ``spread``: with ``how.level``, the column ``log_spread`` as :func:`nested_choice` gives it."""
    how, parts = sc.how, []
    for fold in sc.folds:
        s = _ranked(fold, _allowed(fold, allowed, sc), how)
        rows = []
        for model, outer in (("simple", fold.outer), ("multiple", fold.mouter)):
            chosen = s.loc[s["model"] == model, ["series", "features", "_rank"]]
            if outer is not None and len(chosen):
                rows.append(outer.merge(chosen, on=["series", "features"]))
        if rows:
            got = median_model(pd.concat(rows, ignore_index=True))
            if how.level is not None and spread:
                width = interval_spread(fold.errors, s, fold.Y, fold.keys, how.share, how.level)
                got["log_spread"] = spread_of(got, width, fold.Y)
            parts.append(got)
    if not parts:  # no held-out prediction at all: the folds' columns, no row
        return sc.outer.iloc[:0]
    return pd.concat(parts, ignore_index=True)


def rank(sc: Scored, allowed=None) -> pd.DataFrame:
    """The best models of every series on all devices (:func:`benchcast.validation.choice.rank_models`),
    from the figures ``allowed`` as in :func:`choose`: the models that predict a card."""
    return _ranked(sc.whole, _allowed(sc.whole, allowed, sc), sc.how)


def spread(sc: Scored, ranked: pd.DataFrame) -> pd.Series:
    """How far the ``ranked`` models miss beyond the measured devices
    (:func:`benchcast.validation.intervals.interval_spread` of their folds on all devices)."""
    w = sc.whole
    return interval_spread(w.errors, ranked, w.Y, w.keys, sc.how.share, sc.how.level)


def nested_choice(table: pd.DataFrame, folds: pd.DataFrame, candidates, mfolds: pd.DataFrame | None = None,
                  mcandidates=None, how: Nested = Nested()) -> pd.DataFrame:
    """Held-out predictions of a device the model never saw, not even to choose the model.

    For each device d, every candidate model of a series (each simple feature of ``candidates``;
    with ``mfolds``, each multiple model of :func:`benchcast.validation.folds.loo_multiple` with
    ``mcandidates``) is scored by leave-one-out MAPE over the *other* devices alone (a simple model
    before a multiple one on a tie), and d's prediction is a model's fold fitted without d (the row
    of ``folds`` or ``mfolds``). Only models predicted in every inner fold compete.

    ``how`` (:class:`benchcast.validation.choice.Nested`): ``how.top`` (odd): of the ``top``
    best-scored models, the one whose prediction for d is the median wins
    (:func:`benchcast.validation.choice.median_model`). A choice by five inner folds is noisy: the
    median of the few best models does not follow one lucky score.

    Rows as ``folds``, with ``model`` saying which kind won; the inner folds weigh the I/O-path
    figures (``how.io_paths``) by the other devices' counters; with ``how.loglog`` and
    ``how.relative`` those lines of ``folds`` compete too.

    ``how.share``: series of one engine and operation choose from more inner folds, each still
    fitted on its own (each application's I/O-path figure counts as one model,
    :func:`benchcast.validation.choice.shared_scores`).

    ``how.level``: each row also gets the column ``log_spread`` for
    :func:`benchcast.validation.intervals.widen`: where its prediction lies beyond the other
    devices' results (extrapolation), :func:`benchcast.validation.intervals.interval_spread` of the
    inner folds' errors of the ranked models, else NaN (None: no such column)."""
    summary = pd.DataFrame(columns=["series", "features", "mape", *MODEL_COLUMNS, "io_path", "n_predicted", "n_folds"])
    out = choose(scored(table, Outer(folds, summary, mfolds), candidates, mcandidates, how))
    return out if len(out) else folds.iloc[:0]
