"""Tests of benchcast.features: feature and series tables, names, spec cards, candidates, workload variables."""

import numpy as np
import pandas as pd
import pytest

from analysis_util import PAPER, make_agg, paper_agg, renamed
from benchcast import BenchcastError, features
from benchcast.prediction import predict
from benchcast.screening import screen


def test_tables_feature_ids_series_labels_and_targets():
    agg = make_agg({"a": {("randwrite", 65536, "lat_mean"): 10.0, ("randwrite", 1024, "bw"): 5.0},
                    "b": {("randwrite", 65536, "lat_mean"): 20.0}}, {"a": 100.0, "b": 200.0})
    F = features.feature_matrix(agg)
    assert list(F.columns) == ["randwrite_1K_bw", "randwrite_64K_lat_mean"]
    assert np.isnan(F.at["b", "randwrite_1K_bw"])
    Y, keys = features.series_matrix(agg)
    assert list(Y.columns) == ["ycsb/mysql/write-only/write/lat_mean/16GB"]
    assert keys.iloc[0]["data_size"] == 16 * 10**9
    T = features.target_figures({"S": {"figures": [{"workload": "randwrite", "block_size": "64K",
                                                  "metric": "lat_mean", "value": 50}]}})
    assert T.at["S", "randwrite_64K_lat_mean"] == 50.0
    dup = pd.concat([agg, agg.iloc[[0]].assign(source="other")])  # two sources of one figure
    with pytest.raises(BenchcastError, match="several values for feature"):
        features.feature_matrix(dup)


def test_candidate_feature_forms():
    avail = ["f1", "f2", "f3"]
    assert features.candidate_features("s", {}, None, avail) == avail
    assert features.candidate_features("s", {}, {"s": ["f3", "nope", "f1"]}, avail) == ["f3", "f1"]
    assert features.candidate_features("s", {"op": "w"}, lambda k: ["f2"] if k["op"] == "w" else [], avail) == ["f2"]
    df = pd.DataFrame({"series": ["s", "t"], "feature": ["f1", "f2"]})
    assert features.candidate_features("s", {}, df, avail) == ["f1"]


def test_varying_workload_variables():
    d = pd.DataFrame({"data_size": [2e9, 4e9, 2e9, 4e9], "workload": ["w", "w", "r", "r"], "threads": [1, 1, 1, 1]})
    wv = features.workload_variables(d, {"w": 0.0, "r": 1.0})
    assert wv["log2_data_gb"].tolist() == pytest.approx([1, 2, 1, 2])
    # two sizes: log2 would be collinear with data_gb; threads constant
    assert features.varying_workload_variables(wv) == ["data_gb", "read_fraction"]
    d3 = pd.concat([d, d.assign(data_size=8e9)])
    assert features.varying_workload_variables(features.workload_variables(d3, {"w": 0, "r": 1})) == [
        "data_gb", "log2_data_gb", "read_fraction"]


def test_spec_card_op_of_a_mixed_workload():
    """A figure of a mixed workload names its op (the schema allows the key, the feature name uses it);
    without it the card is refused rather than silently read as a write."""
    card = {"T": {"figures": [{"workload": "randrw", "op": "read", "block_size": "4K", "metric": "lat_mean",
                               "value": 9.0},
                              {"workload": "randrw", "op": "write", "block_size": "4K", "metric": "lat_mean",
                               "value": 11.0},
                              {"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": 8.0}]}}
    spec = features.spec_features(card).set_index("feature")["x"].to_dict()
    assert spec == {"randrw_4K_read_lat_mean": 9.0, "randrw_4K_write_lat_mean": 11.0, "randread_4K_lat_mean": 8.0}
    agg = make_agg({"a": {("randrw", 4096, "lat_mean"): 1.0}}, {"a": 2.0}).assign(op=["read", "write"])
    assert features.feature_table(agg)["feature"].tolist() == ["randrw_4K_read_lat_mean"]
    del card["T"]["figures"][0]["op"]
    with pytest.raises(BenchcastError, match=r"targets.T.figures\[0\]: workload 'randrw' is mixed"):
        features.spec_features(card)


def test_feature_and_series_tables_follow_the_study_settings():
    agg = paper_agg()
    feats = features.feature_table(agg, PAPER["features"])
    assert set(feats["metric"]) == {"lat_mean", "bw"} and feats["feature"].nunique() == 20
    assert feats.groupby("feature")["device"].nunique().eq(3).all()
    ser = features.series_table(agg, PAPER["features"], PAPER["series"])
    assert set(ser["benchmark"]) == {"ycsb"} and ser["series"].str.startswith("ycsb/mysql/").all()
    assert len(features.study_table(agg, PAPER["features"], PAPER["series"])) == len(feats) + len(ser)


def test_feature_names_carry_sync_op_and_queue_depth():
    """The sync calls of a logging job and a queue depth above 1 are named; plain QD1 figures keep
    the paper's names (so the paper study's tables do not change)."""
    assert features.feature_name("randwrite", 65536, "write", "lat_mean", 1, None, 1) == "randwrite_64K_lat_mean"
    assert features.feature_name("write", 4096, "sync", "lat_mean", 1, None, 1) == "write_4K_sync_lat_mean"
    assert features.feature_name("randread", 4096, "read", "lat_mean", 32, None, 1) == "randread_4K_qd32_lat_mean"
    assert features.feature_name("randrw", 4096, "read", "bw", 4, None, 1) == "randrw_4K_qd4_read_bw"
    agg = make_agg({"a": {("write", 4096, "lat_mean"): 1.0, ("randread", 4096, "lat_mean"): 9.0}}, {"a": 2.0})
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    agg.loc[agg["workload"] == "randread", "threads"] = 8
    assert sorted(features.feature_table(agg)["feature"]) == ["randread_4K_qd8_lat_mean", "write_4K_sync_lat_mean"]
    card = {"T": {"figures": [{"workload": "write", "op": "sync", "block_size": "4K", "metric": "lat_mean",
                               "value": 5.0},
                              {"workload": "randread", "block_size": "4K", "iodepth": 8, "metric": "lat_mean",
                               "value": 20.0}]}}
    assert features.spec_features(card).set_index("feature")["x"].to_dict() == {
        "write_4K_sync_lat_mean": 5.0, "randread_4K_qd8_lat_mean": 20.0}


def test_numjobs_named_after_the_queue_depth_and_one_value_per_setting():
    """iodepth and numjobs name their own parts ('_qd4_j8'), only above 1: the QD1 figures and the
    queue-depth figures of one job keep their names; 4 x 1, 2 x 2 and 1 x 4 are three figures; two
    imported cells that differ only in direct name it on every device, none is averaged away."""
    assert features.feature_name("randread", 4096, "read", "lat_mean", 4, None, 8) == "randread_4K_qd4_j8_lat_mean"
    assert features.feature_name("randread", 4096, "read", "lat_mean", 1, "libaio", 4) == "randread_4K_j4_libaio_lat_mean"
    assert features.feature_name("randread", 4096, "read", "lat_mean", 32, None, 1) == "randread_4K_qd32_lat_mean"
    agg = make_agg({d: {("randread", 4096, "lat_mean"): 10.0} for d in "ab"}, {"a": 1.0, "b": 2.0})
    one = agg[agg["benchmark"] == "fio"]
    sweep = pd.concat([one.assign(iodepth=d, numjobs=j, threads=d * j, value=float(10 * d + j))
                       for d, j in ((4, 1), (2, 2), (1, 4))], ignore_index=True)
    table = features.feature_table(sweep)
    assert set(table["feature"]) == {"randread_4K_qd4_lat_mean", "randread_4K_qd2_j2_lat_mean", "randread_4K_j4_lat_mean"}
    assert table.set_index(["feature", "device"]).loc[("randread_4K_qd2_j2_lat_mean", "a"), "value"] == 22.0
    assert {"iodepth", "numjobs"} <= set(table.columns)
    card = {"T": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "iodepth": 2,
                               "numjobs": 2, "value": 30.0}]}}
    assert list(features.spec_features(card)["feature"]) == ["randread_4K_qd2_j2_lat_mean"]
    label = "rw=randread bs=4K iodepth=1 numjobs=1 ioengine=libaio direct={} size=4M"
    cells = pd.concat([one.assign(iodepth=1, numjobs=1, cell=label.format(1)),
                       one[one["device"] == "a"].assign(iodepth=1, numjobs=1, cell=label.format(0), value=3.0)],
                      ignore_index=True)
    named = features.feature_table(cells).set_index(["feature", "device"])["value"]
    assert named.to_dict() == {("randread_4K_direct1_lat_mean", "a"): 10.0, ("randread_4K_direct1_lat_mean", "b"): 10.0,
                               ("randread_4K_direct0_lat_mean", "a"): 3.0}
    # two grid cells (ids that do not spell their options) of one figure: said, not averaged
    ids = pd.concat([one.assign(cell="randread-4K-aaaaaa"), one.assign(cell="randread-4K-bbbbbb", value=1.0)])
    with pytest.raises(BenchcastError, match=r"several values for feature 'randread_4K_lat_mean' "
                                             r"\(cells 'randread-4K-aaaaaa', 'randread-4K-bbbbbb'\)"):
        features.feature_table(ids)


def test_the_default_local_studys_feature_names_are_unchanged():
    """Every cell of the default config's measured grid named as before iodepth and numjobs were
    apart (the queue depth then was iodepth x numjobs): spec cards and earlier trees keep theirs."""
    import copy

    from analysis_util import CONFIG
    from benchcast import config
    from benchcast.sources.run import fio

    study = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]
    cells = [c for src in study["sources"].values() if src["type"] == "fio"
             for c in fio.expand_grid(src, study["devices"])]
    assert cells
    for c in cells:
        op, threads = features.rw_op(c["rw"]) or "read", c["iodepth"] * c["numjobs"]
        before = (f"{c['rw']}_{features.records.size_label(c['bs'])}" + (f"_qd{threads}" if threads > 1 else "")
                  + ("" if features.rw_op(c["rw"]) else f"_{op}") + "_lat_mean")
        assert features.feature_name(c["rw"], c["bs"], op, "lat_mean", c["iodepth"], None, c["numjobs"]) == before


def test_an_ioengine_axis_is_named_but_engines_of_other_tools_are_not():
    """Two engines on one device (a grid axis) name the engine on every device; a figure whose engine
    differs only between devices (imported results of another tool) stays one figure."""
    agg = make_agg({d: {("randread", 4096, "lat_mean"): 10.0, ("randwrite", 4096, "lat_mean"): 20.0} for d in "ab"},
                   {"a": 1.0, "b": 2.0})
    fio = agg["benchmark"] == "fio"
    agg.loc[fio & (agg["device"] == "a"), "engine"] = "libaio"
    agg.loc[fio & (agg["device"] == "b"), "engine"] = "psync"
    extra = agg[fio & (agg["device"] == "a") & (agg["workload"] == "randread")].assign(engine="io_uring", value=8.0)
    agg = pd.concat([agg, extra], ignore_index=True)
    names = set(features.feature_table(agg)["feature"])
    assert names == {"randread_4K_libaio_lat_mean", "randread_4K_io_uring_lat_mean", "randread_4K_psync_lat_mean",
                     "randwrite_4K_lat_mean"}
    card = {"T": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean",
                               "ioengine": "libaio", "value": "9 us"}]}}
    assert list(features.spec_features(card)["feature"]) == ["randread_4K_libaio_lat_mean"]


def test_an_mmap_axis_names_only_the_mapped_figures():
    """psync and mmap figures of one shape: the mapped ones carry the engine, the plain ones keep
    the names spec cards give; a figure only one engine measured is not renamed."""
    agg = make_agg({d: {("randread", 4096, "lat_mean"): 10.0, ("randwrite", 4096, "lat_mean"): 20.0} for d in "ab"},
                   {"a": 1.0, "b": 2.0})
    fio = agg["benchmark"] == "fio"
    agg.loc[fio, "engine"] = "psync"
    mapped = agg[fio & (agg["workload"] == "randread")].assign(engine="mmap", value=30.0)
    agg = pd.concat([agg, mapped], ignore_index=True)
    table = features.feature_table(agg)
    assert set(table["feature"]) == {"randread_4K_lat_mean", "randread_4K_mmap_lat_mean", "randwrite_4K_lat_mean"}
    assert (table.loc[table["feature"] == "randread_4K_mmap_lat_mean", "value"] == 30.0).all()
    card = {"T": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": "9 us"},
                              {"workload": "randread", "block_size": "4K", "metric": "lat_mean",
                               "ioengine": "mmap", "value": "20 us"}]}}
    assert list(features.spec_features(card)["feature"]) == ["randread_4K_lat_mean", "randread_4K_mmap_lat_mean"]


def test_an_out_of_core_in_memory_reference_is_no_series():
    """The ooc ``memory`` runs (the reference the chart divides by) are left out of the series; the
    same program over swap is one."""
    agg = make_agg({d: {("randread", 4096, "lat_mean"): v} for d, v in (("a", 1.0), ("b", 2.0))}, {"a": 5.0, "b": 9.0})
    ooc_rows = [dict(device=d, benchmark="ooc", engine=mode, workload="triad", block_size=0, threads=1,
                     data_size=64 << 20, op="pass", metric="lat_mean", unit="us", value=v)
                for d in "ab" for mode, v in (("memory", 100.0), ("swap", 900.0))]
    agg = pd.concat([agg, pd.DataFrame(ooc_rows).assign(study="s", source="ooc", n=2)], ignore_index=True)
    labels = set(features.series_table(agg)["series"])
    assert any(label.startswith("ooc/swap/triad") for label in labels)
    assert not any(label.startswith("ooc/memory/") for label in labels)


def test_the_feature_table_carries_what_the_name_says():
    """Each row carries the figure's workload, block size, op, metric, iodepth, numjobs, the engine its
    name carries ('' for the plain figure) and setting; the name is made from those columns alone."""
    agg = make_agg({d: {("randread", 4096, "lat_mean"): 10.0} for d in "ab"}, {"a": 1.0, "b": 2.0})
    one = agg[agg["benchmark"] == "fio"]
    sweep = pd.concat([one.assign(iodepth=4, numjobs=2), one.assign(iodepth=1, numjobs=1),
                       one.assign(iodepth=1, numjobs=1, engine="mmap", value=3.0)],
                      ignore_index=True)
    table = features.feature_table(sweep)
    assert list(table.columns) == features.FEATURE_TABLE_COLUMNS
    rows = table.drop_duplicates("feature").set_index("feature")[features.FEATURE_KEYS]
    assert rows.loc["randread_4K_qd4_j2_lat_mean"].tolist() == ["randread", 4096, "read", "lat_mean", 4, "", 2, ""]
    assert rows.loc["randread_4K_mmap_lat_mean"].tolist() == ["randread", 4096, "read", "lat_mean", 1, "mmap", 1, ""]
    for fid, r in rows.iterrows():
        assert features.feature_name(*r) == fid


def test_screening_and_prediction_read_the_columns_not_the_names(monkeypatch):
    """The paper's screening and predictions with names that say nothing: the same fits and values,
    each under its figure's new name (spec cards are named by the same function)."""
    agg = paper_agg()
    res = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    pred = predict.predict(res, PAPER["targets"])
    rename = renamed(agg, monkeypatch)
    res2 = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    pred2 = predict.predict(res2, PAPER["targets"])
    assert set(res2["feature"]) <= {f"F{i}" for i in range(len(rename))}
    pd.testing.assert_frame_equal(res2, res.assign(feature=res["feature"].map(rename)))
    pd.testing.assert_frame_equal(pred2, pred.assign(feature=pred["feature"].map(rename)))
