"""Spec cards as the study's figures: what a card gives, and what its figures fix by the datasheet
rules (:mod:`benchcast.core.datasheet`: bandwidth and IOPS, Little's law, a block's transfer time
from a sequential rate), each derived figure with the rule and numbers it came from.

:func:`card_figures` lists every card's figures, given and derived, one row each with its provenance;
:func:`expanded` gives the cards back with the derived figures added, for every prediction to read
them as it reads a given figure (a plain number in the records' unit). The paper's own prediction
(Table 12, :func:`benchcast.prediction.predict.predict`) reads the cards as given.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from .. import config
from ..core import datasheet
from ..core.datasheet import GIVEN  # noqa: F401  (re-exported: the rule of a figure the card gives)
from ..core.units import CANONICAL, figure_value, metric_kind

#: Columns of :func:`card_figures`.
CARD_FIGURE_COLUMNS = ["target", "feature", "figure", "value", "unit", "rule", "how", "inputs"]


def wanted_figures(feats: pd.DataFrame) -> list[datasheet.Figure]:
    """The study's figures (a :func:`benchcast.features.feature_table`) a rule could fix: plain ones
    (no engine or setting in the name)."""
    f = feats.drop_duplicates("feature")
    f = f[(f["engine"].fillna("") == "") & (f["setting"].fillna("") == "")]
    return [datasheet.Figure(w, int(bs), op, m, max(1, int(qd)), max(1, int(j)))  # 0: records before the column
            for w, bs, op, m, qd, j in f[["workload", "block_size", "op", "metric", "iodepth", "numjobs"]]
            .itertuples(index=False)]


def _given(name: str, card: Mapping) -> dict[datasheet.Figure, float]:
    """A card's figures, each value in its metric's canonical unit (as :func:`benchcast.features.spec_features`)."""
    return {f: figure_value(card["figures"][i]["value"], f.metric, where=f"targets.{name}.figures[{i}].value")
            for i, f in config.card_figure_ids(name, card)}


def _derived(name: str, card: Mapping, wanted) -> dict[datasheet.Figure, datasheet.Derived]:
    return datasheet.derive(_given(name, card) if card.get("figures") else {}, wanted)


def card_figures(targets: Mapping, feats: pd.DataFrame) -> pd.DataFrame:
    """Every card's figures: those it gives and those the datasheet rules fix among the study's
    figures (``feats``, a :func:`benchcast.features.feature_table`), one row each: target, feature (its
    name), figure (as a person reads it), value in the records' unit, unit, rule (``given`` or the
    rule's name), how (the rule with its numbers), inputs (the figures it came from, comma separated).
    Columns :data:`CARD_FIGURE_COLUMNS`."""
    wanted = wanted_figures(feats)
    rows = []
    for name, card in targets.items():
        if not isinstance(card, Mapping):
            continue
        for f, d in _derived(name, card, wanted).items():
            rows.append({"target": name, "feature": f.name, "figure": f.words(), "value": d.value,
                         "unit": CANONICAL[metric_kind(f.metric)], "rule": d.rule,
                         "how": d.text or "the card gives it", "inputs": ", ".join(d.inputs)})
    return pd.DataFrame(rows, columns=CARD_FIGURE_COLUMNS)


def expanded(targets: Mapping, feats: pd.DataFrame) -> dict:
    """``targets`` with each card's derived figures (:func:`card_figures`) added to its figures, as
    plain numbers in the records' units: what every prediction of the card-conditional answer reads."""
    wanted = wanted_figures(feats)
    out = {}
    for name, card in targets.items():
        if not isinstance(card, Mapping):
            out[name] = card
            continue
        more = [{"workload": f.workload, "block_size": f.block_size, "op": f.op, "metric": f.metric,
                 "iodepth": f.iodepth, "numjobs": f.numjobs, "value": d.value}
                for f, d in _derived(name, card, wanted).items() if d.rule != datasheet.GIVEN]
        out[name] = {**card, "figures": [*(card.get("figures") or []), *more]}
    return out


def card_names(targets: Mapping, feats: pd.DataFrame) -> dict[str, frozenset]:
    """Per card, the names of the study's figures it gives or fixes (:func:`card_figures`)."""
    t = card_figures(targets, feats)
    have = set(feats["feature"])
    return {name: frozenset(f for f in t.loc[t["target"] == name, "feature"] if f in have) for name in targets}


def feature_texts(feats: pd.DataFrame) -> dict[str, str]:
    """Each figure of ``feats`` (a :func:`benchcast.features.feature_table`) as a person names it:
    '16K random-read median latency', '4K commit (write + fdatasync) mean latency'
    (:meth:`benchcast.core.datasheet.Figure.words`)."""
    f = feats.drop_duplicates("feature")
    return {name: datasheet.Figure(w, int(bs), op, m, max(1, int(qd)), max(1, int(j)), str(e or "")).words()
            for name, w, bs, op, m, qd, j, e in f[["feature", "workload", "block_size", "op", "metric", "iodepth",
                                                  "numjobs", "engine"]].itertuples(index=False)}


def grown_names(name: str, card: Mapping, feats: pd.DataFrame, measured) -> dict[str, frozenset]:
    """Per figure of the study (``measured``: names, of ``feats``) the card does not give or fix, the
    names it would give or fix with that figure added (what asking for one more figure buys)."""
    wanted = wanted_figures(feats)
    have = card_names({name: card}, feats)[name]
    by_name = {f.name: f for f in wanted}
    base = dict.fromkeys(_given(name, card), 1.0)
    out = {}
    for g in sorted(set(measured) - have):
        if g in by_name:
            got = datasheet.derive({**base, by_name[g]: 1.0}, wanted)
            out[g] = frozenset(f.name for f in got) & frozenset(measured)
        else:  # a figure no rule relates (another engine or setting): itself
            out[g] = have | {g}
    return out
