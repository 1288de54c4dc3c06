"""The answer: for every spec card and application series, a number above zero with its interval,
the held-out error of the procedure that made it and the series' verdict; per card, one line.

What the procedure is comes from the card-conditional validation (:mod:`benchcast.validation.cardchoice`,
the rule ``cards``): the card's nested choice (the models of the figures it gives or fixes, refitted
on all devices and predicting the card: :func:`benchcast.prediction.predict.nested_cards`), the
paper's line where the study has too few devices to check a choice, or the measured devices' mean
where no model of the card's figures beats it. Where a chosen model cannot predict the card (its
prediction at or below zero is refused), the devices' mean answers. One row per (target, series)
(:data:`ANSWER_COLUMNS`), a sentence each (:func:`line`) and one line per card (:func:`card_lines`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.units import quantity_text, size_text
from ..features import feature_table, study_table
from ..features.cards import expanded
from ..features.iopath import io_path_min_per_op, io_path_weights
from ..records import SERIES_COLUMNS
from ..validation.cardchoice import ALL, MEAN, MODEL, PAPER, PAPER_CHECKED
from ..validation.folds import figures_of
from . import predict

ANSWER_COLUMNS = ["target", "series", *SERIES_COLUMNS, "status", "procedure", "prediction", "lower", "upper", "model",
                  "figures", "heldout_mape", "noise_mape", "floor_mape", "verdict", "line"]
#: A model of the card's figures answered.
ANSWERED = "answered"
#: The measured devices' mean answered.
BY_MEAN = "devices' mean"
#: Nothing could: fewer than two devices measured the series.
NO_ANSWER = "no answer"


@dataclass(frozen=True)
class CardTables:
    """The rule ``cards``' outputs: ``figures`` (each card's figures, given and derived),
    ``verdicts`` (per card and series, the procedure and its error), ``selection`` (the models that
    predict each card) and ``value`` (the figure worth asking for)."""
    figures: pd.DataFrame
    verdicts: pd.DataFrame
    selection: pd.DataFrame
    value: pd.DataFrame


def _figure_texts(cells, paths: pd.DataFrame, figures: pd.DataFrame) -> str:
    """The figures a model used, as a person names them, a derived one with its rule: 'randread 16K
    lat_mean (transfer)'; an I/O-path figure stands for its component figures."""
    out = []
    for f in dict.fromkeys(f for c in cells for f in figures_of(c)):
        parts = list(paths.loc[paths["name"] == f, "feature"]) if len(paths) else []
        out += parts or [f]
    known = figures.drop_duplicates("feature").set_index("feature")
    texts = []
    for f in dict.fromkeys(out):
        if f in known.index:
            rule = known.at[f, "rule"]
            texts.append(known.at[f, "figure"] + ("" if rule == "given" else f" ({rule})"))
        else:
            texts.append(f)
    return ", ".join(texts)


def _predicted(agg, table, targets, c: CardTables, settings) -> pd.DataFrame:
    """Each card's predictions by the models its validation chose (the card's nested choice, or the
    paper's line), widened beyond the measured results; none at or below zero."""
    out = []
    for name in targets:
        sel = c.selection[c.selection["target"] == name]
        if sel.empty:
            continue
        one = {name: targets[name]}
        p, _ = predict.nested_cards(agg, table, sel.drop(columns=["target", "procedure"]), one, settings)
        if len(p):
            out.append(predict.widened(p, sel, table))
    if not out:
        return pd.DataFrame(columns=["target", "series", "prediction", "lower", "upper", "features"])
    p, _ = predict.refuse_nonpositive(pd.concat(out, ignore_index=True))
    return p


def answers(agg: pd.DataFrame, features: Mapping, series: Mapping | None, targets: Mapping, c: CardTables,
            settings: Mapping, noise: pd.Series | None = None) -> pd.DataFrame:
    """One row per target and series of the card verdicts (:data:`ANSWER_COLUMNS`): the prediction of
    the procedure its validation chose, or the measured devices' mean (``status`` says which), its
    interval, the held-out error and noise floor of that procedure, the series' verdict, the figures
    its model used (a derived one with its rule) and the answer's sentence (:func:`line`). ``settings``:
    the study's ``validate``; ``noise``: per series, what the measured noise alone costs the study's
    nested choice (the verdicts' ``interior_noise_mape``), the answers' ``noise_mape``."""
    table = study_table(agg, features, series)
    cards = expanded(targets, feature_table(table))
    preds = _predicted(agg, table, cards, c, settings).set_index(["target", "series"])
    io_paths = io_path_min_per_op(settings)
    paths = io_path_weights(agg, None, io_paths) if io_paths is not None else pd.DataFrame(columns=["name"])
    rows = []
    for v in c.verdicts.to_dict("records"):
        row = {k: v[k] for k in ("target", "series", *SERIES_COLUMNS)}
        row.update(verdict=v["verdict"], floor_mape=v["floor_mape"],
                   noise_mape=np.nan if noise is None else noise.get(v["series"], np.nan))
        key = (v["target"], v["series"])
        if v["procedure"] != MEAN and key in preds.index:
            p = preds.loc[[key]].iloc[0]
            sel = c.selection[(c.selection["target"] == v["target"]) & (c.selection["series"] == v["series"])]
            row.update(status=ANSWERED, procedure=v["procedure"], prediction=p["prediction"], lower=p["lower"],
                       upper=p["upper"], model=p["features"], heldout_mape=v["heldout_mape"],
                       figures=_figure_texts(sel["figures"], paths, c.figures[c.figures["target"] == v["target"]]))
        elif np.isfinite(v["baseline"]):
            # the devices' mean: chosen, or where the chosen model could not predict the card
            row.update(status=BY_MEAN, procedure=MEAN, prediction=v["baseline"], lower=v["baseline_lower"],
                       upper=v["baseline_upper"], model=MEAN, figures="", heldout_mape=v["baseline_mape"])
        else:
            row.update(status=NO_ANSWER, procedure="", model="", figures="", heldout_mape=np.nan)
        rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=ANSWER_COLUMNS)
    out["line"] = [line(r) for r in out.to_dict("records")]
    return out


def series_text(r: Mapping) -> str:
    """A series as a person names it: 'mariadb write-only update latency, 16 MB', 'ooc swap add pass
    time, 128 MiB'."""
    what = {"lat_mean": "mean latency", "throughput": "throughput"}.get(r["metric"], r["metric"])
    if r["benchmark"] == "ooc":
        what = "time" if r["metric"] == "lat_mean" else what
    threads = f", {int(r['threads'])} threads" if float(r.get("threads") or 0) > 1 else ""
    return f"{r['engine']} {r['workload']} {r['op']} {what}, {size_text(r['data_size'])}{threads}"


def _pct(v) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.3g} %"


def _noise(alone, floor) -> str:
    """What the noise costs beside an error: 'noise alone 9.1 %, noise floor 6 %' (the procedure's
    own scatter with the results', then the results' alone); the floor alone where the first is
    not known."""
    known = alone is not None and np.isfinite(alone)
    return (f"noise alone {_pct(alone)}, " if known else "") + f"noise floor {_pct(floor)}"


def line(r: Mapping) -> str:
    """One answer (a row of :func:`answers`) as one sentence, in units a person reads."""
    head = f"{r['target']}: {series_text(r)}:"
    if r["status"] == NO_ANSWER:
        return f"{head} no answer (fewer than two devices measured it)"
    unit = r["unit"]
    bounds = (r["lower"], r["upper"])
    span = (f"{quantity_text(bounds[0], unit)}-{quantity_text(bounds[1], unit)}"
            if all(v is not None and np.isfinite(v) for v in bounds) else "no interval")
    value = f"{quantity_text(r['prediction'], unit)} ({span})"
    err = f"held-out error {_pct(r['heldout_mape'])} ({_noise(r.get('noise_mape'), r['floor_mape'])})"
    if r["status"] == BY_MEAN:
        return f"{head} {value}, the measured devices' mean (no model of the card's figures beats it); {err}"
    how = {MODEL: "", PAPER: ", the paper's line, unchecked (too few devices)",
           PAPER_CHECKED: ", the paper's line"}.get(r["procedure"], "")
    return f"{head} {value} from {r['figures']}{how}; {err}; {r['verdict']}"


def lines(table: pd.DataFrame) -> list[str]:
    """Every answer's sentence, card by card."""
    return list(table["line"])


def family_text(family: str) -> str:
    """A family (:func:`benchcast.validation.cardchoice.family_of`: 'ycsb mariadb update lat_mean (us)') as
    a person says it: 'mariadb update'."""
    parts = family.split(" ")
    return family if family == ALL or len(parts) < 3 else f"{parts[1]} {parts[2]}"


def card_lines(table: pd.DataFrame, value: pd.DataFrame) -> list[str]:
    """One line per card: how many series it answers and how (its figures' models, the devices'
    mean), the median held-out error of those answers beside what the noise alone costs, and the one figure
    worth asking for with the error it would bring (``value``: the rule ``cards``' figure value)."""
    out = []
    for target, part in table.groupby("target", sort=False):
        n = len(part)
        answered = part["status"] != NO_ANSWER
        by_model = int((part["status"] == ANSWERED).sum())
        err, floor = part.loc[answered, "heldout_mape"].median(), part.loc[answered, "floor_mape"].median()
        alone = part.loc[answered, "noise_mape"].median() if "noise_mape" in part else np.nan
        text = (f"{target}: {int(answered.sum())} of {n} series answered ({by_model} from its figures, "
                f"{int((part['status'] == BY_MEAN).sum())} by the devices' mean); median held-out error {_pct(err)}"
                f" ({_noise(alone, floor)})")
        text += "; " + _ask(target, value)
        out.append(text)
    return out


def _ask(target: str, value: pd.DataFrame) -> str:
    """The figure worth asking for: the one that cuts the card's mean error over all series most, and
    the family it helps most ('ask for randread 16K clat_p50: all series 70 % -> 50 %, mariadb update
    130 % -> 14 %')."""
    v = value[value["target"] == target]
    best = v[(v["family"] == ALL) & (v["figure"].fillna("") != "")]
    if best.empty:
        return "no one more figure would cut its held-out error"
    b = best.iloc[0]
    name = b["figure_text"] if isinstance(b["figure_text"], str) and b["figure_text"] else b["figure"]
    fam = v[(v["figure"] == b["figure"]) & (v["family"] != ALL)]
    fam = fam.assign(cut=fam["error"] - fam["error_with"]).sort_values("cut", ascending=False)
    most = "" if fam.empty else (f", {family_text(fam['family'].iloc[0])} {_pct(fam['error'].iloc[0])} -> "
                                 f"{_pct(fam['error_with'].iloc[0])}")
    return f"ask for {name}: all series {_pct(b['error'])} -> {_pct(b['error_with'])}{most}"
