"""Latency histograms: YCSB's own histogram logs (real runs of our bindings), merges by hand."""
import math

import pytest

from benchcast import BenchcastError
from benchcast.records import hdr
from benchcast.sources.run import ycsb
from ycsb_util import run_ycsb, tmpfs, ycsb_jar  # noqa: F401 (fixtures)


def _hist(values):
    h = hdr.empty()
    for v in values:
        h.record_value(v)
    return h


def test_percentiles_of_a_merge_by_hand():
    # run 1: 100 operations at 1..100 us; run 2: 100 operations at 1000 us
    one, two = _hist(range(1, 101)), _hist([1000] * 100)
    merged = hdr.merge([hdr.encode(one), hdr.encode(two)], where="t")
    assert merged.get_total_count() == 200
    # of 200 values, the 100th is 100 us, the 101st 1000 us
    assert hdr.percentiles(merged, [50, 50.5, 99]) == [100.0, 1000.0, 1000.0]
    # the mean of the per-run p50s would be (50 + 1000) / 2 = 525, a value nobody measured
    assert hdr.percentiles(one, [50])[0] == 50.0 and hdr.percentiles(two, [50])[0] == 1000.0
    assert math.isnan(hdr.percentiles(hdr.empty(), [99])[0])


def test_java_rule_ceil_not_round():
    # 1509 values: p99.9 wants ceil(1507.49) = the 1508th value (Python's hdrh rounds to the 1507th)
    h = _hist(list(range(1, 1508)) + [1800, 1900])
    assert hdr.percentiles(h, [99.9]) == [1800.0]


def test_malformed_logs_are_named(tmp_path):
    bad = tmp_path / "x.READ.hdr"
    bad.write_text("not a log\n")
    with pytest.raises(BenchcastError, match=r"x.READ.hdr: not a YCSB histogram log"):
        hdr.read_log(bad)
    bad.write_text('#[Logging for: READ]\n"StartTimestamp","Interval_Length","Interval_Max",'
                   '"Interval_Compressed_Histogram"\n0.000,0.019,0.000,HISTggAAAGR42pNpmdz\n')
    with pytest.raises(BenchcastError, match=r"x.READ.hdr: malformed histogram interval"):
        hdr.read_log(bad)
    with pytest.raises(BenchcastError, match=r"t: malformed encoded histogram"):
        hdr.merge(["HISTabc"], where="t")


def test_ycsb_logs_give_the_percentiles_ycsb_prints(ycsb_jar, tmpfs, tmp_path):
    """A real run: every operation's log is read back into the exact p50/p95/p99/p99.9 and count
    that YCSB's text exporter printed, and the records carry the histogram for aggregation."""
    out = tmp_path / "out"
    df = run_ycsb("rocksdb", tmpfs, ["write-heavy"], "1MB", 1, jar=ycsb_jar, out_dir=out, study="t",
                       device="tmpfs", operationcount=3000, repeats=[0])
    run = df[df["workload"] == "write-heavy"]
    logs = ycsb.histogram_logs(out / "r0" / "01-write-heavy.txt")
    assert [p.name for p in logs] == ["01-write-heavy.CLEANUP.hdr", "01-write-heavy.READ.hdr",
                                      "01-write-heavy.UPDATE.hdr"]
    for op in ("read", "update"):
        printed = run[run["op"] == op].set_index("metric")
        name, hist = hdr.read_log(out / "r0" / f"01-write-heavy.{op.upper()}.hdr")
        assert name == op.upper() and hist.get_total_count() == printed.loc["ops", "value"]
        assert hdr.percentiles(hist, [50, 95, 99, 99.9]) == [
            printed.loc[m, "value"] for m in ("lat_p50", "lat_p95", "lat_p99", "lat_p99.9")]
        kept = hdr.decode(printed.loc["lat_hdr", "hdr"], where="t")
        assert kept.get_total_count() == printed.loc["lat_hdr", "value"] == printed.loc["ops", "value"]
