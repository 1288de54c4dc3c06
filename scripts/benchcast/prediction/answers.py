"""The answer: for every spec card and application series, what the validated procedure predicts and how
far it missed devices it never saw, or the figure the card lacks for a validated prediction.

The nested choice (:mod:`benchcast.validation`) is the procedure whose held-out error is measured;
:func:`benchcast.prediction.predict.predict_targets_nested` uses it on the cards. A card gets its prediction where
some of the series' best-ranked models use only figures the card has. Where none does, the card is told
which figure to ask for: the figures of the best-ranked model (``nested_selection``, rank 1) that the
card lacks, with that model's leave-one-device-out error over the measured devices. One row per (target,
series) (:data:`ANSWER_COLUMNS`) and one line each (:func:`lines`), for the end of a run and the top of
the report.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..features import feature_table, target_figures
from ..features.iopath import io_path_weights
from ..records import SERIES_COLUMNS
from ..core.units import size_label
from ..validation.folds import figures_of

ANSWER_COLUMNS = ["target", "series", *SERIES_COLUMNS, "status", "prediction", "lower", "upper", "model",
                  "heldout_mape", "floor_mape", "verdict", "missing_figure", "missing_mape", "line"]
ANSWERED = "answered"
MISSING = "missing figure"
NO_MODEL = "no validated model"


def figure_text(feats: pd.DataFrame, feature: str) -> str:
    """A figure as a person names it, from its columns in ``feats`` (a
    :func:`benchcast.features.feature_table`): 'randread 16K clat_p50', 'write 4K sync lat_mean'
    (queue depth and jobs where above 1); the key itself where ``feats`` lacks it."""
    row = feats[feats["feature"] == feature]
    if row.empty:
        return feature
    r = row.iloc[0]
    parts = [r["workload"], size_label(int(r["block_size"]))]
    if r["op"] not in ("read", "write") or (r["workload"] == "write" and r["op"] != "write"):
        parts.append(str(r["op"]))
    parts.append(str(r["metric"]))
    extra = [f"{k}{int(r[k])}" for k in ("iodepth", "numjobs") if float(r[k]) > 1]
    extra += [str(r[k]) for k in ("engine", "setting") if str(r[k])]
    return " ".join(parts + extra)


def _components(figures, paths: pd.DataFrame) -> list[str]:
    """The measured figures a model's ``figures`` stand for: an application's I/O-path figure is its
    component figures (``paths``: :func:`benchcast.features.iopath.io_path_weights`)."""
    out = []
    for f in figures:
        parts = list(paths.loc[paths["name"] == f, "feature"]) if len(paths) else []
        out += parts or [f]
    return list(dict.fromkeys(out))


def answers(agg: pd.DataFrame, features: Mapping, targets: Mapping, predictions: pd.DataFrame,
            selection: pd.DataFrame, verdicts: pd.DataFrame, min_per_op: float | None = None) -> pd.DataFrame:
    """One row per target and series of ``selection`` (the nested choice's ranked models,
    :func:`benchcast.validation.choice.select_nested`): ``answered`` with the nested choice's
    prediction from ``predictions`` (:func:`benchcast.prediction.predict.with_intervals`, choice ``nested``), or
    ``missing figure`` naming what the card lacks, or ``no validated model``; ``heldout_mape``,
    ``floor_mape`` and ``verdict`` from ``verdicts`` (the series' interior MAPE of the nested choice, its
    noise floor); ``min_per_op`` the I/O-path figures' (None: none). Columns :data:`ANSWER_COLUMNS`."""
    feats = feature_table(agg, features).drop_duplicates("feature")
    paths = io_path_weights(agg, None, min_per_op) if min_per_op is not None else pd.DataFrame(columns=["name"])
    cards = target_figures(targets)
    nested = predictions[predictions["choice"] == "nested"].set_index(["target", "series"]) if len(predictions) else None
    v = verdicts.set_index("series") if len(verdicts) else pd.DataFrame()
    best = selection.sort_values("rank", kind="stable").drop_duplicates("series").set_index("series")
    rows = []
    for target in targets:
        have = set(cards.columns[cards.loc[target].notna()]) if target in cards.index else set()
        for series, m in best.iterrows():
            row = {"target": target, "series": series, **m[SERIES_COLUMNS].to_dict()}
            if series in v.index:
                row.update(heldout_mape=v.at[series, "interior_mape"], floor_mape=v.at[series, "interior_floor_mape"],
                           verdict=v.at[series, "verdict"])
            if nested is not None and (target, series) in nested.index:
                p = nested.loc[(target, series)]
                p = p.iloc[0] if isinstance(p, pd.DataFrame) else p
                row.update(status=ANSWERED, prediction=p["prediction"], lower=p["lower"], upper=p["upper"],
                           model=p["features"])
            else:
                lacks = [f for f in _components(figures_of(m["figures"]), paths) if f not in have]
                row.update(status=MISSING if lacks else NO_MODEL, model=m["features"], missing_mape=m["score_mape"],
                           missing_figure=", ".join(figure_text(feats, f) for f in lacks))
            rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=ANSWER_COLUMNS)
    out["line"] = [line(r) for r in out.to_dict("records")]
    return out


def _pct(v) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.1f} %"


def line(r: Mapping) -> str:
    """One answer (a row of :func:`answers`) as one line."""
    head = f"{r['target']}: {r['series']}:"
    if r["status"] == ANSWERED:
        unit = r["unit"]
        return (f"{head} {r['prediction']:.4g} {unit} ({r['lower']:.4g}-{r['upper']:.4g}); held-out error "
                f"{_pct(r['heldout_mape'])} (noise floor {_pct(r['floor_mape'])}), {r['verdict']}")
    if r["status"] == MISSING:
        return (f"{head} no validated prediction: the card lacks {r['missing_figure']} (the model on it missed "
                f"held-out devices by {_pct(r['missing_mape'])})")
    return f"{head} no validated model ({r['verdict']})"


def lines(table: pd.DataFrame) -> list[str]:
    """The answer lines of a study: answered series one per line; the series that miss one figure
    grouped by it (per target), with how many and the error range."""
    out = list(table.loc[table["status"] == ANSWERED, "line"])
    miss = table[table["status"] != ANSWERED]
    for (target, figure), g in miss.groupby(["target", "missing_figure"], sort=False, dropna=False):
        if len(g) == 1:
            out.append(g["line"].iloc[0])
            continue
        err = g["missing_mape"].astype(float)
        what = f"the card lacks {figure}" if isinstance(figure, str) and figure else "no validated model"
        out.append(f"{target}: {len(g)} series without a validated prediction: {what} (its models missed "
                   f"held-out devices by {_pct(err.min())} to {_pct(err.max())})")
    return out
