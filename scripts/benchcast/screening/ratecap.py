"""Devices with a rate cap: an application's latency from the requests that pass, bounded by the cap.

A token bucket (cgroup blkio throttling, a cloud volume's IOPS limit) lets most requests pass at
the backing device's speed and holds a few for long once a time slice's budget is spent. fio's
back-to-back reads at queue depth 1 spend every budget, so their mean is the cap's spacing
(1/IOPS) while their median is the backing device's latency. An application that reads between
its own work sees the median until its own request rate reaches the cap; from there its
operations are spaced by the cap. No straight line on one figure follows both regimes, so on a
device whose random-read mean lies far above its median (``mean / median >= ratio``, the cap's
signature) a series whose operations read from the device is predicted as

    y = (a + b x) * f

* ``x``: what one operation asks of the device at the typical request: ``k`` reads x the read
  median + ``s`` syncs x the commit figure, ``k`` and ``s`` the requests per operation at the
  series' data size (median over the training devices that count them); a read series' ``x`` is
  its reads alone (a read does not wait for the commits, which are the updates': with them, the
  capped tier's slow commits made its reads look slow, RocksDB's reads on idle1 34 % off instead of
  18 %);
* ``a + b x``: the series' line over the training devices without the cap's signature (read
  mean / median below ``ratio``: nothing spaces their operations but the device); ``c + d x`` the
  line of ``t``, a device's observed time per operation (1 / throughput), over the same devices. A
  capped training device stays out even where its cap seems not to bind: a capped loop device's
  swap pass took 1.15x its cap's spacing (the faults' own time), and counted as free at 0.9 it
  put a line through the two regimes (a loop device capped at 12,000 IOPS, added by
  ``--configfile``, predicted 75-116 % too slow; docs/archive/method-notebook.md, session 37);
* ``r = k m`` and ``w = v n``: the time per operation the read cap and the write cap allow (``m``
  the read mean, ``v`` the writes per operation, ``n`` the random-write mean: fio's back-to-back
  writes at queue depth 1 spend the write budget as its reads spend the read budget);
* ``f``: reads wait for read tokens alone, so a read series is slowed by ``f = max(1, r /
  max(c + d x, w))`` (an operation the write cap already spaces leaves the reads their budget);
  any other series (an update reads, writes and commits) by ``f = max(1, max(r, w) / (c + d x))``.

An out-of-core program's pass is such an operation too: its swap-ins are synchronous 4K reads,
and on a capped device the cap spaces them (a pass's ``t`` is its own time: the passes run one
after another). The rule needs what it multiplies to be known for a device it has not seen: it
does not apply where the training devices' reads per operation differ by more than
:data:`SPREAD` (a working set at the memory line pages on one device and hardly on another), nor
where no read figure lies within :data:`SIZE_FACTOR` of the read request size (a mapped file's
readahead of several hundred KiB); a write figure of another size prices no write cap; and with
fewer than :data:`MIN_TRAIN` training devices without a cap it makes no prediction.

:func:`apply` replaces the predictions of capped devices (held-out devices, or spec cards that give
both the read mean and its median) in a table of predictions; elsewhere they stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import BenchcastError, fits
from ..records import blockio
from ..core import units
from ..features import PROFILE_KEYS, feature_table
from ..features.iopath import io_path_name, median_twin, nearest_figure

#: The model's name in prediction tables.
MODEL = "rate cap"
#: Fewest training devices a line needs (a line through two points has no interval).
MIN_TRAIN = 3
#: The op of a read-latency series (slowed by the read cap alone).
READ = "read"
#: The series the rule predicts: mean latencies (a throughput, a percentile follows other laws).
METRIC = "lat_mean"
#: What the workload's throughput series is recorded as (the YCSB records: op, metric).
THROUGHPUT = ("overall", "throughput")
#: Ops whose operations run back to back, one at a time: their mean latency is the time per operation.
SERIAL = ("pass",)


def label(key) -> str:
    """'ratecap[mariadb/read-only]': the model's features label for a series key (named as its
    I/O-path figure, :func:`benchcast.features.iopath.io_path_name`)."""
    return io_path_name(key, "ratecap")


def _of_workload(records: pd.DataFrame, key) -> pd.DataFrame:
    """The rows of ``records`` of the series' workload at its data size."""
    return records[np.logical_and.reduce([(records[c] == key[c]).to_numpy() for c in [*PROFILE_KEYS, "data_size"]])]


#: The read figure prices a request within this factor of its block size; beyond it the rule does not
#: apply (a cap counts requests, and bytes: fio's 64K read says nothing of a 600 KiB readahead).
SIZE_FACTOR = 2.0


#: The devices must agree on the reads per operation within this factor: where they do not (a working
#: set at the memory line pages on one device and hardly on another), the count is the device's or
#: chance's, not the application's, and a held-out device's cannot be known.
SPREAD = 1.5


def _agreed(per_op: pd.Series) -> bool:
    """Whether the devices' requests per operation lie within :data:`SPREAD` of each other."""
    v = per_op.astype(float)
    return bool(len(v) and v.min() > 0 and v.max() / v.min() <= SPREAD)


def weights(agg: pd.DataFrame, key, min_per_op: float, feats: pd.DataFrame | None = None) -> dict | None:
    """What one operation of the series ``key`` (a mapping with :data:`PROFILE_KEYS` and
    ``data_size``) asks of the device, from the ``device`` records of ``agg`` at that data size
    (median over the devices that count them): ``reads``, ``mean`` and ``median`` (the random-read
    figures at its read request size), ``syncs`` and ``sync`` (the commit figure), ``writes`` and
    ``write`` (the random-write mean at its write request size; both 0 and None below
    ``min_per_op`` per operation). None where it reads less than ``min_per_op`` per operation, where
    the devices' reads per operation differ by more than :data:`SPREAD`, where the study lacks the
    read mean or its median, or where that figure's block size is not within :data:`SIZE_FACTOR`
    of the read request size. ``feats``: :func:`benchcast.features.feature_table`
    of ``agg`` where known."""
    io = _of_workload(agg[agg["op"] == blockio.OP], key)
    if io.empty:
        return None
    p = io.groupby("metric")["value"].median()
    reads = float(p.get("reads_per_op", 0.0))
    if not reads >= min_per_op or not _agreed(io[io["metric"] == "reads_per_op"]["value"]):
        return None
    feats = (feature_table(agg) if feats is None else feats).drop_duplicates("feature")
    size = p.get("read_request_size", 0)
    mean = nearest_figure(feats, "randread", "read", size, within=SIZE_FACTOR)
    median = median_twin(feats, mean) if mean else None
    if not median:
        return None
    size = p.get("write_request_size", 0)
    syncs, writes = float(p.get("syncs_per_op", 0.0)), float(p.get("writes_per_op", 0.0))
    sync = nearest_figure(feats, "write", "sync", size) if syncs >= min_per_op else None
    write = nearest_figure(feats, "randwrite", "write", size, within=SIZE_FACTOR) if writes >= min_per_op else None
    return {"reads": reads, "mean": mean, "median": median, "syncs": syncs if sync else 0.0, "sync": sync,
            "writes": writes if write else 0.0, "write": write}


def figures(F: pd.DataFrame, w: dict, read: bool = False) -> pd.DataFrame:
    """Columns x, r, w (the read and the write cap's time per operation; w 0 where the operation
    writes less than ``min_per_op``) and cap (read mean / median) for every row of ``F`` (device or
    target x feature) under the weights ``w`` (:func:`weights`); NaN where a row lacks a figure.
    ``read``: x of a read series, its reads alone (the module's ``x``)."""
    col = lambda f: F[f].astype(float) if f in F.columns else pd.Series(np.nan, index=F.index)  # noqa: E731
    mean, median = col(w["mean"]), col(w["median"])
    x = w["reads"] * median + (w["syncs"] * col(w["sync"]) if w["sync"] and not read else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return pd.DataFrame({"x": x, "r": w["reads"] * mean, "w": w["writes"] * col(w["write"]) if w["write"] else 0.0,
                             "cap": mean / median}, index=F.index)


def spacing(agg: pd.DataFrame, key) -> pd.Series:
    """Observed time per operation (us, 1 / throughput) of the series' workload at its data size,
    per device of ``agg``. A workload without a throughput record whose operations run one after
    another (an out-of-core program's passes: :data:`SERIAL`) takes its operations' mean latency."""
    t = _of_workload(agg[(agg["op"] == THROUGHPUT[0]) & (agg["metric"] == THROUGHPUT[1])], key)
    if t.empty and key["op"] in SERIAL:
        lat = _of_workload(agg[(agg["op"] == key["op"]) & (agg["metric"] == METRIC)], key)
        if len(lat):
            us = units.convert(lat.set_index("device")["value"].astype(float), lat["unit"].iloc[0], "us")
            return us.groupby(level=0).first()
    return units.time_per_op(t.set_index("device")["value"].astype(float)).groupby(level=0).first()


#: How many training devices nearest the target's I/O judge whether the line fits there (:func:`local_miss`).
NEAREST = 2


def local_miss(free: pd.DataFrame, fitted: np.ndarray, x: float) -> float:
    """Mean percent by which a line (``fitted`` at the rows of ``free``, columns x and y) misses
    the :data:`NEAREST` training devices nearest ``x`` on a log scale: how well it fits where it
    is about to predict. NaN where ``x`` or a device's x is not positive."""
    xs = free["x"].to_numpy(dtype=float)
    if not x > 0 or not (xs > 0).all():
        return float("nan")
    near = np.argsort(np.abs(np.log(xs) - np.log(x)), kind="stable")[:NEAREST]
    return float(100 * np.mean(np.abs(fitted[near] / free["y"].to_numpy(dtype=float)[near] - 1)))


def predict_one(y: pd.Series, t: pd.Series, train: pd.DataFrame, target: pd.Series, read: bool,
                ratio: float, alpha: float = 0.05, fit: float | None = None) -> dict | None:
    """The capped device's prediction from the training devices' results ``y``, their time per
    operation ``t`` and figures ``train`` (:func:`figures`, rows devices), and the target's figures
    ``target`` (a row of :func:`figures`); ``read``: the series is a read latency; ``ratio``: the
    read mean / median from which a device has a cap (:class:`Rule`); ``fit``: the most the line
    may miss the training devices nearest the target's x (:func:`local_miss`, percent; None: no
    check). Returns prediction, lower, upper (the line's interval, scaled alike), resid_df,
    interval_flag, n_train. None where fewer than :data:`MIN_TRAIN` training devices have
    everything and no cap, where the target lacks x or r, or where the line misses its nearest
    devices by more than ``fit``; a device or target without the random-write mean (a spec card, a
    tier measured for some series only) counts as having no write cap."""
    d = train.assign(y=y, t=t, w=train["w"].fillna(0.0)).dropna(subset=["y", "t", "x", "r"])
    if len(d) < MIN_TRAIN or not np.isfinite(target[["x", "r"]].astype(float)).all():
        return None
    free = d[d["cap"] < ratio]
    if len(free) < MIN_TRAIN:  # a line through capped devices mixes the two regimes
        return None
    X = fits.design_matrix(free, ["x"])
    try:
        line, tline = fits.fit_ols(X, free["y"]), fits.fit_ols(X, free["t"])
    except BenchcastError:  # a rank-deficient design (one x for all): no prediction by this rule
        return None
    new = pd.DataFrame({"x": [float(target["x"])]})
    if fit is not None:  # a line through devices of very different speeds can miss the fast end
        if local_miss(free, np.asarray(line.result.fittedvalues), float(target["x"])) > fit:
            return None
    p = fits.predict_ols(line, new, alpha).iloc[0]
    t0 = float(fits.predict_ols(tline, new, alpha)["prediction"].iloc[0])
    r0, w0 = float(target["r"]), float(np.nan_to_num(target["w"]))  # a card without the write mean: no write cap
    paced = max(t0, w0) if read else t0  # what spaces the operations without this series' own cap
    f = max(1.0, (r0 if read else max(r0, w0)) / paced) if paced > 0 else 1.0
    return {"prediction": f * float(p["prediction"]), "lower": f * float(p["lower"]), "upper": f * float(p["upper"]),
            "resid_df": float(p["resid_df"]), "interval_flag": p["interval_flag"], "n_train": len(free)}


def _signatures(feats: pd.DataFrame, new: pd.DataFrame) -> pd.Series:
    """Per row of ``new`` (device or target x feature), the largest read mean / median over the
    random-read figures that have a median twin: a row below ``ratio`` here shows no cap on any figure
    :func:`weights` could pick."""
    f = feats.drop_duplicates("feature")
    means = f.loc[(f["workload"] == "randread") & (f["metric"] == METRIC), "feature"]
    pairs = [(m, t) for m, t in ((m, median_twin(f, m)) for m in means) if t and m in new.columns and t in new.columns]
    if not pairs:
        return pd.Series(np.nan, index=new.index, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = pd.concat([new[m].astype(float) / new[t].astype(float) for m, t in pairs], axis=1)
    return ratios.max(axis=1, skipna=True)


@dataclass(frozen=True)
class Rule:
    """When the rule applies and how wide its intervals are: on a device whose read mean / median is
    ``ratio`` or more, to a series that reads at least ``min_per_op`` requests per operation
    (:func:`weights`; either None: the rule is off); ``alpha``: 1 - the intervals' level; ``fit``:
    not where its line misses the training devices nearest the device by more than this percent
    (:func:`local_miss`; None: no check)."""

    ratio: float | None
    min_per_op: float | None
    alpha: float = 0.05
    fit: float | None = None


def apply(rows: pd.DataFrame, agg: pd.DataFrame, F: pd.DataFrame, Y: pd.DataFrame, keys: pd.DataFrame,
          rule: Rule, new: pd.DataFrame | None = None, at: str = "held_out") -> pd.DataFrame:
    """``rows`` (predictions: series, the predicted device or target in column ``at``, prediction,
    lower, upper, model, features, ...) with the rows of capped devices replaced by this rule's
    prediction (model :data:`MODEL`, features :func:`label`, x the I/O at the median request);
    only mean-latency series (:data:`METRIC`).

    ``agg``: the aggregated records (device counters, throughput); ``F`` and ``Y``: the measured
    devices' figures (device x feature) and results (device x series, ``keys`` their keys, index
    series); ``new``: the figures of the predicted targets (None: they are measured devices of
    ``F``). A row's training devices are the measured devices other than its own. Nothing changes
    where ``rule.ratio`` or ``rule.min_per_op`` is None, for a device whose read mean / median is
    below ``rule.ratio``, or where the rule cannot predict (:func:`weights`, :func:`predict_one`);
    truth, abs_error, pct_error and covered are recomputed where the rows have a truth."""
    ratio, min_per_op, alpha = rule.ratio, rule.min_per_op, rule.alpha
    if ratio is None or min_per_op is None or rows.empty:
        return rows
    new = F if new is None else new
    out = rows.copy()
    out["features"] = out["features"].astype(object)
    out["model"] = out["model"].astype(object)
    feats = feature_table(agg)
    io = agg[agg["op"] == blockio.OP]  # the records :func:`weights` reads besides ``feats``
    cache: dict = {}
    capped = set(_signatures(feats, new).loc[lambda c: c >= ratio].index)  # no other row can be
    for i, r in rows[rows[at].isin(capped)].iterrows():
        key, target = keys.loc[r["series"]], r[at]
        if key["metric"] != METRIC or target not in new.index:
            continue
        workload = (target, *(key[c] for c in [*PROFILE_KEYS, "data_size"]))
        if workload not in cache:  # the series of one workload and size share it
            cache[workload] = weights(io[io["device"] != target], key, min_per_op, feats[feats["device"] != target])
        w = cache[workload]
        if w is None:
            continue
        read = key["op"] == READ
        mine = figures(new.loc[[target]], w, read).iloc[0]
        if not mine["cap"] >= ratio:
            continue
        devs = F.index[F.index != target]
        got = predict_one(Y[r["series"]].drop(index=target, errors="ignore"),
                          spacing(agg, key).drop(index=target, errors="ignore"), figures(F.loc[devs], w, read), mine,
                          read, ratio, alpha, rule.fit)
        if got is None:
            continue
        for c, v in got.items():
            if c in out.columns:
                out.at[i, c] = v
        out.at[i, "model"], out.at[i, "features"] = MODEL, label(key)
        if "x" in out.columns:
            out.at[i, "x"] = mine["x"]
    if "truth" in out.columns:
        out["abs_error"] = (out["prediction"] - out["truth"]).abs()
        out["pct_error"] = 100 * (out["prediction"] - out["truth"]) / out["truth"]
        if "covered" in out.columns:
            out["covered"] = fits.covered(out["truth"], out["lower"], out["upper"])
    return out
