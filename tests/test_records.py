"""Tests of benchcast.records: the one record table, its checks and its files."""
import pandas as pd
import pytest

from benchcast import BenchcastError, records


def row(**kw):
    base = dict(study="s", source="fio", device="d", benchmark="fio", workload="randread", block_size=4096,
                op="read", metric="lat_mean", unit="us", value=12.5)
    return {**base, **kw}


def test_make_fills_defaults_and_orders_columns():
    df = records.make([row(), row(device="e", value=7)], kernel="6.10")
    assert list(df.columns) == records.COLUMNS + ["kernel"]
    assert df["engine"].tolist() == ["", ""] and (df["run"] == -1).all() and (df["threads"] == 0).all()
    assert df["block_size"].dtype == "int64" and df["value"].dtype == "float64"


@pytest.mark.parametrize("bad, pattern", [
    ({"value": "n/a"}, r"^t: row 2: column value is not a number: 'n/a'"),
    ({"value": float("inf")}, r"^t: row 2: value is not finite"),
    ({"block_size": "4K"}, r"^t: row 2: column block_size is not a number"),
])
def test_check_names_table_row_and_column(bad, pattern):
    df = pd.DataFrame([row(engine="", threads=1, data_size=0, run=0), row(engine="", threads=1, data_size=0, run=1, **bad)])
    with pytest.raises(BenchcastError, match=pattern):
        records.check(df, where="t")


def test_tables_written_before_the_setting_columns_read_with_them(tmp_path):
    """Record files of existing result trees lack iodepth, numjobs and cell: fio rows read as iodepth =
    threads, numjobs 1 (their feature names stay), others 0; a grid's cell id kept, else ""."""
    old = pd.DataFrame([row(engine="libaio", threads=8, data_size=0, run=0, cell="randread-4K-3f9a1c"),
                        row(benchmark="ycsb", engine="rocksdb", workload="a", block_size=0, threads=4, data_size=1,
                            run=0, cell="")])
    path = tmp_path / "old.csv"
    old.to_csv(path, index=False)
    df = records.read(path)
    assert df["iodepth"].tolist() == [8, 0] and df["numjobs"].tolist() == [1, 0]
    assert df["cell"].tolist() == ["randread-4K-3f9a1c", ""]
    assert records.read_many([path]).columns.tolist() == records.COLUMNS


def test_missing_column_named():
    with pytest.raises(BenchcastError, match=r"^t: missing record column\(s\) engine, threads, iodepth, numjobs, data_size, cell, run"):
        records.check(pd.DataFrame([row()]), where="t")


def test_write_read_round_trip_keeps_strings_and_provenance(tmp_path):
    df = records.make([row(engine="0", workload="a"), row(device="e", unit="MB/s", metric="bw")], kernel="6.10")
    path = tmp_path / "r" / "recs.csv"
    records.write(df, path)
    back = records.read(path)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert back["engine"].tolist() == ["0", ""]  # a numeric-looking engine name stays a string
    assert back["kernel"].tolist() == ["6.10", "6.10"]  # provenance stays text: not the number 6.1
    assert len(records.read_many([path, path])) == 4


def test_read_names_the_file(tmp_path):
    with pytest.raises(BenchcastError, match="no such record file"):
        records.read(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("study,source\ns,x\n")
    with pytest.raises(BenchcastError, match=rf"^{bad}: missing record column"):
        records.read(bad)
