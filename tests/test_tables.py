"""Tests of benchcast.report.tables: reading analysis outputs back, and the report's tables (the paper's
Tables 8-14 and the validity tables) from the paper study analysed in memory."""
import numpy as np
import pandas as pd
import pytest

from benchcast import BenchcastError
from benchcast.report import tables

FOCUS = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write", "metric": "lat_mean"}


def test_read_table_types_and_errors(tmp_path):
    p = tmp_path / "t.csv"
    pd.DataFrame({"engine": ["0", ""], "covered": [True, None], "x": [1.5, None], "feature": ["", "f"]}).to_csv(
        p, index=False)
    df = tables.read_table(p, required=["engine"])
    assert df["engine"].tolist() == ["0", ""] and df["feature"].tolist() == ["", "f"]  # strings stay strings
    assert df["covered"].iloc[0] is True and np.isnan(df["covered"].iloc[1])
    assert df["x"].iloc[0] == 1.5 and np.isnan(df["x"].iloc[1])
    with pytest.raises(BenchcastError, match=r"t.csv: missing column\(s\) nope"):
        tables.read_table(p, required=["nope"])
    with pytest.raises(BenchcastError, match="no such file"):
        tables.read_table(tmp_path / "none.csv")


def test_an_aggregated_table_of_an_older_tree_reads_with_iodepth_numjobs_and_cell(tmp_path):
    """Another tree's aggregated.csv, written before iodepth, numjobs and cell were keys (a side of a
    comparison): fio rows read as iodepth = threads, numjobs 1, and compare by them."""
    old = pd.DataFrame([dict(study="s", source="fio:fio", device="d", benchmark="fio", engine="libaio",
                             workload="randread", block_size=4096, threads=8, data_size=0, op="read",
                             metric="lat_mean", unit="us", value=90.0, n=3)])
    old.to_csv(tmp_path / "aggregated.csv", index=False)
    agg = tables.read_aggregated(tmp_path / "aggregated.csv")
    assert (agg["iodepth"].tolist(), agg["numjobs"].tolist(), agg["cell"].tolist()) == ([8], [1], [""])
    new = agg.assign(value=99.0)
    assert tables.compare_cells(agg, new)["ratio"].tolist() == [1.1]
    assert tables.compare_cells(agg, new.assign(iodepth=4, numjobs=2)).empty  # 4 x 2 is not 8 x 1


def test_focus_completion_and_size(paper_analysis):
    best = paper_analysis["best"]
    assert tables.default_focus(best, {"workload": "write-only", "op": "write"}) == FOCUS
    with pytest.raises(BenchcastError, match="report.focus: no result series matches"):
        tables.default_focus(best, {"workload": "nope"})
    assert tables.focus_size(paper_analysis["screen"], FOCUS, "16GB") == 16 * 10**9
    with pytest.raises(BenchcastError, match=r"report.focus_data_size: 3GB was not measured"):
        tables.focus_size(paper_analysis["screen"], FOCUS, "3GB")


def test_paper_tables_8_to_14(paper_analysis):
    a = paper_analysis
    t8 = tables.table08(a["screen"], FOCUS, "16GB")
    assert t8["data_size_gb"].unique().tolist() == [16.0] and len(t8) == 10
    assert t8.iloc[0]["feature"] == "randwrite_64K_lat_mean" and t8.iloc[0]["r2"] == pytest.approx(0.999852, abs=1e-6)
    t9 = tables.table09_10(a["best"])
    assert len(t9) == 42 and list(t9.columns[:5]) == ["benchmark", "engine", "workload", "threads", "data_size_gb"]
    t11 = tables.table11(a["best"]).set_index("op")
    assert t11.loc["write", "mean_best_r2"] == pytest.approx(0.998331, abs=2e-6)
    assert t11.loc["read", "series"] == 21 and t11.loc["read", "fitted"] == 21
    t12 = tables.table12(a["predictions"], FOCUS)
    assert ((t12["a"] * t12["spec_value"] + t12["b"]) - t12["prediction"]).abs().max() < 1e-9
    t13 = tables.table13(a["points"], FOCUS).set_index("data_size_gb")
    assert list(t13.columns[:3]) == ["S-SCM", "M-SCM", "Optane-P4800X"]  # hypothetical devices first
    assert t13.loc[48.0, "S-SCM"] == pytest.approx(2027.159, abs=0.05) and not t13["beyond_2x"].any()
    refused = a["points"].assign(value=lambda d: d["value"].where(d["device"] != "M-SCM"))  # see benchcast.fits.positive
    t13r = tables.table13(refused, FOCUS).set_index("data_size_gb")
    assert list(t13r.columns) == list(t13.columns) and t13r["M-SCM"].isna().all()
    t14 = tables.table14(a["fits"], FOCUS).set_index("device")
    assert t14.loc["M-SCM", "r2"] == pytest.approx(0.484443, abs=2e-5) and t14.loc["dram", "kind"] == "measured"


def test_validity_tables(paper_analysis):
    a = paper_analysis
    cov = tables.validity_coverage(a["chosen_folds"], 0.95).set_index("model")
    assert cov.loc["simple (paper: max R²)", "with_interval"] == 0  # two training devices: no df
    assert cov.loc["multiple (held-out choice)", "with_interval"] > 0
    assert (cov["nominal_level"] == 0.95).all()
    ref = tables.validity_refusals(a["multiple_refusals"])
    assert ref["models"].sum() == len(a["multiple_refusals"]) and (ref["n_devices"] == 3).all()
    assert list(tables.validity_refusals(a["multiple_refusals"].iloc[:0]).columns) == [
        "pool", "n_figures", "n_devices", "reason", "models"]
    iv = tables.validity_intervals(a["target_predictions"])
    assert "data_size_gb" in iv and "data_size" not in iv
    assert set(iv["kind"]) == {"simple", "multiple"} and set(iv["target"]) >= {"S-SCM", "M-SCM"}
    assert set(iv["choice"]) == {"paper", "heldout", "nested"}
    nested = iv[iv["choice"] == "nested"]  # one prediction per series and target, by the validated procedure
    assert not nested.duplicated(["target", "engine", "workload", "op", "data_size_gb"]).any()


def test_verdicts_say_how_each_series_was_aggregated(paper_analysis):
    a = paper_analysis
    v = tables.validity_verdicts(a["verdicts"], a["agg"])
    assert list(v.columns[list(v.columns).index("unit") + 1:][:1]) == ["aggregation"]
    assert set(v["aggregation"]) == {"trimmed mean"}
    # one device's runs kept histograms, the others' did not: the table says both
    agg = a["agg"].copy()
    first = v.iloc[0]
    hit = (agg["engine"] == first["engine"]) & (agg["workload"] == first["workload"]) & (agg["op"] == first["op"])
    agg.loc[agg.index[hit][:1], "aggregation"] = "merged histogram"
    v2 = tables.validity_verdicts(a["verdicts"], agg)
    assert "merged histogram + trimmed mean" in set(v2["aggregation"])
    assert "aggregation" not in tables.validity_verdicts(a["verdicts"])


def test_noisy_cells_are_those_above_the_threshold_noisiest_first():
    from report_util import repeated_agg

    agg = repeated_agg()
    noisy = tables.noisy_cells(agg, 0.1)
    assert len(noisy) == (agg["device"] == "dram").sum() > 0
    assert set(noisy["device"]) == {"dram"} and noisy["cv"].tolist() == pytest.approx([0.5] * len(noisy))
    assert {"n", "cv", "min", "max", "value", "unit"} <= set(noisy.columns)
    assert len(tables.noisy_cells(agg, 0.001)) == len(agg)  # the 1 % spread is above 0.1 %
    assert tables.noisy_cells(agg, 0.6).empty
    once = agg.assign(n=1, cv=0.9)
    assert tables.noisy_cells(once, 0.1).empty  # a cell run once has no spread to judge
    ranked = tables.noisy_cells(agg.assign(cv=agg["cv"] * (1 + agg.index / 1000)), 0.001)
    assert ranked["cv"].is_monotonic_decreasing


def test_app_overview_has_every_application_result_with_its_spread():
    from report_util import repeated_agg

    agg = repeated_agg()
    table = tables.app_overview(agg)
    apps = agg[(agg["benchmark"] != "fio") & agg["metric"].isin(tables.APP_METRICS)]
    assert len(table) == len(apps) > 0 and set(table["benchmark"]) == {"ycsb"}  # no device figure
    assert {"engine", "workload", "data_size", "op", "device", "value", "n", "cv", "min", "max"} <= set(table.columns)
    dram = table[table["device"] == "dram"]
    assert (dram["n"] == 3).all() and dram["cv"].tolist() == pytest.approx([0.5] * len(dram))
    assert (dram["min"] < dram["value"]).all() and (dram["value"] < dram["max"]).all()
    keys = table[["engine", "workload", "op", "data_size", "device"]].astype(str).agg(" ".join, axis=1)
    assert keys.is_unique  # one row per cell and metric (the paper has lat_mean only)
    p99 = agg[agg["benchmark"] == "ycsb"].assign(metric="lat_p99")
    ranked = tables.app_overview(pd.concat([p99, agg], ignore_index=True))
    order = ranked.groupby(["engine", "workload", "op"], sort=False)["metric"].agg(lambda m: list(dict.fromkeys(m)))
    assert order.map(lambda m: m == ["lat_mean", "lat_p99"]).all()  # mean before the tail, whatever the input order


def test_inventory_lists_machine_software_and_devices_once_per_value():
    from benchcast import records

    rows = [{"device": d, "metric": "lat_mean", "unit": "us", "value": 1.0, "run": 0} for d in ("a", "b", "c")]
    recs = records.make(rows, study="s", source="fio:x", benchmark="fio", engine="psync", workload="randread",
                        block_size=4096, threads=1, data_size=0, op="read")
    recs["kernel"] = "6.1"
    recs["fio_version"] = ["fio-3.33", "fio-3.33", "fio-3.36"]
    recs["mount_options"] = ["rw", "rw,relatime", ""]
    recs["ndctl_version"] = "78"
    recs["cell"] = ["x", "y", "z"]  # not provenance the inventory shows
    inv = tables.inventory(recs)
    assert inv["item"].tolist() == ["kernel", "fio_version", "fio_version", "ndctl_version", "mount_options",
                                    "mount_options"]
    assert inv.iloc[0].to_dict() == {"scope": "host", "item": "kernel", "value": "6.1", "devices": "(all)",
                                     "sources": "fio:x"}
    fio = inv[inv["item"] == "fio_version"].set_index("value")["devices"].to_dict()
    assert fio == {"fio-3.33": "a b", "fio-3.36": "c"}
    assert inv.loc[inv["item"] == "ndctl_version", "scope"].tolist() == ["software"]
    assert set(inv.loc[inv["item"] == "mount_options", "devices"]) == {"a", "b"}  # c said nothing
    assert tables.inventory(recs[records.COLUMNS]).empty
    recs["other_swap"] = ["/swapfile", "", ""]  # an out-of-core run beside swap benchcast did not make
    other = tables.inventory(recs)
    assert other.loc[other["item"] == "other_swap", ["scope", "value", "devices"]].values.tolist() == [
        ["device", "/swapfile", "a"]]
    recs["read_ahead_kb"] = ["8192", "128", ""]  # the tiers' readahead windows; memory has none
    ra = tables.inventory(recs)
    rows = ra[ra["item"] == "read_ahead_kb"]
    assert rows[["scope", "value", "devices"]].values.tolist() == [["device", "8192", "a"], ["device", "128", "b"]]
    assert ra["item"].tolist().index("read_ahead_kb") == ra["item"].tolist().index("mount_options") + 2


def test_write_report_table_keeps_six_significant_digits(tmp_path):
    df = pd.DataFrame({"device": ["a", "b", "c"], "bw": [22355051.3, 1 / 3, np.nan], "n": [3, 3, 1]})
    tables.write_report_table(df, tmp_path / "t.csv")
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines == ["device,bw,n", "a,22355100.0,3", "b,0.333333,3", "c,,1"]


def test_validity_coverage_per_benchmark_with_median():
    # one absurd fold of a three-device ooc series moves the mean, not the median; ycsb apart
    chosen = pd.DataFrame({
        "kind": ["nested"] * 5 + ["simple"] * 2,
        "benchmark": ["ycsb", "ycsb", "ooc", "ooc", "ooc", "ycsb", "ycsb"],
        "pct_error": [10.0, -20.0, 5.0, -7.0, 9000.0, 4.0, 6.0],
        "covered": [True, False, True, True, None, True, True],
    })
    cov = tables.validity_coverage(chosen, 0.9)
    assert list(zip(cov["benchmark"], cov["model"])) == [("ooc", "nested"), ("ycsb", "nested"), ("ycsb", "simple")]
    ooc, ycsb = cov.iloc[0], cov.iloc[1]
    assert ooc["mape"] == pytest.approx(9012 / 3) and ooc["median_ape"] == 7.0
    assert ooc["with_interval"] == 2 and ooc["coverage"] == 1.0 and ooc["held_out_predictions"] == 3
    assert ycsb["mape"] == 15.0 and ycsb["median_ape"] == 15.0 and ycsb["coverage"] == 0.5
    assert (cov["nominal_level"] == 0.9).all()


def test_machine_speed_by_hand():
    # in-memory reference runs of two cells on three device blocks; b's block is 20 % slower in
    # one cell and 10 % in the other, c's 10 % faster; other rows (a swap run, fio) do not count
    def ref(device, workload, value, engine="memory", benchmark="ooc"):
        return dict(device=device, benchmark=benchmark, engine=engine, workload=workload, data_size=64,
                    threads=1, op="pass", metric="lat_mean", value=value)
    agg = pd.DataFrame([ref("a", "add", 100.0), ref("b", "add", 120.0), ref("c", "add", 90.0),
                        ref("a", "copy", 50.0), ref("b", "copy", 55.0), ref("c", "copy", 45.0),
                        ref("a", "add", 9999.0, engine="swap"), ref("d", "add", 1.0, benchmark="fio")])
    speed = tables.machine_speed(agg).set_index("device")
    assert list(speed.index) == ["a", "b", "c"] and (speed["cells"] == 2).all()
    assert speed.loc["a", "relative_time"] == 1.0
    assert speed.loc["b", "relative_time"] == pytest.approx(1.15)  # median of 1.2 and 1.1
    assert speed.loc["b", "max"] == pytest.approx(1.2) and speed.loc["c", "min"] == pytest.approx(0.9)
    assert list(tables.machine_speed(agg[agg["engine"] == "swap"]).columns) == tables.SPEED_COLUMNS


def test_validity_data_size_table_in_gb_size_holdout_first(paper_analysis):
    from analysis_util import PAPER

    from benchcast.screening import sizes

    _, summary, _ = sizes.validate(paper_analysis["agg"], paper_analysis["screen"], PAPER["features"], PAPER["series"])
    t = tables.validity_data_size(summary)
    assert t["kind"].tolist() == ["size"] * 6 + ["chain"] * 6
    assert set(t["held_out_gb"]) == {128.0} and t["memory_gb"].isna().all()  # the paper names no memory
    assert "held_out_size" not in t and (t["mape"] == t["mape"].round(1)).all()
