"""benchcast.sources.parse.ycsbout: YCSB's measurement output in as records, on captured outputs of real runs."""
import pytest

from benchcast import BenchcastError, records
from benchcast.sources.parse import ycsbout
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


# ------------------------------------------------------- every line checked, with the file and its line

READ_ONLY = (DATA / "rocksdb-02-read-only.txt").read_text()


def _line(n, new):
    """The read-only output with its line ``n`` (1-based) replaced by the lines ``new``."""
    lines = READ_ONLY.splitlines()
    return "\n".join(lines[:n - 1] + list(new) + lines[n:]) + "\n"


@pytest.mark.parametrize("text, message", [
    (_line(13, ["[READ], AverageLatency(us), abc"]),
     r"line 13: \[READ\], AverageLatency\(us\): value is not a number: 'abc'"),
    (_line(13, ["[READ], AverageLatency(us), NaN"]),
     r"line 13: \[READ\], AverageLatency\(us\): value is not finite: nan \(it must be above 0\)"),
    (_line(2, ["[OVERALL], Throughput(ops/sec), Infinity"]), r"line 2: \[OVERALL\], Throughput\(ops/sec\): value is not finite"),
    (_line(13, ["[READ], AverageLatency(us), 0.0"]), r"line 13: \[READ\], AverageLatency\(us\): value is zero: 0 "
                                                      r"\(it must be above 0\)"),
    (_line(16, ["[READ], 95thPercentileLatency(us), -4"]),
     r"line 16: \[READ\], 95thPercentileLatency\(us\): value is negative: -4 \(it must be a finite number, not negative\)"),
    (_line(2, ["[OVERALL], Throughput(ops/sec), -8368.2"]), r"line 2: \[OVERALL\], Throughput\(ops/sec\): value is negative"),
    (_line(12, ["[READ], Operations, 0"]), r"line 12: \[READ\], Operations: value is zero"),
    (_line(18, ["[READ], Return=OK, 2000.5"]), r"line 18: \[READ\], Return=OK: value is not a count: 2000.5"),
    (_line(12, ["[REED], Operations, 2000"]), r"line 12: unknown operation 'REED' \(YCSB reports DELETE, INSERT, "),
    (_line(12, ["[Intended-REED], Operations, 2000"]), r"line 12: unknown operation 'Intended-REED'"),
    (_line(13, ["[READ], AverageLatency(us), 50.4495"] * 2),
     r"line 14: duplicate line \(the same as line 13: \[READ\], AverageLatency\(us\)\)"),
    (_line(13, ["[READ], AverageLatency(us), 50.4495", "[READ], AverageLatency(us), 61.2"]),
     r"line 14: conflicting duplicate of line 13 \(\[READ\], AverageLatency\(us\): 50.4495 vs 61.2\)"),
    (_line(12, ["\t[READ], Operations, 2000 #total operations"]),
     r"line 12: not a YCSB measurement line \(\[NAME\], measurement, value\): '\[READ\], Operations, 2000 #total"),
    (_line(12, ["[READ], Operations"]), r"line 12: not a YCSB measurement line"),
    ("", r"no YCSB measurements found \(an empty file\)"),
    ("YCSB Client 0.17.0\nLoading workload...\nStarting test.\n2024-05-01 10:00:00:000 0 sec: 0 operations; "
     "est completion in 0 second\n", r"no YCSB measurements found \(no \[OPERATION\], measurement, value line\)"),
])
def test_every_line_checked_naming_file_and_line(tmp_path, text, message):
    path = tmp_path / "out.txt"
    path.write_text(text)
    with pytest.raises(BenchcastError, match=rf"^{path}: {message}"):
        ycsbout.parse(path)


def test_real_console_output_and_the_latencies_from_intended_starts_are_read(tmp_path):
    """YCSB's whole console output (banner, status lines on stderr) around the exporter's lines, and
    measurement.interval=both (the latencies from intended starts beside the measured ones) parse as
    the exporter's lines alone do."""
    plain = ycsbout.parse_text(READ_ONLY, "x")
    intended = "".join(f"[Intended-{ln[1:]}\n" for ln in READ_ONLY.splitlines() if ln.startswith("[READ]"))
    console = ("Command line: -db site.ycsb.BasicDB -P workloads/workloadc -t -s\nYCSB Client 0.17.0\n\n"
               "Loading workload...\nStarting test.\nDBWrapper: report latency for each error is false and specific "
               "error codes to track for latency are: []\n2024-05-01 10:00:00:000 0 sec: 0 operations; est completion "
               "in 0 second\n2024-05-01 10:00:00:239 0 sec: 2000 operations; 8368.2 current ops/sec; [READ: "
               "Count=2000, Max=16151, Min=3, Avg=50.45, 90=30, 99=138, 99.9=1021, 99.99=16151] [CLEANUP: Count=2]\n"
               + READ_ONLY + intended)
    assert ycsbout.parse_text(console, "x") == plain
    only = "\n".join(ln for ln in console.splitlines() if not ln.startswith("[READ]")) + "\n"
    with pytest.raises(BenchcastError, match=r"x: only latencies from intended starts"):
        ycsbout.parse_text(only, "x")


def test_json_exporters_entries_checked_with_the_line_they_start_on():
    """JSONArrayMeasurementsExporter (one array, pretty-printed) and JSONMeasurementsExporter (objects
    one after another): an entry's error names the line the entry starts on."""
    import json
    import re

    entries = [dict(zip(("metric", "measurement", "value"), (m.group(1), m.group(2), float(m.group(3)))))
               for m in (re.match(r"\[(.+)\], (.+), (.+)", ln) for ln in READ_ONLY.splitlines())]
    entries[12]["value"] = -3.0  # [READ], AverageLatency(us)
    array = json.dumps(entries, indent=2)  # "[", then 5 lines an entry
    with pytest.raises(BenchcastError, match=r"^a.json: line 62: \[READ\], AverageLatency\(us\): value is negative"):
        ycsbout.parse_text(array, "a.json")
    objects = "\n".join(json.dumps(e, indent=2) for e in entries)  # 5 lines an entry
    with pytest.raises(BenchcastError, match=r"^o.json: line 61: \[READ\], AverageLatency\(us\): value is negative"):
        ycsbout.parse_text(objects, "o.json")
    entries[12]["value"] = 50.4495
    assert ycsbout.parse_text(json.dumps(entries, indent=2), "a.json") == ycsbout.parse_text(READ_ONLY, "x")


def test_two_series_of_one_operation_read_as_the_hdrhistogram_one():
    """measurementtype=hdrhistogram+histogram (+raw): YCSB prints each operation twice, as HdrREAD
    and BucketREAD (RawREAD); the HdrHistogram series is read (the default type's numbers)."""
    hdr = READ_ONLY.replace("[READ]", "[HdrREAD]").replace("[CLEANUP]", "[HdrCLEANUP]")
    bucket = ("[BucketREAD], Operations, 2000\n[BucketREAD], AverageLatency(us), 50.51\n[BucketREAD], 0, 12\n"
              "[BucketREAD], >1000, 3\n[BucketREAD], Return=OK, 2000\n[RawREAD], Total Operations, 2000\n"
              "[RawREAD], Below is a summary of latency in microseconds:, -1\n")
    assert ycsbout.parse_text(hdr + bucket, "x") == ycsbout.parse_text(READ_ONLY, "x")
    with pytest.raises(BenchcastError, match=r"x: line 27: unknown operation 'BucketREED'"):
        ycsbout.parse_text(hdr + bucket.replace("[BucketREAD], 0,", "[BucketREED], 0,"), "x")


THIRDPARTY = DATA.parent / "thirdparty"


def test_real_ycsb_0_12_output_reads_every_figure():
    df = ycsbout.parse(THIRDPARTY / "ycsb-0.12-mongodb-async-run.txt", study="s", device="d", engine="mongodb",
                       workload="a", threads=8, data_size=1)
    got = {(r.op, r.metric): r.value for r in df.itertuples()}
    assert got == {("overall", "runtime"): 426187.0, ("overall", "throughput"): 23463.878532193616,
                   ("read", "ops"): 4998463.0, ("read", "lat_mean"): 299.4424374052584,
                   ("read", "lat_p95"): 455.0, ("read", "lat_p99"): 647.0,
                   ("update", "ops"): 5001537.0, ("update", "lat_mean"): 377.1531887097906,
                   ("update", "lat_p95"): 541.0, ("update", "lat_p99"): 794.0}


def test_real_ycsb_0_1_output_integer_return_codes_and_ms_percentiles(tmp_path):
    """YCSB 0.1.x: Return=0 is success; percentiles in whole ms (converted to us; 0 ms is no latency)."""
    src = THIRDPARTY / "ycsb-0.1.4-mongodb-workloada.txt"
    with pytest.raises(BenchcastError, match=r"ycsb-0.1.4-mongodb-workloada.txt: line 15: \[UPDATE\], "
                                             r"95thPercentileLatency\(ms\): 0 ms is below the resolution"):
        ycsbout.parse(src)
    lines = src.read_text().splitlines(keepends=True)
    kept = tmp_path / "a.txt"
    kept.write_text("".join(ln for ln in lines if "PercentileLatency(ms), 0" not in ln)
                    + "[READ], 99thPercentileLatency(ms), 3\n")
    df = ycsbout.parse(kept)
    got = {(r.op, r.metric): r.value for r in df.itertuples()}
    assert got == {("overall", "runtime"): 265.0, ("overall", "throughput"): 3773.5849056603774,
                   ("update", "ops"): 491.0, ("update", "lat_mean"): 216.9205702647658,
                   ("read", "ops"): 509.0, ("read", "lat_mean"): 173.4106090373281, ("read", "lat_p99"): 3000.0}
    bad = tmp_path / "b.txt"
    bad.write_text(kept.read_text().replace("[READ], Return=0, 509", "[READ], Return=0, 497\n[READ], Return=-1, 12"))
    with pytest.raises(BenchcastError, match=r"failed operations: read Return=-1 x12"):
        ycsbout.parse(bad)
    both = tmp_path / "c.txt"
    both.write_text(kept.read_text() + "[READ], 99thPercentileLatency(us), 2950\n")
    with pytest.raises(BenchcastError, match=r"c.txt: line \d+: \[READ\], 99thPercentileLatency\(us\): lat_p99 of READ again"):
        ycsbout.parse(both)


def test_real_console_output_with_status_and_log_lines():
    df = ycsbout.parse(THIRDPARTY / "pkb-ycsb-bigtable-status-lines.dat", study="s", device="d", engine="bigtable",
                       workload="c", threads=8, data_size=1)
    got = {(r.op, r.metric): r.value for r in df.itertuples()}
    assert got == {("overall", "runtime"): 10018.0, ("overall", "throughput"): 1666.8995807546416,
                   ("read", "ops"): 16699.0, ("read", "lat_mean"): 3981.7847775315886, ("read", "lat_p95"): 6171.0,
                   ("read", "lat_p99"): 10215.0}


def test_an_output_windows_powershell_wrote_reads_as_its_utf8_copy(tmp_path):
    src = THIRDPARTY / "ycsb-0.12-mongodb-async-run.txt"
    (tmp_path / "u16.txt").write_bytes(src.read_text().replace("\n", "\r\n").encode("utf-16"))
    assert ycsbout.parse(tmp_path / "u16.txt")["value"].tolist() == ycsbout.parse(src)["value"].tolist()
