"""Tests of benchcast.sources.run.ycsb_job: the YCSB job's command line fails in one line, touching nothing, when its
device spec is bad (the runs themselves are tested in test_ycsb and test_mariadb), and its memory limit
on a real run."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis_util import ROOT
from devices_util import clean, needs_fuse  # noqa: F401
from ycsb_util import ycsb_jar  # noqa: F401


def test_bad_device_spec_is_one_line_and_exit_1(tmp_path):
    job = {"device": "x", "spec": {"kind": "floppy"}, "state": str(tmp_path / "x.json"), "study": "s",
           "source_name": "ycsb", "source": {"type": "ycsb", "engines": ["rocksdb"], "workloads": ["write-only"],
                                            "data_sizes": ["1MB"], "operationcount": 10}, "engine": "rocksdb",
           "size": 1000000, "repeat": 0, "jar": "none.jar", "raw": str(tmp_path / "raw"),
           "records": str(tmp_path / "out.csv")}
    proc = subprocess.run([sys.executable, "-m", "benchcast.ycsb_job", "--job", json.dumps(job)],
                          cwd=ROOT / "scripts", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert "\n" not in line and line.startswith("benchcast: ")
    assert "device x: kind: 'floppy' is not one of tmpfs, dir, zram" in line
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "x.json").exists()


def _memory_cgroups(device: str) -> list:
    from devices_util import benchcast_cgroups

    return [c for c in benchcast_cgroups() if f"benchcast-mem-{device}-" in c]


def _limited_job(tmp_path, jar, size_mb: int, device: str) -> dict:
    """A RocksDB read-only job under a 64 MiB memory cgroup on a delayed device (which counts every
    request that reaches it); small engine memory, so the page cache is what holds the data."""
    import copy

    from analysis_util import CONFIG

    from benchcast import config

    src = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["sources"]["ycsb"]  # defaults filled in
    src.update(engines=["rocksdb"], workloads=["read-only"], maxexecutiontime=1, memory_limit="64M",
               properties={"rocksdb.blockcachesize": 1 << 20, "rocksdb.writebuffersize": 4 << 20})
    spec = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "256M"}, "read_delay_us": 1}
    return {"device": device, "spec": spec, "state": str(tmp_path / f"{device}.json"), "study": "s",
            "source_name": "ycsb", "source": src, "engine": "rocksdb",
            "size": size_mb * 10**6, "repeat": 0, "jar": str(jar), "raw": str(tmp_path / f"raw{size_mb}"),
            "records": str(tmp_path / f"out{size_mb}.csv")}


def _run_job(job) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchcast.ycsb_job", "--job", json.dumps(job)],
                          cwd=ROOT / "scripts", capture_output=True, text=True, timeout=600)


@needs_fuse
def test_memory_limit_on_a_real_ycsb_run_reaches_the_device_and_is_removed(ycsb_jar, clean):
    """A data set as large as the memory cgroup (of which the client JVM holds about half; the page
    cache is charged to it) is read from the device; the cgroup is gone after the job, and after a
    job that fails inside it."""
    from benchcast import devices, records

    job = _limited_job(clean, ycsb_jar, 64, "memtest")
    try:
        proc = _run_job(job)
        assert proc.returncode == 0, proc.stderr
        assert _memory_cgroups("memtest") == []
        recs = records.read(job["records"])
        io = recs[recs["op"] == "device"].set_index("metric")["value"]
        assert io["reads_per_op"] > 0.5, io  # measured 15-20 on the development VM
        assert (recs["memory_limit"].astype(int) == 64 << 20).all()
        assert all(Path(p).is_file() for p in recs["raw"]), set(recs["raw"])  # the raw files where they are
        bad = {**job, "jar": str(clean / "none.jar"), "records": str(clean / "bad.csv"), "raw": str(clean / "bad")}
        proc = _run_job(bad)
        assert proc.returncode == 1 and "none.jar" in proc.stderr
        assert _memory_cgroups("memtest") == [] and not (clean / "bad.csv").exists()
    finally:
        devices.teardown(job["state"])


def _at_2_and_16_mb(clean, jar, device: str, engine: str, **source) -> list:
    """The records of one job at 2 MB and one at 16 MB on a delayed device (which counts every
    request), with no memory cgroup: the engine's own cache is what holds the data."""
    from benchcast import devices, records

    jobs = []
    try:
        for mb in (2, 16):
            job = _limited_job(clean, jar, mb, device)
            del job["source"]["memory_limit"]
            job["source"].update(engines=[engine], **source)
            job["engine"] = engine
            jobs.append(job)
            proc = _run_job(job)
            assert proc.returncode == 0, proc.stderr
    finally:
        if jobs and Path(jobs[0]["state"]).exists():
            devices.teardown(jobs[0]["state"])
    return [records.read(job["records"]) for job in jobs]


@needs_fuse
def test_direct_io_makes_the_block_cache_the_memory_line(ycsb_jar, clean):
    """RocksDB with rocksdb.directio: a data set within its 4 MiB block cache is read from memory, one
    four times larger from the device (a delayed device counts every request), with no memory
    cgroup: the page cache holds none of the data. The records say how it was run."""
    reads = []
    for recs in _at_2_and_16_mb(clean, ycsb_jar, "dio", "rocksdb", properties={
            "rocksdb.directio": "true", "rocksdb.blockcachesize": 4 << 20, "rocksdb.writebuffersize": 1 << 20}):
        assert set(recs["prop_rocksdb.directio"].astype(str).str.lower()) == {"true"}
        assert "memory_limit" not in recs
        reads.append(recs[recs["op"] == "device"].set_index("metric")["value"]["reads_per_op"])
    assert reads[0] < 0.1 < 0.5 < reads[1], reads  # measured 0.004 and 0.68 on the development VM


@needs_fuse
def test_mariadb_buffer_pool_is_the_memory_line(ycsb_jar, clean):
    """MariaDB with the default study's 12M buffer pool (InnoDB's O_DIRECT, so no page cache) after
    writes: 2 MB of data is read from the pool, 16 MB mostly from the device (a delayed device counts
    every request); the page cleaner keeps lru_scan_depth pages free, below the pool's page count,
    and the records say so. MariaDB's own 1536 evicted every clean page of the 768 (0.06-0.14 reads
    per operation at 2 MB)."""
    import copy

    from analysis_util import CONFIG

    from benchcast import config

    mariadb_settings = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["sources"]["ycsb"]["mariadb"]
    reads = []
    for recs in _at_2_and_16_mb(clean, ycsb_jar, "pool", "mariadb", workloads=["write-only", "read-only"],
                                mariadb=mariadb_settings):
        assert set(recs["mariadb_innodb_lru_scan_depth"].astype(int)) == {100}
        assert set(recs["mariadb_innodb_buffer_pool_size"].astype(int)) == {12 << 20}
        io = recs[(recs["op"] == "device") & (recs["workload"] == "read-only")]
        reads.append(io.set_index("metric")["value"]["reads_per_op"])
    assert reads[0] < 0.1 < 0.5 < reads[1], reads  # measured 0 and 0.71 on the development VM


def test_direct_io_where_the_device_refuses_it(tmp_path):
    """Where the O_DIRECT probe failed: a tmpfs runs the same reads without it (its page cache is the
    medium), recorded; any other device is refused in one line naming the key."""
    import copy

    from analysis_util import CONFIG

    from benchcast import BenchcastError, config
    from benchcast.config import settings
    from benchcast.sources.run import ycsb_job

    src = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["sources"]["ycsb"]
    s = settings.ycsb(src, "ycsb")
    assert s.properties["rocksdb.directio"] == "true"
    job = {"engine": "rocksdb", "spec": {"kind": "tmpfs"}, "source_name": "ycsb"}
    assert ycsb_job._direct_io(s, job, {"direct_ok": True}) is s
    assert ycsb_job._direct_io(s, job, {"direct_ok": False}).properties["rocksdb.directio"] == "false"
    assert ycsb_job._direct_io(s, {**job, "engine": "mariadb"}, {"direct_ok": False}) is s
    state = {"direct_ok": False, "target": str(tmp_path)}
    with pytest.raises(BenchcastError, match=r"^source ycsb: properties: rocksdb.directio: O_DIRECT does not work "):
        ycsb_job._direct_io(s, {**job, "spec": {"kind": "dir"}}, state)
