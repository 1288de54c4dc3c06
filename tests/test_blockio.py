"""Device I/O of application runs (benchcast.records.blockio): per-operation records and seed 001's
classes computed by hand; real counters from a delayed device and a loop device, and a real
RocksDB run on a delayed device whose synced updates show as fsyncs per operation."""

from __future__ import annotations

import os
import subprocess

import pandas as pd
import pytest

from benchcast.records import blockio
from benchcast import devices, records
from devices_util import clean, needs_blkio, needs_fuse, needs_loop  # noqa: F401
from ycsb_util import run_ycsb, ycsb_jar  # noqa: F401


def test_per_op_by_hand():
    before = {"reads": 10, "read_bytes": 40960, "writes": 100, "write_bytes": 409600, "syncs": 5}
    after = {"reads": 30, "read_bytes": 40960 + 20 * 16384, "writes": 400, "write_bytes": 409600 + 300 * 4096,
             "syncs": 105}
    rows = {r["metric"]: (r["value"], r["unit"]) for r in blockio.per_op(before, after, 100)}
    assert rows == {"reads_per_op": (0.2, "1/op"), "writes_per_op": (3.0, "1/op"), "syncs_per_op": (1.0, "1/op"),
                    "read_request_size": (16384.0, "B"), "write_request_size": (4096.0, "B")}
    assert blockio.per_op(None, after, 100) == [] and blockio.per_op(before, after, 0) == []
    nothing_read = blockio.per_op(before, {**after, "reads": 10, "read_bytes": 40960}, 100)
    assert {r["metric"]: r["value"] for r in nothing_read}["read_request_size"] == 0.0


@pytest.mark.parametrize("reads, writes, rsize, wsize, expect", [
    (0.1, 3.0, None, 4096, ("write-dominant", "random", "cold")),
    (0.1, 3.0, None, 8192, ("write-dominant", "sequential", "cold")),   # 8 KB is the boundary
    (2.0, 1.0, 65536, 4096, ("read-dominant", "sequential", "cold")),
    (0.2, 0.1, 4096, 4096, ("read-dominant", "random", "hot")),        # 0.3 requests per op
    (0.0, 0.0, None, None, ("read-dominant", "-", "hot")),
    (0.0, 0.0, 0.0, 0.0, ("read-dominant", "-", "hot")),
])
def test_classify_seed_001(reads, writes, rsize, wsize, expect):
    got = blockio.classify(reads, writes, rsize, wsize)
    assert (got["direction"], got["pattern"], got["temperature"]) == expect
    assert got["class"] == f"{expect[0]}, {expect[2]}, {expect[1]}"


def test_classes_from_aggregated_records():
    rows = [{"device": "d", "benchmark": "ycsb", "engine": "rocksdb", "workload": "write-only",
             "data_size": 8, "op": "device", "metric": m, "unit": blockio.UNITS[m], "value": v}
            for m, v in (("reads_per_op", 0.0), ("writes_per_op", 2.0), ("syncs_per_op", 1.0),
                         ("write_request_size", 4096.0))]
    rows.append({**rows[0], "op": "update", "metric": "lat_mean", "unit": "us", "value": 50.0})
    agg = pd.DataFrame(rows)
    out = blockio.classes(agg)
    assert len(out) == 1
    r = out.iloc[0]
    assert (r["writes_per_op"], r["syncs_per_op"], r["class"]) == (2.0, 1.0, "write-dominant, cold, random")
    assert pd.isna(r["read_request_size"])
    assert blockio.classes(agg[agg["op"] != "device"]).empty


def test_classes_across_the_memory_line_hot_to_cold():
    def run(size, reads, source):
        return [{"device": "d", "benchmark": "ycsb", "engine": "rocksdb", "workload": "read-only", "source": source,
                 "data_size": size, "op": "device", "metric": m, "unit": blockio.UNITS[m], "value": v}
                for m, v in (("reads_per_op", reads), ("writes_per_op", 0.0), ("read_request_size", 4096.0))]
    agg = pd.DataFrame(run(16_000_000, 0.02, "ycsb:y") + run(128_000_000, 0.9, "ycsb:y") + run(8_000_000, 0.0, "x"))
    out = blockio.across_memory(blockio.classes(agg), agg, {"ycsb:y": 32 * 2**20}).set_index("data_size")
    assert out.loc[16_000_000, "temperature"] == "hot" and out.loc[128_000_000, "temperature"] == "cold"
    assert out.loc[128_000_000, "size_over_memory"] == pytest.approx(128e6 / 2**25)
    assert out.loc[16_000_000, "memory_limit"] == 2**25 and pd.isna(out.loc[8_000_000, "memory_limit"])
    # an engine's own cache named for it (MariaDB's buffer pool) wins over the source's cgroup
    mem = {"ycsb:y": 2**27, "ycsb:y/mariadb": 48 * 2**20}
    assert blockio.memory_of(mem, "ycsb:y", "mariadb") == 48 * 2**20 and blockio.memory_of(mem, "ycsb:y", "rocksdb") == 2**27
    assert pd.isna(blockio.memory_of(mem, "ycsb:z", "rocksdb"))


@needs_fuse
def test_delayed_device_counts_each_request(clean):
    spec = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "16M"}, "sync_delay_us": 1}
    with devices.session("dl", spec, clean / "dl.json") as st:
        before = devices.io_counters(st)
        path = os.path.join(st["target"], "f")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
        import mmap
        buf = mmap.mmap(-1, 4096)
        for i in range(10):
            os.pwrite(fd, buf, i * 4096)
        for _ in range(3):
            os.fsync(fd)
        os.close(fd)
        after = devices.io_counters(st)
    d = {k: after[k] - before[k] for k in after}
    assert d["writes"] == 10 and d["write_bytes"] == 40960 and d["syncs"] == 3, d


@needs_loop
def test_loop_device_counts_come_from_the_kernel(clean):
    spec = {"kind": "loop", "size": "32M", "backing_dir": str(clean)}
    with devices.session("lp", spec, clean / "lp.json") as st:
        before = devices.io_counters(st)
        subprocess.run(["dd", "if=/dev/zero", f"of={st['target']}/f", "bs=64K", "count=64", "oflag=direct",
                        "status=none"], check=True)
        after = devices.io_counters(st)
    assert after["write_bytes"] - before["write_bytes"] >= 64 * 65536
    assert after["writes"] > before["writes"]
    assert devices.io_counters({"kind": "tmpfs", "device": "t"}) is None


@needs_loop
@needs_blkio
def test_a_throttled_tier_counts_what_its_cap_charged(clean):
    """A cgroup v1 cap charges the bios of processes in the tier's cgroup: direct reads all, a
    synced append's data write, but not the ext4 journal blocks jbd2 writes for it."""
    spec = {"kind": "throttled", "backing": {"kind": "loop", "size": "64M", "backing_dir": str(clean)},
            "write_iops": 100000}
    with devices.session("th", spec, clean / "th.json") as st:
        f = f"{st['target']}/f"
        before = devices.io_counters(st)
        devices.run_in_cgroup(st, ["dd", "if=/dev/zero", f"of={f}", "bs=4K", "count=50", "oflag=dsync",
                                   "status=none"], check=True)
        mid = devices.io_counters(st)
        devices.run_in_cgroup(st, ["dd", f"if={f}", "of=/dev/null", "bs=4K", "count=20", "iflag=direct",
                                   "status=none"], check=True)
        after = devices.io_counters(st)
    wrote = {k: mid[k] - before[k] for k in ("writes", "charged_writes")}
    assert wrote["charged_writes"] >= 50, wrote  # each synced 4K append's own data write
    assert wrote["writes"] > wrote["charged_writes"], wrote  # + the journal's, not charged
    read = {k: after[k] - mid[k] for k in ("reads", "charged_reads")}
    assert read["charged_reads"] == read["reads"] >= 20, read  # direct reads: all the process's own
    rows = {r["metric"]: r["value"] for r in blockio.per_op(before, mid, 50)}
    assert rows["charged_writes_per_op"] == pytest.approx(wrote["charged_writes"] / 50)
    assert rows["writes_per_op"] > rows["charged_writes_per_op"]


@needs_fuse
def test_synced_rocksdb_updates_show_as_syncs_per_operation(ycsb_jar, clean):
    spec = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "128M"}, "sync_delay_us": 1}
    with devices.session("dl", spec, clean / "dl.json") as st:
        df = run_ycsb("rocksdb", st["target"], ["write-only"], "1MB", 1, jar=ycsb_jar,
                           out_dir=clean / "out", study="t", device="dl", operationcount=500,
                           properties={"rocksdb.sync": "true"}, fast_load=True,
                           io_counter=lambda: devices.io_counters(st))
    records.check(df, where="ycsb")
    io = df[df["op"] == "device"].set_index("metric")["value"]
    assert set(df[df["op"] == "device"]["workload"]) == {"write-only"}
    assert 1.0 <= io["syncs_per_op"] <= 1.5, io  # one WAL fdatasync per update (+ flushes)
    assert io["writes_per_op"] >= 1.0 and io["write_request_size"] < 8192
    assert blockio.classes(df.assign(data_size=df["data_size"]))["class"].item().startswith("write-dominant")
