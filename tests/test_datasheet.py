"""Tests of benchcast.core.datasheet: each rule that turns a datasheet's figures into fio's, by hand."""
import pytest

from benchcast.core.datasheet import GIVEN, LITTLE, RATE, TRANSFER, derive
from benchcast.core.datasheet import Figure as _Figure

K = 1024


def Figure(workload, block_size, op, metric, iodepth=1, numjobs=1):  # noqa: N802 (a figure at QD1 unless said)
    return _Figure(workload, block_size, op, metric, iodepth, numjobs)

R4 = Figure("randread", 4 * K, "read", "lat_mean")


def _one(given, wanted):
    got = derive(given, [wanted])
    return got.get(wanted)


def test_rate_bandwidth_is_iops_times_the_block_size_and_back():
    iops = Figure("randread", 4 * K, "read", "iops", iodepth=32)
    d = _one({iops: 550000.0}, iops.at(metric="bw"))
    assert d.rule == RATE and d.value == pytest.approx(550000 * 4096)
    assert d.inputs == (iops.name,) and "550 K" not in d.text and "x 4K" in d.text
    back = _one({iops.at(metric="bw"): 2.0e9}, iops)
    assert back.rule == RATE and back.value == pytest.approx(2.0e9 / 4096)


def test_little_latency_is_what_is_in_flight_over_iops():
    # 32 I/Os in flight at 550,000 IOPS: 58.2 us each; at queue depth 1, 100,000 IOPS: 10 us
    qd32 = Figure("randread", 4 * K, "read", "iops", iodepth=32)
    d = _one({qd32: 550000.0}, qd32.at(metric="lat_mean"))
    assert d.rule == LITTLE and d.value == pytest.approx(32 / 550000 * 1e6)
    jobs = Figure("randwrite", 4 * K, "write", "iops", iodepth=4, numjobs=2)
    assert _one({jobs: 80000.0}, jobs.at(metric="lat_mean")).value == pytest.approx(8 / 80000 * 1e6)
    # from a bandwidth: 413 MB/s of 4 KiB reads at queue depth 1 is 9.92 us a read
    d = _one({R4.at(metric="bw"): 413e6}, R4)
    assert d.rule == LITTLE and d.value == pytest.approx(4096 / 413e6 * 1e6)
    # and the bandwidth a latency fixes
    assert _one({R4: 8.9}, R4.at(metric="bw")).value == pytest.approx(4096 / 8.9e-6)


def test_transfer_a_larger_block_is_the_smaller_one_plus_its_extra_bytes_at_the_sequential_rate():
    seq = Figure("read", 128 * K, "read", "bw")
    r16 = R4.at(block_size=16 * K)
    d = _one({R4: 8.9, seq: 2.4e9}, r16)
    assert d.rule == TRANSFER and d.value == pytest.approx(8.9 + 12 * K / 2.4e9 * 1e6)  # 14.02 us
    assert set(d.inputs) == {R4.name, seq.name} and "12K at 2400 MB/s" in d.text
    # the writes take the sequential write rate, the largest block's where several are given
    w4 = Figure("randwrite", 4 * K, "write", "lat_mean")
    wseq = {Figure("write", 128 * K, "write", "bw"): 2.0e9, Figure("write", 4 * K, "write", "bw"): 0.5e9}
    assert _one({w4: 10.0, **wseq}, w4.at(block_size=64 * K)).value == pytest.approx(10 + 60 * K / 2.0e9 * 1e6)
    # from the nearest smaller block the card gives
    r64 = R4.at(block_size=64 * K)
    assert _one({R4: 8.9, r16: 20.0, seq: 2.4e9}, r64).value == pytest.approx(20 + 48 * K / 2.4e9 * 1e6)


def test_what_no_rule_fixes_stays_missing():
    seq = Figure("read", 128 * K, "read", "bw")
    median = R4.at(metric="clat_p50")
    commit = Figure("write", 4 * K, "sync", "lat_mean")
    got = derive({R4: 8.9, seq: 2.4e9}, [median, commit, R4.at(block_size=2 * K)])
    assert set(got) == {R4, seq}  # no median, no commit, no smaller block; the given ones kept
    assert all(d.rule == GIVEN for d in got.values())
    # no rate: no larger block; a write rate prices no read
    assert derive({R4: 8.9, Figure("write", 128 * K, "write", "bw"): 2e9}, [R4.at(block_size=16 * K)]).keys() \
        == {R4, Figure("write", 128 * K, "write", "bw")}


def test_a_given_figure_is_never_replaced():
    bw = R4.at(metric="bw")
    got = derive({R4: 8.9, bw: 413e6}, [R4, bw])
    assert got[R4].value == 8.9 and got[bw].value == 413e6 and {d.rule for d in got.values()} == {GIVEN}


def test_names_as_the_features_make_them():
    assert Figure("randread", 16 * K, "read", "lat_mean").name == "randread_16K_lat_mean"
    assert Figure("randread", 4 * K, "read", "iops", iodepth=32).name == "randread_4K_qd32_iops"
    assert Figure("write", 4 * K, "sync", "lat_mean").text() == "write 4K sync lat_mean"
    assert Figure("write", 4 * K, "sync", "lat_mean").words() == "4K commit (write + fdatasync) mean latency"
    assert Figure("randread", 4 * K, "read", "iops", iodepth=32).words() == "4K random-read IOPS at queue depth 32"
    assert Figure("randread", 16 * K, "read", "clat_p99").words() == "randread 16K clat_p99"  # no words for it
