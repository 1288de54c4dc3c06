"""The answer for a spec card from the figures it has, and the error of the procedure that made it.

A card gives a few figures (and those the datasheet rules fix from them,
:mod:`benchcast.features.cards`). Per card and series:

* **the card's nested choice** (procedure :data:`MODEL`): the nested choice restricted to the models
  of the card's figures (:func:`benchcast.validation.nested.choose`), validated leave one device out
  with the restriction in every fold and the held-out device seen through the card's figures alone
  (the rate-cap rule applies where those figures show a cap). Its interior MAPE is the error printed
  beside the answer.
* **the measured devices' mean** (procedure :data:`MEAN`, the verdicts' baseline) where the card's
  nested choice does not beat the mean of the other devices on the interior tiers, or has no model:
  its own held-out error, and an interval from its held-out misses (:func:`baseline`).
* **the paper's procedure** (:data:`PAPER`) where the study has too few devices to check a choice
  (a nested choice needs four): the straight line on the best-R² figure the card *gives* (the
  paper's Table 12), checked leave one device out where the card gives one candidate figure (no
  choice to check: :data:`PAPER_CHECKED`), else unchecked.

:func:`figure_value` adds, per card and family, the one figure that would most cut the held-out error
if the card gave it, and that error. With every figure on the card the choice is the study's own
nested choice (the models and error of ``nested_selection`` and ``verdicts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..records import FAMILY_COLUMNS, SERIES_COLUMNS
from ..screening import ratecap
from .choice import NESTED_SELECTION_COLUMNS, select_nested
from .folds import LINE, figures_cell, figures_of, model_label
from .nested import Scored, choose, rank, spread
from .verdicts import DEVICE_INDEPENDENT, VERDICT_FEW, verdicts

#: The procedures an answer comes from.
MODEL = "the card's nested choice"
MEAN = "the measured devices' mean"
PAPER = "the paper's line (too few devices to check a choice)"
PAPER_CHECKED = "the paper's line"

CARD_VERDICT_COLUMNS = ["target", "series", *SERIES_COLUMNS, "procedure", "heldout_mape", "model_mape",
                        "baseline_mape", "extreme_mape", "floor_mape", "n_devices", "n_interior", "verdict",
                        "baseline", "baseline_lower", "baseline_upper"]
CARD_FOLD_COLUMNS = ["target", "series", "held_out", "position", "truth", "prediction", "pct_error",
                     "baseline_pct_error", "model", "features"]
FIGURE_VALUE_COLUMNS = ["target", "family", "series", "error", "figure", "figure_text", "error_with", "runner_up",
                        "runner_up_error"]
#: The family of all of a card's series in :func:`figure_value`.
ALL = "all series"


@dataclass(frozen=True)
class Capping:
    """What the rate-cap rule reads (:func:`benchcast.screening.ratecap.apply`): the aggregated
    records, the measured devices' figures ``F`` and results ``Y`` (``keys`` their series' keys) and
    the ``rule``."""
    agg: pd.DataFrame
    F: pd.DataFrame
    Y: pd.DataFrame
    keys: pd.DataFrame
    rule: ratecap.Rule


@dataclass(frozen=True)
class Cards:
    """The study's fits for the card-conditional choice: ``scored``
    (:func:`benchcast.validation.nested.scored` with ``restrict``), the tiers of its held-out devices
    (``tiers``: :func:`benchcast.validation.verdicts.tiers`, positions, truths and the baseline's
    errors), the verdicts' ``tolerance`` and device ``requests``, the rate-cap rule's inputs
    (``capping``) and the interval ``level``."""
    scored: Scored
    tiers: pd.DataFrame
    tolerance: float
    requests: pd.DataFrame | None
    capping: Capping
    level: float
    #: each allowed set's held-out rows, made once (cards that give the same figures share them)
    made: dict = field(default_factory=dict, compare=False, repr=False)


def held_out(c: Cards, allowed) -> pd.DataFrame:
    """The card's nested choice on each held-out device (rows of the outer folds): the models of
    the figures ``allowed`` (None: every model), and the rate-cap rule where the held-out device's
    figures among ``allowed`` show a cap."""
    key = None if allowed is None else frozenset(allowed)
    if key not in c.made:
        c.made[key] = _held_out(c, allowed)
    return c.made[key]


def _held_out(c: Cards, allowed) -> pd.DataFrame:
    rows = choose(c.scored, allowed, spread=False)
    k = c.capping
    seen = None if allowed is None else k.F.where(pd.DataFrame(
        {f: np.full(len(k.F), f in allowed) for f in k.F.columns}, index=k.F.index))
    if allowed is not None and not _may_cap(k, allowed):
        return rows
    return ratecap.apply(rows, k.agg, k.F, k.Y, k.keys, k.rule, new=seen)


def _may_cap(k: Capping, allowed) -> bool:
    """Whether a device seen through ``allowed`` alone could show a cap: it needs a read median."""
    return k.rule.ratio is not None and any(f.endswith("_clat_p50") for f in allowed)


def _tiers(c: Cards, rows: pd.DataFrame) -> pd.DataFrame:
    """The study's tiers with the nested choice's columns taken from ``rows``."""
    t = c.tiers.drop(columns=["nested_model", "nested_features", "nested_pct_error"])
    r = rows[["series", "held_out", "model", "features", "pct_error"]].drop_duplicates(["series", "held_out"])
    r = r.rename(columns={"model": "nested_model", "features": "nested_features", "pct_error": "nested_pct_error"})
    return t.merge(r, on=["series", "held_out"], how="left")


def card_verdicts(c: Cards, allowed) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(verdicts, tiers) of the card's nested choice (:func:`held_out`): per series its interior and
    extreme MAPE beside the baseline's, and a verdict (:func:`benchcast.validation.verdicts.verdicts`)."""
    t = _tiers(c, held_out(c, allowed))
    return verdicts(t, c.tolerance, c.requests), t


def answer_errors(v: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(procedure, held-out error) per row of card verdicts ``v``: the card's nested choice where it
    beats the baseline on the interior tiers, else the devices' mean with its own error (NaN where
    neither could be checked)."""
    m, b = v["interior_mape"].to_numpy(dtype=float), v["interior_baseline_mape"].to_numpy(dtype=float)
    wins = np.isfinite(m) & (~np.isfinite(b) | (m < b))
    return np.where(wins, MODEL, MEAN), np.where(wins, m, b)


def baseline(Y: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per series (columns of ``Y``, device x series), the devices' mean and an interval holding
    ``level`` of its leave-one-device-out misses on the log scale (each device predicted by the mean of
    the others; of n misses the ceil((n + 1) level)-th smallest, the largest where that is beyond n):
    mean x exp(-q) .. mean x exp(q), above zero. Index series; columns baseline, baseline_lower,
    baseline_upper."""
    out = {}
    for s in Y.columns:
        y = Y[s].dropna().to_numpy(dtype=float)
        y = y[y > 0]
        if len(y) < 2:
            out[s] = (np.nan, np.nan, np.nan)
            continue
        others = (y.sum() - y) / (len(y) - 1)
        r = np.sort(np.abs(np.log(others / y)))
        q = r[min(len(r), int(np.ceil((len(r) + 1) * level))) - 1]
        mean = float(y.mean())
        out[s] = (mean, mean * np.exp(-q), mean * np.exp(q))
    return pd.DataFrame.from_dict(out, orient="index", columns=["baseline", "baseline_lower", "baseline_upper"])


def _paper(c: Cards, given, series: list) -> dict:
    """Per series of ``series``: the paper's line for a card giving ``given`` (names), as (figure,
    checked MAPE or NaN): the line on the figure of max in-sample R² among the series' candidates the
    card gives; checked (its interior leave-one-out MAPE) where it is the only one."""
    sc = c.scored
    lines = sc.summary[(sc.summary["form"] == LINE.name) & sc.summary["series"].isin(series)]
    tiers = c.tiers[c.tiers["position"] == "interior"][["series", "held_out"]]
    folds = sc.outer
    out = {}
    for s, g in lines.groupby("series", sort=False):
        lists = [tuple(f for f in one if f in given) for one in sc.sources.get(s, [])]
        cands = next((one for one in lists if one), ())
        g = g[[figures_of(c)[0] in cands for c in g["figures"]]].dropna(subset=["r2"])
        if g.empty:
            continue
        best = g.sort_values("r2", ascending=False, kind="stable").iloc[0]
        mape = np.nan
        if len(g) == 1:
            f = folds[(folds["series"] == s) & (folds["features"] == best["features"])]
            f = f.merge(tiers[tiers["series"] == s], on=["series", "held_out"])
            mape = float(f["pct_error"].abs().mean()) if len(f) else np.nan
        out[s] = (figures_of(best["figures"])[0], mape)
    return out


def _paper_answers(v: pd.DataFrame, few: np.ndarray, paper: dict, keys: pd.DataFrame, name: str):
    """(verdicts, selection rows): the series ``few`` whose card's nested choice could not be checked,
    answered by the paper's line where the card gives a candidate figure (:func:`_paper`), unless its
    check misses by more than the devices' mean does."""
    v, extra = v.copy(), []
    for i in np.flatnonzero(few):
        s = v["series"].iloc[i]
        if s not in paper:
            continue
        f, mape = paper[s]
        if np.isfinite(mape) and mape >= v["baseline_mape"].iloc[i]:
            v.loc[v.index[i], ["procedure", "heldout_mape"]] = (MEAN, v["baseline_mape"].iloc[i])
            continue
        v.loc[v.index[i], ["procedure", "heldout_mape"]] = (PAPER if np.isnan(mape) else PAPER_CHECKED, mape)
        extra.append({"series": s, **keys.loc[s].to_dict(), "rank": 1, "model": "simple", "features": model_label([f]),
                      "form": LINE.name, "figures": figures_cell([f]), "target": name, "procedure": PAPER})
    return v, pd.DataFrame(extra, columns=["series", "target", "procedure"] if not extra else None)


#: The verdicts of answers that are no model's verdict.
NO_CARD_MODEL = "no model of the card's figures: the measured devices' mean"
PAPER_VERDICT = "the paper's line, checked leave one device out (the card gives one candidate figure)"
PAPER_UNCHECKED = "the paper's line: too few devices to check a choice of figure"


def _verdict_texts(v: pd.DataFrame) -> list[str]:
    """Each answer's verdict: its model's (the card's nested choice), or what the answer is where no
    model of the card's answers it (the devices' mean, a device-independent series keeping its verdict)
    or the paper's line does."""
    out = []
    for proc, verdict, model in zip(v["procedure"], v["verdict"], v["model_mape"]):
        if proc == PAPER_CHECKED:
            out.append(PAPER_VERDICT)
        elif proc == PAPER:
            out.append(PAPER_UNCHECKED)
        elif proc == MEAN and not np.isfinite(model) and verdict not in DEVICE_INDEPENDENT:
            out.append(NO_CARD_MODEL)
        else:
            out.append(verdict)
    return out


def card_tables(c: Cards, name: str, allowed, given) -> dict[str, pd.DataFrame]:
    """The tables of one card ``name`` (``allowed``: the names of the figures it gives or fixes, None
    where it has every figure of the study; ``given``: those it gives): ``verdicts`` (columns
    :data:`CARD_VERDICT_COLUMNS`), ``folds`` (:data:`CARD_FOLD_COLUMNS`) and ``selection`` (the models
    that predict it: :func:`benchcast.validation.choice.select_nested` rows with ``target`` and
    ``procedure``)."""
    v, t = card_verdicts(c, allowed)
    procedure, error = answer_errors(v)
    v = v.assign(target=name, procedure=procedure, heldout_mape=error, model_mape=v["interior_mape"],
                 baseline_mape=v["interior_baseline_mape"], floor_mape=v["interior_floor_mape"])
    sc = c.scored
    few = (v["verdict"] == VERDICT_FEW).to_numpy() | ~np.isfinite(error)
    ranked = rank(sc, allowed)
    sel = select_nested(ranked, sc.whole.keys, sc.mouter, sc.msummary,
                        spread(sc, ranked) if sc.how.level is not None else None)
    sel = sel.assign(target=name, procedure=MODEL)
    paper = _paper(c, set(given), list(v.loc[few, "series"])) if few.any() else {}
    v, extra = _paper_answers(v, few, paper, sc.whole.keys, name)
    v["verdict"] = _verdict_texts(v)
    v = v.join(baseline(c.capping.Y, c.level), on="series")
    sel = pd.concat([sel[~sel["series"].isin(set(extra["series"]))], extra], ignore_index=True)
    sel = sel.reindex(columns=[*NESTED_SELECTION_COLUMNS, "target", "procedure"])
    folds = t.dropna(subset=["nested_pct_error"]).assign(target=name).rename(
        columns={"nested_pct_error": "pct_error", "nested_model": "model", "nested_features": "features"})
    folds["prediction"] = folds["truth"] * (1 + folds["pct_error"] / 100)
    return {"verdicts": v[CARD_VERDICT_COLUMNS], "folds": folds[CARD_FOLD_COLUMNS], "selection": sel}


def family_of(keys: pd.DataFrame) -> pd.Series:
    """A series' family as a person names it (its benchmark, engine, op, metric and unit: 'ooc swap pass
    lat_mean (us)'), per row of ``keys``."""
    k = keys[FAMILY_COLUMNS].astype(str)
    return k["benchmark"] + " " + k["engine"] + " " + k["op"] + " " + k["metric"] + " (" + k["unit"] + ")"


def _interior(t: pd.DataFrame) -> pd.DataFrame:
    """Per series of the tiers ``t``, the interior MAPE of the nested choice and of the baseline (as
    :func:`benchcast.validation.verdicts.verdicts` has them, without the verdict)."""
    inner = t[t["position"] == "interior"]
    out = pd.DataFrame({"interior_mape": inner["nested_pct_error"].abs(),
                        "interior_baseline_mape": inner["baseline_pct_error"].abs(),
                        "series": inner["series"]}).groupby("series", sort=False).mean()
    return out.reindex(pd.unique(t["series"])).rename_axis("series").reset_index()


def _family_errors(c: Cards, allowed, family: pd.Series) -> pd.Series:
    v = _interior(_tiers(c, held_out(c, allowed)))
    _, error = answer_errors(v)
    e = pd.Series(error, index=v["series"].to_numpy())
    per = e.groupby(family.reindex(e.index).to_numpy()).mean()
    per[ALL] = e.mean()
    return per


def figure_value(c: Cards, name: str, allowed, grown: Mapping, texts: Mapping | None = None,
                 prefer: Mapping | None = None) -> pd.DataFrame:
    """Per family of series (and :data:`ALL`), the card's held-out error (the answers' procedure:
    the card's nested choice or the devices' mean, :func:`answer_errors`; mean over the family's
    series) and the one figure that, added to the card, would cut it most (``grown``: figure name ->
    the names the card would then give or fix), with the error it would then have and the runner-up;
    ``texts``: each figure as a person names it; ``prefer``: of figures that cut it alike, the one
    of the lowest value here is named (a latency before the bandwidth Little's law makes the same
    figure of). Columns :data:`FIGURE_VALUE_COLUMNS`; ``figure`` empty where no figure cuts the error."""
    keys = c.scored.whole.keys
    family = family_of(keys)
    now = _family_errors(c, allowed, family)
    tried = {f: _family_errors(c, more, family) for f, more in grown.items()}
    counts = family.value_counts()
    rows = []
    for fam in now.index:
        errs = sorted(((float(t.get(fam, np.nan)), f) for f, t in tried.items() if np.isfinite(t.get(fam, np.nan))),
                      key=lambda p: (round(p[0], 9), (prefer or {}).get(p[1], 0)))
        better = [(e, f) for e, f in errs if e < now[fam] - 0.05]
        best, runner = (better + [(np.nan, "")] * 2)[:2]
        rows.append({"target": name, "family": fam, "series": int(counts.get(fam, len(keys))), "error": now[fam],
                     "figure": best[1], "figure_text": (texts or {}).get(best[1], best[1]), "error_with": best[0],
                     "runner_up": runner[1], "runner_up_error": runner[0]})
    return pd.DataFrame(rows, columns=FIGURE_VALUE_COLUMNS)
