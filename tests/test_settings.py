"""benchcast.config.settings: a source's settings as frozen objects, the schema's defaults filled in, sizes in
bytes; a wrong key is one line naming it."""

import copy
import dataclasses

import pytest

from analysis_util import CONFIG
from benchcast import BenchcastError, config
from benchcast.config import settings

LOCAL = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["sources"]


def test_fio_settings_of_the_default_config():
    fs = settings.fio(LOCAL["fio"], "fio")
    assert fs.rw == ("randread", "randwrite") and fs.block_sizes == (4096, 16384, 65536)
    assert fs.options["ioengine"] == "psync" and fs.options["rwmixread"] == 50 and fs.options["extra"] == {}
    assert fs.per_kind == {"tmpfs": {"direct": False}, "fsdax": {"ioengine": "libpmem"}}
    with pytest.raises(dataclasses.FrozenInstanceError):
        fs.repeats = 9


def test_a_source_given_alone_gets_the_schema_defaults():
    fs = settings.fio({"type": "fio", "rw": ["read"], "block_sizes": ["64K"]}, "g")
    assert fs.repeats == 5 and fs.devices is None and fs.block_sizes == (65536,)
    assert {k: fs.options[k] for k in ("ioengine", "iodepth", "numjobs", "direct", "size", "runtime", "ramp_time")} \
        == {"ioengine": "libaio", "iodepth": 1, "numjobs": 1, "direct": True, "size": "1G", "runtime": 30,
            "ramp_time": 5}
    with pytest.raises(BenchcastError, match=r"^source g: iodepth: 0 is less than the minimum of 1$"):
        settings.fio({"type": "fio", "rw": ["read"], "block_sizes": ["64K"], "iodepth": 0}, "g")


def test_ycsb_settings_read_the_source_once():
    ys = settings.ycsb(LOCAL["ycsb"], "ycsb")
    assert ys.fieldcount == 10 and ys.fieldlength == 100 and ys.threads == 1 and ys.reload_per_workload is False
    assert ys.mariadb["buffer_pool_size"] == "12M" and ys.memory_limit is None
    props = settings.ycsb({**LOCAL["ycsb"], "properties": {"rocksdb.sync": True, "n": 3},
                           "memory_limit": "64M"}, "y")
    assert props.properties == {"rocksdb.sync": "true", "n": "3"} and props.memory_limit == 64 << 20


def test_ooc_settings_and_the_one_memory_limit():
    os_ = settings.ooc(LOCAL["ooc"], "ooc")
    assert os_.memory_limit == settings.memory_limit(LOCAL["ooc"]) == 32 << 20
    assert os_.timeout == 900 and os_.swap_priority == 10 and os_.existing_swap == "refuse"
    assert os_.swap_size is None and all(isinstance(w, int) for w in os_.working_sets)
    assert settings.memory_limit({"type": "ycsb"}) is None


def test_memory_lines_name_the_cache_direct_io_leaves_the_data():
    """The default study: RocksDB's block cache (rocksdb.directio) and MariaDB's buffer pool (InnoDB's
    O_DIRECT) per engine, the out-of-core source's memory cgroup; a cgroup without direct I/O is the
    whole source's line, and buffered InnoDB or RocksDB without direct I/O have no engine line."""
    lines = settings.memory_lines(LOCAL)
    assert lines == {"ycsb:ycsb/rocksdb": 4 << 20, "ycsb:ycsb/mariadb": 12 << 20, "ooc:ooc": 32 << 20}
    buffered = {"y": {**LOCAL["ycsb"], "memory_limit": "128M", "properties": {"rocksdb.blockcachesize": 1},
                      "mariadb": {**LOCAL["ycsb"]["mariadb"], "options": {"innodb-flush-method": "fsync"}}}}
    assert settings.memory_lines(buffered) == {"ycsb:y": 128 << 20}
    cache_unset = {"y": {**LOCAL["ycsb"], "engines": ["rocksdb"], "properties": {"rocksdb.directio": True}}}
    assert settings.memory_lines(cache_unset) == {"ycsb:y/rocksdb": settings.ROCKSDB_BLOCK_CACHE}


def test_the_block_cache_default_is_the_bindings_own():
    import re

    from analysis_util import ROOT

    java = (ROOT / "ycsb/src/main/java/benchcast/ycsb/RocksDBClient.java").read_text()
    found = re.search(r'getProperty\("rocksdb\.blockcachesize", "(\d+)"\)', java)
    assert found and int(found.group(1)) == settings.ROCKSDB_BLOCK_CACHE
