"""Held-out validation over data size: the paper's second stage (data size -> result at a size
never run) checked against measurement.

A *family* is a series without its data size (benchmark, engine, workload, op, metric, ...); its
*held-out size* is the largest size it was measured at. Two kinds of held-out prediction:

* ``size``: per device and family, the second stage is fitted on the device's results at the
  smaller sizes and predicts the held-out size. Baseline: the device's result at the nearest
  (largest) smaller size.
* ``chain``: the two-stage chain for a held-out device at the held-out size. At every smaller size
  the first stage (``Y = a X + b`` on the family's feature, :func:`first_stage_features`) is fitted
  on the other devices and predicts the held-out device from its figure; the second stage is fitted
  over those predictions and predicts the held-out size. Neither stage sees the held-out device's
  results nor any result at the held-out size. Baseline: the first stage's prediction at the
  nearest smaller size (the chain without its second stage).

The second stage's form is one of :data:`FORMS`, chosen per family by held-out error, not by R^2:
every form predicts the largest of the smaller sizes from the ones below it (on every device of a
``size`` row; on the other devices only for a ``chain`` row) and the form with the lowest mean
absolute percent error is used, ``nearest`` (the result at the largest smaller size, the baseline)
among them. Where the inner step cannot judge the held-out one (:func:`unjudged`: too few sizes, no
memory line, or the two steps on different sides of it) the stage is ``nearest`` and the column
``form_why`` says why: a form chosen where it cannot be judged loses to the nearest size as often as
not. ``knee`` and ``piecewise`` need the memory the application's data crosses (a source's
``memory_limit``); ``miss`` needs it and the device reads per operation measured at the smaller
sizes (:mod:`benchcast.records.blockio` records); without them only ``nearest``, ``line`` and ``log``
compete. A prediction at or below zero is refused (NaN).

A row's ``position`` is as in :func:`benchcast.validation.verdicts.tiers`: ``extreme`` where the
device's result at the held-out size is the family's lowest or highest there, ``interior`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import fits, records
from ..records.blockio import OP, memory_of
from ..features import feature_matrix, series_table
from ..core.units import size_label

#: Second-stage forms, size s in GB and m the memory limit in GB: ``nearest`` y = the result at
#: the largest size fitted; ``line`` y = a s + b (the
#: paper's); ``log`` y = a log2 s + b; ``knee`` y = a max(s, m) + b (flat below the memory line,
#: a line above it); ``piecewise`` y = a s + c max(s - m, 0) + b (a line whose slope changes at
#: the memory line); ``miss`` y = a miss(s) + b (:func:`miss_ratio`: the miss ratio of a cache of m
#: under uniform access to a footprint f s, f fitted to the measured device reads per operation by
#: :func:`footprint`). On ties (and NaN errors) the earlier form wins.
FORMS = ("nearest", "line", "log", "knee", "piecewise", "miss")
#: The result at the largest size fitted, as it is: the baseline as a form of its own, and what
#: the stage falls back to where no form can be judged (:func:`unjudged`).
NEAREST = "nearest"
#: The footprints (the data's size in the engine / its nominal size) :func:`footprint` tries: 1/4 to
#: 16, 200 a doubling.
FOOTPRINTS = 2.0 ** (np.arange(-400, 801) / 200)
FAMILY = [c for c in records.SERIES_COLUMNS if c != "data_size"]
#: The columns that name a family's runs (their device I/O records share them).
RUN = ["benchmark", "engine", "workload", "threads"]
FOLD_COLUMNS = ["kind", *FAMILY, "device", "held_out_size", "train_sizes", "memory", "feature", "form", "form_why",
                "truth",
                "prediction", "pct_error", "baseline", "baseline_pct_error", "position"]
SUMMARY_COLUMNS = ["kind", *FAMILY, "held_out_size", "train_sizes", "memory", "forms", "form_why", "n_devices", "mape",
                   "baseline_mape", "interior_mape", "interior_baseline_mape", "extreme_mape",
                   "extreme_baseline_mape"]
FORM_COLUMNS = [*FAMILY, "form", "inner_mape", "n_curves", "chosen", "footprint"]


def miss_ratio(sizes, memory: float, footprint: float) -> np.ndarray:
    """max(0, 1 - memory / (footprint * size)): the share of uniform random accesses to data of
    ``footprint`` times its nominal size (``sizes``, in the unit of ``memory``) that a cache of
    ``memory`` misses."""
    return np.maximum(0.0, 1.0 - memory / (footprint * np.asarray(sizes, dtype=float)))


def footprint(requests: pd.DataFrame | None, memory: float | None) -> float | None:
    """The footprint (of :data:`FOOTPRINTS`) whose :func:`miss_ratio` fits ``requests`` (device
    reads per operation, devices x sizes in bytes, NaN where not measured) best by least squares,
    the smallest on ties; None without a memory line or a measured value."""
    if memory is None or requests is None:
        return None
    r = requests.to_numpy(dtype=float)
    ok = np.isfinite(r)
    if not ok.any():
        return None
    s = np.broadcast_to(np.asarray(requests.columns, dtype=float), r.shape)[ok]
    sse = ((miss_ratio(s[None, :], float(memory), FOOTPRINTS[:, None]) - r[ok][None, :]) ** 2).sum(axis=1)
    return float(FOOTPRINTS[int(np.argmin(sse))])


def design(sizes, form: str, memory: float | None, footprint: float | None = None) -> np.ndarray | None:
    """The design matrix (intercept first) of ``form`` at ``sizes`` (bytes); None where the form
    needs a memory limit (or, ``miss``, a footprint) and has none."""
    s = np.asarray(sizes, dtype=float) / 1e9
    m = None if memory is None else float(memory) / 1e9
    one = np.ones_like(s)
    if form == "line":
        return np.column_stack([one, s])
    if form == "log":
        return np.column_stack([one, np.log2(s)])
    if m is None:
        return None
    if form == "knee":
        return np.column_stack([one, np.maximum(s, m)])
    if form == "piecewise":
        return np.column_stack([one, s, np.maximum(s - m, 0.0)])
    if form == "miss":
        return None if footprint is None else np.column_stack([one, miss_ratio(s, m, footprint)])
    raise ValueError(f"unknown second-stage form {form!r}")


def second_stage(sizes, values, at, form: str, memory: float | None = None, footprint: float | None = None) -> float:
    """The form fitted by least squares (:func:`benchcast.fits.least_squares`, the one fitting core)
    on (sizes, values), predicting size ``at``; NaN where it cannot be fitted (no memory or
    footprint for the form, fewer points than coefficients, a rank-deficient design: e.g. a knee
    with every size on one side of the memory line, a miss ratio of 0 at every size) or predicts
    at or below 0 (refused: a result cannot be zero). ``nearest``: the value at the largest of
    ``sizes``."""
    sizes, values = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    ok = np.isfinite(values)
    if form == NEAREST:
        return float(values[ok][np.argmax(sizes[ok])]) if ok.any() else np.nan
    X = design(sizes[ok], form, memory, footprint)
    coef = None if X is None else fits.least_squares(X, values[ok])
    if coef is None:
        return np.nan
    pred = float(design([at], form, memory, footprint)[0] @ coef)
    return pred if pred > 0 else np.nan  # a result cannot be zero: refused (benchcast.fits.positive)


def pct_error(prediction, truth):
    return 100 * (np.asarray(prediction, dtype=float) - truth) / truth


def form_errors(curves, memory: float | None, footprint: float | None = None, forms=FORMS) -> pd.DataFrame:
    """Per form of ``forms``, the mean absolute percent error of predicting each curve's largest
    size from its smaller ones (``curves``: (sizes, values) pairs sorted by size); ``n_curves``
    how many it predicted. A form that misses any curve has NaN."""
    rows = []
    for form in forms:
        errs = [abs(pct_error(second_stage(s[:-1], v[:-1], s[-1], form, memory, footprint), v[-1]))
                for s, v in curves]
        complete = bool(errs) and bool(np.all(np.isfinite(errs)))
        rows.append({"form": form, "inner_mape": float(np.mean(errs)) if complete else np.nan,
                     "n_curves": int(np.isfinite(errs).sum()) if errs else 0})
    return pd.DataFrame(rows)


def choose_form(errors: pd.DataFrame, unjudged: str = "") -> tuple[str, str]:
    """(form, why): the form with the lowest inner MAPE (:func:`form_errors`; the earlier on ties)
    and ''; ``nearest`` and why where none has one, or where the inner fold cannot judge the forms
    (``unjudged``, :func:`unjudged`)."""
    ok = errors.dropna(subset=["inner_mape"])
    if unjudged:
        return NEAREST, unjudged
    if ok.empty:
        return NEAREST, "too few sizes to judge a form"
    return str(ok.loc[ok["inner_mape"].idxmin(), "form"]), ""


def unjudged(sizes, memory: float | None) -> str:
    """Why the inner fold (the largest of the training ``sizes`` predicted from the smaller ones)
    cannot judge a form for the outer one (the held-out size, the last of ``sizes``, from all the
    training ones), '' where it can: both steps on the same side of the memory line, or both across
    it. A form chosen on a step below the line says nothing of the step across it (MariaDB's pool),
    nor one across it of a step above it (RocksDB's block cache); without a memory line, nothing
    tells whether the held-out step crosses one (the paper's imported results)."""
    if len(sizes) < 3:
        return ""
    if memory is None:
        return "no memory line to tell whether the held-out size crosses one"

    def side(a, b):  # -1 at or below the line, 1 at or above it, 0 across
        return -1 if b <= memory else 1 if a >= memory else 0

    names = {-1: "below the memory line", 1: "above the memory line", 0: "across the memory line"}
    inner, outer = side(sizes[-3], sizes[-2]), side(sizes[-2], sizes[-1])
    if inner == outer:
        return ""
    return f"the inner step lies {names[inner]}, the held-out one {names[outer]}"


def _curves(wide: pd.DataFrame, sizes, min_points: int = 3):
    """(sizes, values) of every device (row of ``wide``: devices x sizes) with ``min_points`` sizes."""
    out = []
    for _, row in wide[list(sizes)].iterrows():
        ok = row.notna().to_numpy()
        if ok.sum() >= min_points:
            out.append((np.asarray(sizes, dtype=float)[ok], row.to_numpy(dtype=float)[ok]))
    return out


def first_stage_features(screened: pd.DataFrame) -> dict:
    """Family (tuple of :data:`FAMILY`) -> {data size: the feature of largest R^2 there} from the
    screen table (the paper's first-stage choice, made per size)."""
    best = screened[screened["rank"] == 1]
    out: dict = {}
    for _, r in best.iterrows():
        out.setdefault(tuple(r[FAMILY]), {})[int(r["data_size"])] = r["feature"]
    return out


def _positions(truths: pd.Series) -> pd.Series:
    extreme = (truths == truths.min()) | (truths == truths.max())
    return pd.Series(np.where(extreme, "extreme", "interior"), index=truths.index)


def _seen(requests: pd.DataFrame | None, sizes, without=None) -> pd.DataFrame | None:
    """``requests`` (devices x sizes) at ``sizes`` only, without the device ``without``: the
    device reads per operation a fold may see (never the held-out size's)."""
    if requests is None:
        return None
    r = requests.reindex(columns=list(sizes))
    return r if without is None else r.drop(index=without, errors="ignore")


def _family_folds(key: dict, wide: pd.DataFrame, F: pd.DataFrame, feature: str | None,
                  memory: float | None, form_rows: list, requests: pd.DataFrame | None = None,
                  forms=FORMS) -> list:
    """The ``size`` and ``chain`` rows of one family: ``wide`` its results (devices x sizes),
    ``requests`` its runs' device reads per operation (devices x sizes, None where not measured),
    ``forms`` the candidate second-stage forms."""
    sizes = sorted(wide.columns)
    held, train = sizes[-1], sizes[:-1]
    have = wide[held].dropna()
    if len(train) < 2 or have.empty:
        return []
    label = f"{size_label(train[0], decimal=True)}-{size_label(train[-1], decimal=True)}"
    base = {**key, "held_out_size": int(held), "train_sizes": label, "memory": memory}
    pos = _positions(have)
    fp = footprint(_seen(requests, train), memory)
    errors = form_errors(_curves(wide, train), memory, fp, forms)
    form, why = choose_form(errors, unjudged(sizes, memory))
    form_rows.append(errors.assign(chosen=errors["form"] == form, footprint=np.nan if fp is None else fp, **key))
    rows = []
    for dev, truth in have.items():
        v = wide.loc[dev, train].to_numpy(dtype=float)
        ok = np.isfinite(v)
        if ok.sum() < 2:
            continue
        pred = second_stage(np.asarray(train)[ok], v[ok], held, form, memory, fp)
        near = v[ok][-1]
        rows.append({"kind": "size", **base, "device": dev, "feature": "", "form": form, "form_why": why,
                     "truth": truth, "prediction": pred, "baseline": near, "position": pos[dev]})
    if feature is not None and feature in F.columns:
        rows += _chain(base, wide, F[feature], feature, requests, forms)
    return rows


def _chain(base: dict, wide: pd.DataFrame, x: pd.Series, feature: str, requests: pd.DataFrame | None = None,
           forms=FORMS) -> list:
    """The two-stage chain's rows of one family, one per held-out device with the figure: ``x``
    the figure per device, ``wide``, ``requests``, ``forms`` and ``base`` as in
    :func:`_family_folds` (the largest size held out, ``base["memory"]`` the memory line). The
    footprint is fitted on the other devices' reads per operation."""
    sizes = sorted(wide.columns)
    held, train = sizes[-1], sizes[:-1]
    have = wide[held].dropna()
    pos = _positions(have)
    memory = base["memory"]
    rows = []
    x = x.reindex(wide.index)
    for dev, truth in have.items():
        if not np.isfinite(x.get(dev, np.nan)):
            continue
        others = wide.index[(wide.index != dev) & x.notna().to_numpy()]
        Ytr = wide.loc[others, train].to_numpy(dtype=float).T  # sizes x other devices
        fit = fits.simple(Ytr, x[others].to_numpy(dtype=float)[None, :], min_n=2)
        stage1 = fit.a[:, 0] * x[dev] + fit.b[:, 0]  # the held-out device at each training size
        stage1 = np.where(stage1 > 0, stage1, np.nan)  # at or below 0: refused (benchcast.fits.positive)
        fp = footprint(_seen(requests, train, without=dev), memory)
        form, why = choose_form(form_errors(_curves(wide.loc[others], train), memory, fp, forms),
                                unjudged(sizes, memory))
        ok = np.isfinite(stage1)
        pred = (second_stage(np.asarray(train)[ok], stage1[ok], held, form, memory, fp) if ok.sum() >= 2
                else np.nan)
        near = stage1[ok][-1] if ok.any() else np.nan
        rows.append({"kind": "chain", **base, "device": dev, "feature": feature, "form": form, "form_why": why,
                     "truth": truth, "prediction": pred, "baseline": near, "position": pos[dev]})
    return rows


def reads_per_op(agg: pd.DataFrame) -> dict:
    """Run (tuple of :data:`RUN`) -> its device reads per operation (devices x data sizes) from the
    aggregated ``device`` records (:mod:`benchcast.records.blockio`); empty for imported results."""
    io = agg[(agg["op"] == OP) & (agg["metric"] == "reads_per_op")]
    return {tuple(k): g.pivot_table(index="device", columns="data_size", values="value").astype(float)
            for k, g in io.groupby(RUN)}


def validate(agg: pd.DataFrame, screened: pd.DataFrame, features: Mapping | None = None,
             series: Mapping | None = None, memory: Mapping | None = None, forms=FORMS):
    """Size hold-out and two-stage chain for every family measured at three sizes or more.

    ``memory``: record source label (or ``label/engine``) -> the memory (bytes) its runs' data could
    be cached in (:func:`benchcast.records.blockio.memory_of`: the memory line of the knee, piecewise and
    miss forms); families of other sources have none. The miss form's footprint is fitted to the
    family's device reads per operation (:func:`reads_per_op`). ``forms``: the candidate second-stage
    forms (the study's ``validate.size_forms``). Returns (folds, summary,
    forms) with columns :data:`FOLD_COLUMNS`, :data:`SUMMARY_COLUMNS` and :data:`FORM_COLUMNS`.
    """
    memory = memory or {}
    s = series_table(agg, features, series)
    s = s[s["data_size"] > 0]
    F = feature_matrix(agg, features)
    choice = first_stage_features(screened)
    io = reads_per_op(agg)
    rows, form_rows = [], []
    for key, g in s.groupby(FAMILY, sort=False):
        if g["data_size"].nunique() < 3:
            continue
        wide = g.pivot(index="device", columns="data_size", values="value").astype(float)
        limits = {memory_of(memory, src, key[FAMILY.index("engine")]) for src in g["source"].unique()}
        mem = limits.pop() if len(limits) == 1 else np.nan
        mem = None if np.isnan(mem) else mem
        sizes = sorted(wide.columns)
        per_size = choice.get(tuple(key), {})
        feature = per_size.get(int(sizes[-2])) if len(sizes) >= 2 else None
        fam = dict(zip(FAMILY, key))
        requests = io.get(tuple(fam[c] for c in RUN))
        rows += _family_folds(fam, wide, F, feature, mem, form_rows, requests, forms)
    folds = pd.DataFrame(rows, columns=[c for c in FOLD_COLUMNS if c not in ("pct_error", "baseline_pct_error")])
    folds["pct_error"] = pct_error(folds["prediction"], folds["truth"])
    folds["baseline_pct_error"] = pct_error(folds["baseline"], folds["truth"])
    table = (pd.concat(form_rows, ignore_index=True)[FORM_COLUMNS] if form_rows
             else pd.DataFrame(columns=FORM_COLUMNS))
    return folds[FOLD_COLUMNS], summarise(folds[FOLD_COLUMNS]), table


def _mape(v) -> float:
    v = np.abs(np.asarray(v, dtype=float))
    return float(np.mean(v)) if len(v) and np.isfinite(v).all() else np.nan


def summarise(folds: pd.DataFrame) -> pd.DataFrame:
    """Per kind and family: MAPE of the held-out predictions and of the baseline, all devices and
    split into interior and extreme ones (NaN where a split has no device or a prediction failed);
    ``forms`` the second-stage forms used (one for ``size``; per fold for ``chain``)."""
    rows = []
    for key, g in folds.groupby(["kind", *FAMILY], sort=False):
        inner, outer = g[g["position"] == "interior"], g[g["position"] != "interior"]
        rows.append({**dict(zip(["kind", *FAMILY], key)), **g.iloc[0][["held_out_size", "train_sizes", "memory"]],
                     "forms": "+".join(sorted(g["form"].unique())),
                     "form_why": "; ".join(w for w in g["form_why"].unique() if w), "n_devices": len(g),
                     "mape": _mape(g["pct_error"]), "baseline_mape": _mape(g["baseline_pct_error"]),
                     "interior_mape": _mape(inner["pct_error"]),
                     "interior_baseline_mape": _mape(inner["baseline_pct_error"]),
                     "extreme_mape": _mape(outer["pct_error"]),
                     "extreme_baseline_mape": _mape(outer["baseline_pct_error"])})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
