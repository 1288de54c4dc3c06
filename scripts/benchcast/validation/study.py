"""Held-out validation of one study, end to end: :func:`run_study`.

From a study's records (or its aggregated table, and its screening where the workflow made it):
the leave-one-device-out folds (:mod:`.folds`), the paper's, the held-out and the nested choice
(:mod:`.choice`) with the nested choice's intervals widened where it extrapolates
(:mod:`.intervals`) and the rate-cap rule (:mod:`benchcast.screening.ratecap`), then the tiers and verdicts
(:mod:`.verdicts`). The rule ``heldout``, ``benchmarks/ablation.py`` and
``benchmarks/acceptance.py`` all call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

import pandas as pd

from .. import BenchcastError, aggregate
from ..records import blockio
from ..screening import floor, ratecap, screen
from ..features import (
    POOL_ACROSS_WORKLOADS,
    POOL_PER_WORKLOAD,
    feature_matrix,
    feature_table,
    multiple_candidates,
    series_matrix,
    simple_candidates,
    study_table,
)
from ..features.cards import GIVEN, card_figures, card_names, feature_texts, grown_names
from ..features.iopath import io_path_min_per_op, profile_candidates
from ..core.workloads import read_fractions
from .choice import (
    NESTED_SELECTION_COLUMNS,
    Nested,
    bag,
    fold_scores,
    rank_models,
    select_multiple,
    select_nested,
    select_simple,
    selected_folds,
)
from . import nested as nesting
from . import cardchoice
from .folds import MULTI_FOLD_COLUMNS, MULTI_SUMMARY_COLUMNS, SIMPLE_SUMMARY_COLUMNS, loo_multiple, loo_simple
from .intervals import inner_errors, interval_spread, widen
from .verdicts import tiers, verdicts


@dataclass(frozen=True)
class Settings:
    """A study's ``validate`` settings (config/schema.yaml, ``$defs/validate``), read from its
    validated config (:meth:`of`): the schema gives every default, this class none."""
    level: float
    pool: str
    max_figures: int
    tolerance: float
    candidates: str
    profile_min_per_op: float
    nested_top: int
    loglog: bool
    relative: bool
    anchored: bool
    nested_match: bool
    nested_share: tuple[str, ...]
    cap_ratio: float | None
    cap_fit: float | None
    size_forms: tuple[str, ...]
    bag: int
    noise_draws: int

    @classmethod
    def of(cls, validate: Mapping) -> Settings:
        """The settings of a study's validated ``validate`` mapping."""
        missing = [f.name for f in fields(cls) if f.name not in validate]
        if missing:
            raise BenchcastError(f"validate: no {', '.join(missing)} (a config validated by benchcast.config?)")
        return cls(**{f.name: tuple(validate[f.name]) if f.name in ("nested_share", "size_forms") else validate[f.name]
                      for f in fields(cls)})

    @property
    def alpha(self) -> float:
        return 1 - self.level

    @property
    def io_paths(self) -> float | None:
        """The ``min_per_op`` of the I/O-path figures (:func:`benchcast.features.iopath.io_path_min_per_op`)."""
        return io_path_min_per_op(asdict(self))

    @property
    def pool_by(self) -> list[str]:
        return POOL_PER_WORKLOAD if self.pool == "workload" else POOL_ACROSS_WORKLOADS


@dataclass(frozen=True)
class Study:
    """What validation reads of a study's config: its ``features``, ``series``, ``pairing`` and
    ``validate`` settings; ``trim`` (``aggregate.trim``) and ``min_devices`` (``screen.min_devices``)
    where :func:`run_study` aggregates the records or screens itself (None where it does not)."""
    features: Mapping
    series: Mapping | None
    pairing: list
    settings: Settings
    trim: int | None = None
    min_devices: int | None = None

    @classmethod
    def of(cls, study: Mapping) -> Study:
        """A study of a validated config (``config["studies"][name]``)."""
        return cls(features=study["features"], series=study.get("series"), pairing=study["pairing"],
                   settings=Settings.of(study["validate"]), trim=study["aggregate"]["trim"],
                   min_devices=study["screen"]["min_devices"])


def run_study(study: Study, *, records: pd.DataFrame | None = None, agg: pd.DataFrame | None = None,
              screened: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """All validation tables of a study, as a dict name -> DataFrame (the outputs of the rule
    ``heldout``: chosen_folds, tiers, verdicts, simple_folds, simple_summary, simple_selection,
    multiple_folds, multiple_summary, multiple_refusals, multiple_selection, nested_selection).

    From the study's aggregated table ``agg``, or from its ``records`` (aggregated here with
    ``study.trim``, :func:`benchcast.aggregate.aggregate`); ``screened``: its screening
    (``screen.csv``), or None to screen here with ``study.min_devices``
    (:func:`benchcast.screening.screen.screen`). With ``validate.bag`` N, also ``nested_draws``: the
    nested choice's models on each of N noisy copies of ``agg`` (:func:`benchcast.screening.floor.draw`;
    column ``draw``), whose predictions the nested choice's are the median of (:func:`.choice.bag`),
    for the cards' predictions to be made the same way."""
    if (records is None) == (agg is None):
        raise BenchcastError("run_study: give the study's records or its aggregated table, one of them")
    if agg is None:
        if study.trim is None:
            raise BenchcastError("run_study: aggregating records needs the study's aggregate.trim")
        agg = aggregate.aggregate(records, trim=study.trim)
    if screened is None:
        if study.min_devices is None:
            raise BenchcastError("run_study: screening needs the study's screen.min_devices")
        screened = screen.screen(agg, study.features, study.series, study.pairing, study.min_devices)
    return _tables(agg, screened, study)


def _candidates(agg: pd.DataFrame, screened: pd.DataFrame, study: Study):
    """The candidate features of the simple and the multiple models: the screened figures and the
    pairing rules, after the figures shaped like the application's device I/O under
    ``candidates: profile`` (tried in order, after leaving out figures some device of the series
    lacks)."""
    candidates = simple_candidates(screened)
    mcandidates = multiple_candidates(agg, study.features, study.pairing)
    if study.settings.candidates == "profile":  # what the application does, else the pairing rules
        shaped = profile_candidates(agg, study.features, study.settings.io_paths)
        candidates, mcandidates = (shaped, candidates), (shaped, mcandidates)
    return candidates, mcandidates


class _Fits:
    """The leave-one-device-out folds of one aggregated table (the study's, or a noisy copy of it):
    its series ``table``, simple ``folds`` and ``summary``, multiple ``mfolds``, ``msummary`` and
    ``refusals``, the nested choice's held-out predictions ``nested`` (the rate-cap rule applied)
    and its models on all devices ``ranked``; with ``restrict``, every candidate source's models
    scored for choices restricted to a card's figures (``scored``, :mod:`.nested`)."""

    def __init__(self, agg: pd.DataFrame, study: Study, candidates, mcandidates, restrict: bool = False):
        s = study.settings
        alpha, io_paths, pool_by = s.alpha, s.io_paths, s.pool_by
        self.table = table = study_table(agg, study.features, study.series)
        self.folds, self.summary = loo_simple(table, candidates, alpha=alpha, io_paths=io_paths, loglog=s.loglog,
                                              relative=s.relative, anchored=s.anchored)
        rf = read_fractions()
        self.mfolds, self.msummary, self.refusals = loo_multiple(table, mcandidates, alpha=alpha, pool_by=pool_by,
                                                                 read_fraction=rf, max_figures=s.max_figures)
        how = Nested(top=s.nested_top, share=s.nested_share, level=s.level, loglog=s.loglog, relative=s.relative,
                     anchored=s.anchored, match=s.nested_match,
                     io_paths=io_paths, pool_by=tuple(pool_by), read_fraction=rf, max_figures=s.max_figures)
        self.scored = nesting.scored(table, nesting.Outer(self.folds, self.summary, self.mfolds, self.msummary),
                                     candidates, mcandidates, how, restrict)
        nested = nesting.choose(self.scored)
        self.Y, self.keys = series_matrix(table)
        self.nested = ratecap.apply(nested, agg, feature_matrix(table), self.Y, self.keys,
                                    ratecap.Rule(s.cap_ratio, io_paths, alpha, s.cap_fit))
        self.ranked = rank_models(table, self.summary, fold_scores(self.mfolds) if len(self.mfolds) else None,
                                  top=s.nested_top, share=s.nested_share)


def _tables(agg: pd.DataFrame, screened: pd.DataFrame, study: Study) -> dict[str, pd.DataFrame]:
    s = study.settings
    candidates, mcandidates = _candidates(agg, screened, study)
    f = _Fits(agg, study, candidates, mcandidates)
    table, folds, summary, mfolds, msummary, Y, keys = f.table, f.folds, f.summary, f.mfolds, f.msummary, f.Y, f.keys
    # the same procedure on noisy copies of the measurement: the nested choice's prediction is their median
    # and how far the procedure moves between the copies: what the noise alone costs it (the tiers' scatter)
    n = max(s.bag, s.noise_draws) if floor.has_noise(agg) else 0  # single runs, published numbers: no copies
    draws = [_Fits(floor.draw(agg, d), study, candidates, mcandidates) for d in range(1, n + 1)]
    drawn = [g.nested.set_index(["series", "held_out"])["prediction"] for g in draws]
    draws = draws[:s.bag]
    nested = widen(bag(f.nested, drawn[:s.bag]))
    selection = select_simple(summary)
    mselection = select_multiple(msummary, f.refusals)
    ranked = f.ranked
    spread = interval_spread(inner_errors(folds, mfolds), ranked, Y, keys, s.nested_share, s.level)
    chosen = selected_folds(folds, selection, mfolds, mselection, nested)
    tier_table = tiers(chosen, table, floor.scatter_pct(drawn))
    return {
        "chosen_folds": chosen,
        "tiers": tier_table,
        "verdicts": verdicts(tier_table, s.tolerance, blockio.requests_per_op(agg)),
        "simple_folds": folds,
        "simple_summary": summary[SIMPLE_SUMMARY_COLUMNS],  # what a model is: in the selections
        "simple_selection": selection,
        "multiple_folds": mfolds[MULTI_FOLD_COLUMNS],
        "multiple_summary": msummary[MULTI_SUMMARY_COLUMNS],
        "multiple_refusals": f.refusals,
        "multiple_selection": mselection,
        "nested_selection": select_nested(ranked, keys, mfolds, msummary, spread),
        "nested_draws": pd.concat([select_nested(g.ranked, g.keys, g.mfolds, g.msummary).assign(draw=d)
                                   for d, g in enumerate(draws, 1)]
                                  or [pd.DataFrame(columns=[*NESTED_SELECTION_COLUMNS, "draw"])], ignore_index=True),
    }


def run_cards(study: Study, targets: Mapping, agg: pd.DataFrame, screened: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The answer's tables for every spec card of ``targets`` (:mod:`.cardchoice`): ``card_figures`` (what
    each card gives and what the datasheet rules fix, :func:`benchcast.features.cards.card_figures`),
    ``card_verdicts``, ``card_folds``, ``card_selection`` and ``figure_value``, from the study's
    aggregated table and screening."""
    candidates, mcandidates = _candidates(agg, screened, study)
    f = _Fits(agg, study, candidates, mcandidates, restrict=True)
    s = study.settings
    chosen = selected_folds(f.folds, select_simple(f.summary), f.mfolds, select_multiple(f.msummary, f.refusals),
                            f.nested)
    F = feature_matrix(f.table)
    capping = cardchoice.Capping(agg, F, f.Y, f.keys, ratecap.Rule(s.cap_ratio, s.io_paths, s.alpha, s.cap_fit))
    c = cardchoice.Cards(f.scored, tiers(chosen, f.table), s.tolerance, blockio.requests_per_op(agg), capping, s.level)
    feats = feature_table(f.table)
    figures = card_figures(targets, feats)
    measured = set(F.columns)
    # of figures one more would cut the error alike, a latency is named (datasheets state it)
    prefer = dict(zip(feats["feature"], (feats["metric"] != "lat_mean").astype(int)))
    parts: dict[str, list] = {"card_verdicts": [], "card_folds": [], "card_selection": [], "figure_value": []}
    for name, card in targets.items():
        have = card_names({name: card}, feats)[name]
        given = set(figures.loc[(figures["target"] == name) & (figures["rule"] == GIVEN), "feature"])
        allowed = None if measured <= have else have
        got = cardchoice.card_tables(c, name, allowed, given)
        for key, table in (("card_verdicts", "verdicts"), ("card_folds", "folds"), ("card_selection", "selection")):
            parts[key].append(got[table])
        grown = grown_names(name, card, feats, measured)
        parts["figure_value"].append(cardchoice.figure_value(c, name, allowed, grown, feature_texts(feats), prefer))
    empty = {"card_verdicts": cardchoice.CARD_VERDICT_COLUMNS, "card_folds": cardchoice.CARD_FOLD_COLUMNS,
             "card_selection": [*NESTED_SELECTION_COLUMNS, "target", "procedure"],
             "figure_value": cardchoice.FIGURE_VALUE_COLUMNS}
    out = {k: pd.concat(v, ignore_index=True) if v else pd.DataFrame(columns=empty[k]) for k, v in parts.items()}
    return {"card_figures": figures, **out}
