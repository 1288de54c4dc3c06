"""Tests of benchcast.features.iopath: the device figures shaped like what an application did to the device,
and its I/O-path figure."""

import numpy as np
import pandas as pd
import pytest

from analysis_util import io_records, make_agg, renamed
from benchcast import features
from benchcast.features import iopath
from benchcast.screening import ratecap


def test_profile_candidates_follow_what_the_application_did_to_the_device():
    """Random reads at the block size nearest the read request size, commits (fdatasync) nearest
    the write size; each only from min_per_op requests per operation; nothing without records."""
    figs = {("randread", 4096, "lat_mean"): 9.0, ("randread", 16384, "lat_mean"): 12.0,
            ("randread", 16384, "bw"): 1e9, ("write", 4096, "lat_mean"): 20.0, ("write", 16384, "lat_mean"): 25.0,
            ("randwrite", 16384, "lat_mean"): 15.0}
    agg = make_agg({d: figs for d in "abc"}, {d: 100.0 for d in "abc"})
    agg.loc[(agg["benchmark"] == "fio") & (agg["workload"] == "write"), "op"] = "sync"

    def io(workload, reads, read_size, syncs, write_size):
        return io_records({dev: {"reads_per_op": reads, "read_request_size": read_size, "syncs_per_op": syncs * scale,
                                 "write_request_size": write_size, "writes_per_op": 3.0}
                           for dev, scale in (("a", 1.0), ("b", 1.1), ("c", 0.0))},  # c: sees no flush
                          workload=workload)

    agg = pd.concat([agg, io("write-only", 3.8, 16384, 1.2, 25000), io("read-only", 0.6, 5000, 0.0, 30000),
                     io("write-heavy", 0.01, 16384, 0.5, 4000)], ignore_index=True)
    shaped = iopath.profile_candidates(agg, {})
    key = {"benchmark": "ycsb", "engine": "mysql", "threads": 0, "data_size": 16 * 10**9}
    assert shaped({**key, "workload": "write-only"}) == ["randread_16K_lat_mean", "write_16K_sync_lat_mean",
                                                         "io_path[mysql/write-only]"]
    assert shaped({**key, "workload": "read-only"}) == ["randread_4K_lat_mean"]
    assert shaped({**key, "workload": "write-heavy"}) == ["write_4K_sync_lat_mean"]
    assert iopath.profile_candidates(agg, {}, min_per_op=1.0)({**key, "workload": "write-only"}) == [
        "randread_16K_lat_mean", "write_16K_sync_lat_mean", "io_path[mysql/write-only]"]
    assert iopath.profile_candidates(agg, {}, min_per_op=2.0)({**key, "workload": "write-only"}) == [
        "randread_16K_lat_mean"]
    assert shaped({**key, "workload": "read-heavy"}) == []  # no device records

    # the I/O-path figure: requests per operation (medians over a, b, c) x the figures, summed
    w = iopath.io_path_weights(agg)
    assert w["name"].unique().tolist() == ["io_path[mysql/write-only]"]  # the only workload doing both
    assert dict(zip(w["feature"], w["weight"])) == pytest.approx(
        {"randread_16K_lat_mean": 3.8, "write_16K_sync_lat_mean": 1.2})  # syncs: median of 1.2, 1.32, 0
    F = features.feature_matrix(agg).drop(index="c").assign(write_16K_sync_lat_mean=[25.0, np.nan])
    P = iopath.io_path_figures(F, w)
    assert P.at["a", "io_path[mysql/write-only]"] == pytest.approx(3.8 * 12.0 + 1.2 * 25.0)
    assert np.isnan(P.at["b", "io_path[mysql/write-only]"])  # lacks a component
    assert iopath.io_path_weights(agg, min_per_op=2.0).empty
    assert iopath.io_path_name({"engine": "rocksdb", "workload": "w", "threads": 8}) == "io_path[rocksdb/w/t8]"


def test_profile_candidates_add_the_median_random_read_where_measured():
    """The random-read figure's median (clat_p50) at the same block size joins the candidates where
    the study measures it, after the I/O-path figure, and stands for the reads in the I/O-path
    figure; commits get no twin; a study without the median (features.metrics) gets none."""
    figs = {("randread", 4096, "lat_mean"): 9.0, ("randread", 16384, "lat_mean"): 12.0,
            ("randread", 16384, "clat_p50"): 8.0, ("randread", 4096, "clat_p50"): 7.0,
            ("write", 16384, "lat_mean"): 25.0, ("write", 16384, "clat_p50"): 24.0}
    agg = make_agg({d: figs for d in "abc"}, {d: 100.0 for d in "abc"})
    agg.loc[(agg["benchmark"] == "fio") & (agg["workload"] == "write"), "op"] = "sync"
    agg = pd.concat([agg, io_records({dev: {"reads_per_op": 3.0, "read_request_size": 16384, "syncs_per_op": 1.0,
                                            "write_request_size": 16384} for dev in "abc"},
                                     workload="write-only")], ignore_index=True)
    key = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "threads": 0}
    assert iopath.profile_candidates(agg, {})(key) == [
        "randread_16K_lat_mean", "write_16K_sync_lat_mean", "io_path[mysql/write-only]", "randread_16K_clat_p50"]
    means_only = {"metrics": ["lat_mean"]}
    assert iopath.profile_candidates(agg, means_only)(key) == [
        "randread_16K_lat_mean", "write_16K_sync_lat_mean", "io_path[mysql/write-only]"]
    # the I/O-path figure counts the reads at their median where measured, else at their mean
    w = iopath.io_path_weights(agg)
    assert dict(zip(w["feature"], w["weight"])) == {"randread_16K_clat_p50": 3.0, "write_16K_sync_lat_mean": 1.0}
    P = iopath.io_path_figures(features.feature_matrix(agg), w)
    assert P["io_path[mysql/write-only]"].tolist() == pytest.approx([3.0 * 8.0 + 1.0 * 25.0] * 3)
    means = agg[agg["metric"] != "clat_p50"]
    w = iopath.io_path_weights(means)
    assert dict(zip(w["feature"], w["weight"])) == {"randread_16K_lat_mean": 3.0, "write_16K_sync_lat_mean": 1.0}
    feats = features.feature_table(agg)
    assert iopath.median_twin(feats, "randread_4K_lat_mean") == "randread_4K_clat_p50"
    assert iopath.median_twin(feats, "write_16K_sync_lat_mean") is None
    assert iopath.median_twin(feats, "randread_64K_lat_mean") is None


def test_figures_are_found_by_their_columns_not_their_names(monkeypatch):
    """With names that say nothing (a queue depth, a metric suffix), the same candidates, median
    twins, I/O-path weights and rate-cap figures, each under its figure's new name; a QD1 figure
    is still told from a QD4 one by its iodepth."""
    figs = {("randread", 16384, "lat_mean"): 12.0, ("randread", 16384, "clat_p50"): 8.0,
            ("write", 16384, "lat_mean"): 25.0, ("randwrite", 16384, "lat_mean"): 15.0}
    agg = make_agg({d: figs for d in "abc"}, {d: 100.0 for d in "abc"})
    agg.loc[(agg["benchmark"] == "fio") & (agg["workload"] == "write"), "op"] = "sync"
    fio = agg[agg["benchmark"] == "fio"]
    deep = fio[fio["workload"] == "randread"].assign(iodepth=4, value=2.0)  # QD4: no candidate of a QD1 path
    agg = pd.concat([agg.assign(iodepth=1, numjobs=1), deep.assign(numjobs=1),
                     io_records({d: {"reads_per_op": 3.0, "read_request_size": 16384, "syncs_per_op": 1.0,
                                     "write_request_size": 16384, "writes_per_op": 2.0} for d in "abc"})],
                    ignore_index=True)
    key = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "threads": 0, "data_size": 16 * 10**9}
    shaped = iopath.profile_candidates(agg, {})(key)
    assert shaped == ["randread_16K_lat_mean", "write_16K_sync_lat_mean", "io_path[mysql/write-only]",
                      "randread_16K_clat_p50"]
    weights = iopath.io_path_weights(agg)
    capped = ratecap.weights(agg, key, 0.05)
    rename = renamed(agg, monkeypatch)
    assert sorted(rename.values()) != sorted(rename)  # the names changed
    assert iopath.profile_candidates(agg, {})(key) == [rename.get(f, f) for f in shaped]
    pd.testing.assert_frame_equal(iopath.io_path_weights(agg), weights.assign(feature=weights["feature"].map(rename)))
    assert ratecap.weights(agg, key, 0.05) == {k: rename.get(v, v) if isinstance(v, str) else v
                                               for k, v in capped.items()}


def test_the_nearest_figure_and_how_near_it_must_be():
    """The nearest block size on a log scale; with ``within``, none farther than that factor."""
    figs = {("randread", 4096, "lat_mean"): 9.0, ("randread", 65536, "lat_mean"): 30.0}
    feats = features.feature_table(make_agg({"a": figs}, {"a": 1.0})).drop_duplicates("feature")
    assert iopath.nearest_figure(feats, "randread", "read", 600 * 1024) == "randread_64K_lat_mean"
    assert iopath.nearest_figure(feats, "randread", "read", 600 * 1024, within=2.0) is None
    assert iopath.nearest_figure(feats, "randread", "read", 100 * 1024, within=2.0) == "randread_64K_lat_mean"
    assert iopath.nearest_figure(feats, "randread", "read", 12 * 1024, within=2.0) is None  # 3x from 4K and 5.3x from 64K
    assert iopath.nearest_figure(feats, "randread", "read", 0, within=2.0) is None
