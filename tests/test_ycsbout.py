"""benchcast.ycsbout: YCSB's measurement output in as records, on captured outputs of real runs."""
import pytest

from benchcast import BenchcastError, records, ycsbout
from ycsb_util import DATA

# --------------------------------------------------------------------------------------------- parser

OK_FILES = {
    "rocksdb-load.txt": {"insert": 1000},
    "rocksdb-01-write-heavy.txt": {"read": None, "update": None},
    "rocksdb-02-read-only.txt": {"read": 2000},
    "rocksdb-03-e.txt": {"scan": None, "insert": None},
    "rocksdb-04-f.txt": {"read": 2000, "read-modify-write": None, "update": None},
    "mariadb-load.txt": {"insert": 1000},
    "mariadb-01-write-only.txt": {"update": 2000},
    "mariadb-02-read-heavy.txt": {"read": None, "update": None},
    "mariadb-03-e.txt": {"scan": None, "insert": None},
}


@pytest.mark.parametrize("name", list(OK_FILES))
def test_parse_captured_outputs(name):
    df = ycsbout.parse(DATA / name, study="s", device="tmpfs", engine=name.split("-")[0], workload="w", threads=2,
                    data_size=1_000_000, run=3)
    records.check(df, where=name)
    ops = OK_FILES[name]
    assert set(df["op"]) == set(ops) | {"overall"}
    assert set(df["benchmark"]) == {"ycsb"} and set(df["source"]) == {"ycsb"} and set(df["run"]) == {3}
    for op, count in ops.items():
        rows = df[df["op"] == op].set_index("metric")
        assert set(rows.index) == {"lat_mean", "lat_p95", "lat_p99", "ops"}
        assert set(rows["unit"]) == {"us", "ops"}
        assert 0 < rows.loc["lat_mean", "value"] and 0 < rows.loc["lat_p95", "value"] <= rows.loc["lat_p99", "value"]
        if count is not None:
            assert rows.loc["ops", "value"] == count
    overall = df[df["op"] == "overall"].set_index("metric")
    assert overall.loc["throughput", "unit"] == "ops/s" and overall.loc["throughput", "value"] > 0
    assert overall.loc["runtime", "unit"] == "ms"
    # the mixes add up to the 2000 operations of the run (f counts a read-modify-write's read as a read too)
    if "load" not in name and "-f" not in name:
        assert df[(df["op"] != "overall") & (df["metric"] == "ops")]["value"].sum() == 2000


def test_parse_refuses_not_found_returns():
    with pytest.raises(BenchcastError) as err:
        ycsbout.parse(DATA / "rocksdb-notfound.txt")
    msg = str(err.value)
    assert "rocksdb-notfound.txt" in msg
    assert "read Return=NOT_FOUND x509" in msg and "update Return=NOT_FOUND x481" in msg
    assert "READ-FAILED x509" in msg and "UPDATE-FAILED x481" in msg


def test_parse_refuses_errors_after_dropped_table():
    with pytest.raises(BenchcastError, match=r"mariadb-dropped-table\.txt: .*read Return=ERROR x29713.*"
                                             r"update Return=ERROR x1517"):
        ycsbout.parse(DATA / "mariadb-dropped-table.txt")


def test_parse_refuses_run_without_operations():
    with pytest.raises(BenchcastError, match="opcount0-no-threads.txt: YCSB measured no operations"):
        ycsbout.parse(DATA / "mariadb-opcount0-no-threads.txt")


def test_parse_text_failed_op_without_return_line_and_broken_files(tmp_path):
    text = (DATA / "rocksdb-02-read-only.txt").read_text()
    # an error-specific latency series (YCSB's latencytrackederrors) is a failure as well
    bad = text + "[READ-NOT_FOUND], Operations, 3\n"
    with pytest.raises(BenchcastError, match="READ-NOT_FOUND x3"):
        ycsbout.check_ok(ycsbout.parse_text(bad, "x"), "x")
    assert ycsbout.parse_text(text.replace("Return=OK", "Return=BATCHED_OK"), "x")["returns"]["read"] == {
        "BATCHED_OK": 2000}
    truncated = tmp_path / "t.txt"
    truncated.write_text("\n".join(line for line in text.splitlines() if "OVERALL" not in line))
    with pytest.raises(BenchcastError, match="t.txt: no \\[OVERALL\\] throughput"):
        ycsbout.parse(truncated)
    empty = tmp_path / "e.txt"
    empty.write_text("")
    with pytest.raises(BenchcastError, match="e.txt: no YCSB measurements"):
        ycsbout.parse(empty)
    with pytest.raises(BenchcastError, match="no such YCSB output file"):
        ycsbout.parse(tmp_path / "missing.txt")
