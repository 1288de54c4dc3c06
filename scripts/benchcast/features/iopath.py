"""What an application does to the device: its I/O profile, the device figures shaped like it, and its
I/O-path figure.

An application run's ``device`` records (:mod:`benchcast.records.blockio`) count the requests per operation
it sent (reads, syncs, writes) and their sizes. :func:`profile_candidates` turns them into the device
figures a series may be explained by (the random-read latency at the read request size, the commit
figure at the write request size, the random-read median beside the mean); :func:`io_path_weights`
and :func:`io_path_figures` weigh those figures into one figure per application workload, named by
:func:`io_path_name`. Figures are found by the columns of the feature table
(:func:`benchcast.features.feature_table`), never by their names.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..records import blockio
from . import FEATURE_KEYS, PROFILE_KEYS, feature_table

#: The metric of a latency figure's median twin (:func:`median_twin`).
MEDIAN = "clat_p50"


def nearest_figure(feats: pd.DataFrame, workload: str, op: str, size: float, within: float | None = None) -> str | None:
    """Feature id of the QD1 latency figure of ``workload``/``op`` at the block size nearest
    ``size`` bytes (on a log scale), None if the study has none (or, with ``within``, none whose
    block size lies within that factor of ``size``)."""
    ok = ((feats["workload"].to_numpy() == workload) & (feats["op"].to_numpy() == op)
          & (feats["metric"].to_numpy() == "lat_mean") & (feats["iodepth"].to_numpy(dtype=float) <= 1)
          & (feats["numjobs"].to_numpy(dtype=float) <= 1))  # arrays: asked per fold
    if not ok.any() or not size > 0:
        return None
    dist = np.abs(np.log2(feats["block_size"].to_numpy(dtype=float)[ok]) - np.log2(float(size)))
    if within is not None and dist.min() > np.log2(within):
        return None
    return str(feats["feature"].to_numpy()[ok][np.argmin(dist)])  # the first of the nearest


#: Name of an application's I/O-path figure (:func:`io_path_figures`): ``io_path[mariadb/write-only]``.
IO_PATH = "io_path"


def io_path_name(key: Mapping, kind: str = IO_PATH) -> str:
    """'io_path[mariadb/write-only]' ('/t8' added for threads above 1): the I/O-path figure of
    an application workload (:func:`io_path_figures`); another ``kind`` names another model of
    the workload's I/O path the same way ('ratecap[mariadb/write-only]')."""
    t = int(key.get("threads") or 0)
    return f"{kind}[{key['engine']}/{key['workload']}{f'/t{t}' if t > 1 else ''}]"


def _io_profiles(agg: pd.DataFrame) -> pd.DataFrame:
    """What each application workload did to the device: per :data:`PROFILE_KEYS`, the median of
    its ``device`` records (:mod:`benchcast.records.blockio`) over data sizes and the devices that have
    counters; one column per metric (reads_per_op, syncs_per_op, read_request_size, ...)."""
    io = agg[agg["op"] == blockio.OP]
    if io.empty:
        return pd.DataFrame(index=pd.MultiIndex.from_tuples([], names=PROFILE_KEYS))
    return io.groupby(PROFILE_KEYS + ["metric"])["value"].median().unstack("metric")


def _path_figures(p: pd.Series, feats: pd.DataFrame, min_per_op: float) -> list[tuple[str, float]]:
    """(figure, requests per operation) of one profile ``p`` (see :func:`profile_candidates`)."""
    out = []
    if p.get("reads_per_op", 0) >= min_per_op:
        out.append((nearest_figure(feats, "randread", "read", p.get("read_request_size", 0)), p["reads_per_op"]))
    if p.get("syncs_per_op", 0) >= min_per_op:
        out.append((nearest_figure(feats, "write", "sync", p.get("write_request_size", 0)), p["syncs_per_op"]))
    return [(f, float(w)) for f, w in out if f]


def profile_candidates(agg: pd.DataFrame, features: Mapping, min_per_op: float = 0.05):
    """A callable: series key -> the device figures shaped like what the application does to the
    device, from its ``device`` records (:mod:`benchcast.records.blockio`; per engine, workload and threads,
    the median over the data sizes and the devices that have counters, so that the series of one
    pool share their candidates):

    * random reads (``randread``, QD1 mean latency) at the block size nearest the application's
      read request size, when it sends at least ``min_per_op`` device reads per operation;
    * the commit figure (``write`` with fdatasync, op ``sync``) at the block size nearest its write
      request size, when it syncs at least ``min_per_op`` times per operation;
    * where it does both, its I/O-path figure (:func:`io_path_name`, :func:`io_path_figures`):
      the two weighted by the requests per operation, the reads at their median where measured
      (:func:`io_path_weights`);
    * beside the random-read figure, its median (``clat_p50``, :func:`median_twin`) where the
      study measures it: the latency of a typical request. A rate cap (cgroup blkio) lets most
      requests pass at the backing device's speed and holds a few for long; fio at full pace
      sees the mean, an application reading between its own work sees mostly the median.

    Buffered writes without a sync are left out: writeback happens off the operation's path. A
    series without device records, or none of whose figures the study measured, gets [] (the
    caller falls back to its pairing rules)."""
    feats = feature_table(agg, features).drop_duplicates("feature")
    profiles = _io_profiles(agg)

    @functools.lru_cache(maxsize=None)
    def of_profile(k: tuple) -> tuple[str, ...]:  # the series of one profile share their candidates
        if k not in profiles.index:
            return ()
        figs = [f for f, _ in _path_figures(profiles.loc[k], feats, min_per_op)]
        twins = [t for t in (median_twin(feats, f) for f in figs) if t]
        return (*figs, *([io_path_name(dict(zip(PROFILE_KEYS, k)))] if len(figs) > 1 else []), *twins)

    def allowed(key: dict) -> list[str]:
        return list(of_profile(tuple(key[c] for c in PROFILE_KEYS)))

    return allowed


def median_twin(feats: pd.DataFrame, feature: str) -> str | None:
    """The median completion latency (``clat_p50``) of a random-read figure of ``feats`` (a
    :func:`benchcast.features.feature_table`): the row of the same workload, op, block size, queue
    depth, jobs, engine and setting (:data:`benchcast.features.FEATURE_KEYS`); None for another
    figure or where the study does not measure it."""
    names = feats["feature"].to_numpy()
    at = np.flatnonzero(names == feature)
    if not len(at) or feats["workload"].iloc[at[0]] != "randread":
        return None
    same = np.logical_and.reduce([feats[c].to_numpy() == feats[c].iloc[at[0]] for c in FEATURE_KEYS if c != "metric"])
    twin = names[same & (feats["metric"].to_numpy() == MEDIAN)]
    return str(twin[0]) if len(twin) else None


def io_path_min_per_op(validate: Mapping) -> float | None:
    """The ``min_per_op`` of the I/O-path figures under a study's ``validate`` settings: its
    ``profile_min_per_op`` with ``candidates: profile``, else None (no I/O-path figures)."""
    return validate["profile_min_per_op"] if validate.get("candidates") == "profile" else None


IO_PATH_WEIGHT_COLUMNS = ["name", *PROFILE_KEYS, "feature", "weight"]


def io_path_weights(agg: pd.DataFrame, features: Mapping | None = None, min_per_op: float = 0.05) -> pd.DataFrame:
    """The weights of every I/O-path figure: what an operation of the application sends to the
    device (:func:`profile_candidates`: random reads and commits, each from ``min_per_op`` per
    operation; only workloads that do both), one row per component figure, weight = requests per
    operation (the median over the devices of ``agg`` that count them). Columns
    :data:`IO_PATH_WEIGHT_COLUMNS`.

    The random reads count at their median (:func:`median_twin`, where measured; else the mean):
    an application reads between its own work, and a typical request of it sees the median. The
    mean of fio's back-to-back reads holds a rate cap's long waits (a loop capped at 4000 IOPS:
    a 16K read's mean 250 us, its median 60-90 us; elsewhere the two differ by under 10 %)."""
    feats = feature_table(agg, features).drop_duplicates("feature")
    rows = []
    for k, p in _io_profiles(agg).iterrows():
        figs = [(median_twin(feats, f) or f, w) for f, w in _path_figures(p, feats, min_per_op)]
        if len(figs) > 1:
            key = dict(zip(PROFILE_KEYS, k))
            rows += [{"name": io_path_name(key), **key, "feature": f, "weight": w} for f, w in figs]
    return pd.DataFrame(rows, columns=IO_PATH_WEIGHT_COLUMNS)


def io_path_figures(F: pd.DataFrame, weights: pd.DataFrame) -> pd.DataFrame:
    """Each application's I/O-path figure on each device (or target) of ``F`` (device x feature):
    the sum over its component figures of requests per operation x the figure, what the device
    adds to one operation if its I/O were serial (``weights``: :func:`io_path_weights`). NaN where
    the device lacks a component. Index as ``F``, one column per name."""
    out = {}
    for name, w in weights.groupby("name", sort=False):
        cols = F.reindex(columns=list(w["feature"]))
        out[name] = (cols * w["weight"].to_numpy()).sum(axis=1, min_count=len(w)).where(cols.notna().all(axis=1))
    return pd.DataFrame(out, index=F.index, dtype=float)
