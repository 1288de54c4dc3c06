"""Inner folds like the held-out device: the nested choice scores each model on the folds whose held-out
device lies where the device it will predict lies.

A device whose figures lie inside the training devices' range is interpolated; the fastest and the
slowest are extrapolated, and a model's error there (a line carried down to DRAM, up past the slowest
disk) says little about how it interpolates. The held-out device's figures are known when its model is
chosen (a spec card gives them too); its result is not. :func:`matched_scores` scores each model by its
inner folds of the same kind as the device to predict: *interior* where every figure the model uses
lies strictly inside the other devices' range, *extreme* otherwise. Where no inner fold is of that kind,
all of them count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .folds import figures_of

#: The columns of a score table (:func:`matched_scores`, what
#: :func:`benchcast.validation.choice.rank_models` ranks).
SCORE_COLUMNS = ["series", "features", "model", "mape", "form", "figures", "io_path"]


def interior(F: pd.DataFrame, figures, devices, at) -> bool | None:
    """Whether device ``at`` lies strictly inside the range of ``devices`` (``at`` not among them) on
    every one of ``figures`` (columns of ``F``, device x figure); None where a figure is missing on one
    of them."""
    cols = list(figures)
    if not cols or any(c not in F.columns for c in cols):
        return None
    X = F.reindex(index=list(devices)).reindex(columns=cols).to_numpy(dtype=float)
    x = F.reindex(index=[at]).reindex(columns=cols).to_numpy(dtype=float)[0]
    if not len(X) or np.isnan(X).any() or np.isnan(x).any():
        return None
    return bool(((X.min(axis=0) < x) & (x < X.max(axis=0))).all())


def matched_scores(folds: pd.DataFrame, F: pd.DataFrame, at) -> pd.DataFrame:
    """Per series and model, the mean absolute percent error of its inner folds of the kind of device
    ``at`` (interior or extreme: :func:`interior` on the model's figures, among the series' devices of
    the inner folds). ``folds``: inner fold rows with columns series, features, model, form, figures,
    io_path, held_out, prediction, pct_error; ``F``: the figures (device x figure) of those devices and
    of ``at``. A model with a fold it could not predict, or predicted at or below 0, does not compete (a
    result that cannot be zero: the model is refused). Columns :data:`SCORE_COLUMNS`."""
    if folds.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    f = folds.assign(_ape=folds["pct_error"].abs(),
                     _bad=~(folds["prediction"].to_numpy(dtype=float) > 0))
    keys = ["series", "features", "model"]
    bad = f.groupby(keys, sort=False)["_bad"].any()
    f = f[~f.set_index(keys).index.isin(bad[bad].index)]
    if f.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    kind = {}  # (figures cell, devices) -> (each fold's kind, at's kind), computed once per model shape
    matched = np.ones(len(f), dtype=bool)
    for (cell, _series), g in f.groupby(["figures", "series"], sort=False):
        devs = tuple(sorted(g["held_out"].unique()))
        if (cell, devs) not in kind:
            figs = figures_of(cell)
            own = {j: interior(F, figs, [v for v in devs if v != j], j) for j in devs}
            kind[cell, devs] = (own, interior(F, figs, devs, at))
        own, target = kind[cell, devs]
        if target is None or any(v is None for v in own.values()):
            continue
        same = g["held_out"].map(own).to_numpy(dtype=bool) == target
        if same.any():  # else every fold counts
            matched[f.index.get_indexer(g.index)] = same
    m = f[matched]
    out = m.groupby(keys, sort=False).agg(mape=("_ape", "mean"), form=("form", "first"),
                                          figures=("figures", "first"), io_path=("io_path", "first"))
    return out.reset_index()[SCORE_COLUMNS]
