"""benchcast.sources.run.ycsb: workload properties, commands, the parser on captured outputs, and real YCSB runs on
RocksDB on a tmpfs the test mounts itself."""
import re
import shutil
import subprocess

import pytest

from benchcast import BenchcastError, records
from benchcast.sources.run import ycsb
from ycsb_util import assert_no_processes_under, run_ycsb, tmpfs, ycsb_jar  # noqa: F401 (fixtures)

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

SHAPE = {"fieldcount": 10, "fieldlength": 100}
MIXES = ("readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion")


# ------------------------------------------------------------------------------------------ properties

def test_record_count_from_data_size():
    assert ycsb.record_count("1MB", 10, 100) == 1000
    assert ycsb.record_count("16GB", 10, 100) == 16_000_000
    assert ycsb.record_count(4096, fieldcount=1, fieldlength=1024) == 4
    assert ycsb.record_count(10, 10, 100) == 1
    with pytest.raises(BenchcastError, match="fieldcount"):
        ycsb.record_count("1MB", fieldcount=0, fieldlength=100)
    with pytest.raises(BenchcastError, match="not a size"):
        ycsb.record_count("lots", 10, 100)


@pytest.mark.parametrize("name", list(ycsb.WORKLOADS))
def test_every_workload_sets_every_proportion_summing_to_one(name):
    props = ycsb.workload_properties(name, "1MB", operationcount=10, **SHAPE)
    assert sum(float(props[k]) for k in MIXES) == pytest.approx(1.0)
    assert props["measurementtype"] == "hdrhistogram"
    assert props["exporter"] == "site.ycsb.measurements.exporter.TextMeasurementsExporter"
    assert props["recordcount"] == "1000" and props["operationcount"] == "10"


def test_paper_and_core_workload_mixes():
    w = ycsb.WORKLOADS
    assert [(w[n]["readproportion"], w[n]["updateproportion"]) for n in ycsb.PAPER_WORKLOADS] == [
        ("0", "1"), ("0.5", "0.5"), ("0.95", "0.05"), ("1", "0")]
    assert all(w[n]["requestdistribution"] == "zipfian" for n in ycsb.PAPER_WORKLOADS)
    assert w["d"]["requestdistribution"] == "latest" and w["d"]["insertproportion"] == "0.05"
    assert w["e"]["scanproportion"] == "0.95" and w["e"]["maxscanlength"] == "100"
    assert w["f"]["readmodifywriteproportion"] == "0.5"


def test_workload_properties_bounds_and_errors():
    timed = ycsb.workload_properties("a", "1MB", maxexecutiontime=30, **SHAPE)
    assert timed["maxexecutiontime"] == "30" and int(timed["operationcount"]) == ycsb.UNBOUNDED_OPS
    both = ycsb.workload_properties("a", "1MB", operationcount=5, maxexecutiontime=30, extra={"fieldlength": 7},
                                   **SHAPE)
    assert both["operationcount"] == "5" and both["fieldlength"] == "7"
    with pytest.raises(BenchcastError, match="operationcount or maxexecutiontime"):
        ycsb.workload_properties("a", "1MB", **SHAPE)
    with pytest.raises(BenchcastError, match="unknown workload 'g'"):
        ycsb.workload_properties("g", "1MB", operationcount=1, **SHAPE)


def test_properties_text_and_command():
    props = ycsb.workload_properties("write-only", "1MB", operationcount=2000, **SHAPE)
    text = ycsb.properties_text(props, comment="hello")
    assert text.startswith("# hello\n")
    parsed = dict(line.split("=", 1) for line in text.splitlines() if not line.startswith("#"))
    assert parsed == props
    with pytest.raises(BenchcastError, match="newline"):
        ycsb.properties_text({"a": "x\ny"})
    cmd = ycsb.command("run", jar="/j.jar", engine="rocksdb", props_file="/p", overrides={"rocksdb.dir": "/d"},
                       threads=4)
    assert cmd == ["java", "-cp", "/j.jar", "site.ycsb.Client", "-t", "-db", "benchcast.ycsb.RocksDBClient",
                   "-P", "/p", "-p", "rocksdb.dir=/d", "-threads", "4", "-s"]
    load = ycsb.command("load", jar="/j.jar", engine="mariadb", props_file="/p", threads=1)
    assert load[4:7] == ["-load", "-db", "benchcast.ycsb.JdbcClient"]
    with pytest.raises(BenchcastError, match="unknown engine"):
        ycsb.command("run", jar="/j", engine="leveldb", props_file="/p", threads=1)


def test_binding_versions_are_pinned():
    v = ycsb.binding_versions()
    assert v["ycsb.version"] == ycsb.YCSB_VERSION
    for key in ("rocksdbjni.version", "mariadb.jdbc.version"):
        assert re.fullmatch(r"\d+(\.\d+)+", v[key])
    pom = (ycsb.MODULE / "pom.xml").read_text()
    for plugin in re.findall(r"<plugin>(.*?)</plugin>", pom, flags=re.S):
        assert "<version>" in plugin


def test_run_ycsb_checks_arguments(tmp_path):
    kw = dict(jar=tmp_path / "x.jar", out_dir=tmp_path / "o", study="s", device="d", operationcount=10)
    with pytest.raises(BenchcastError, match=r"^source ycsb: engines\[0\]: 'leveldb' is not one of"):
        run_ycsb("leveldb", tmp_path, ["a"], "1MB", 1, **kw)
    with pytest.raises(BenchcastError, match=r"^source ycsb: workloads\[0\]: 'z' is not one of"):
        run_ycsb("rocksdb", tmp_path, ["z"], "1MB", 1, **kw)
    with pytest.raises(BenchcastError, match="x.jar not found"):
        run_ycsb("rocksdb", tmp_path, ["a"], "1MB", 1, **kw)


# ---------------------------------------------------------------------------------- real runs (RocksDB)

def _kw(jar, out):
    return dict(jar=jar, out_dir=out, study="t", device="tmpfs", operationcount=2000)


def test_rocksdb_runs_workloads_in_order_on_tmpfs(ycsb_jar, tmpfs, tmp_path):
    out = tmp_path / "out"
    df = run_ycsb("rocksdb", tmpfs, ["write-only", "read-only"], "1MB", 2, repeats=[1], **_kw(ycsb_jar, out))
    records.check(df, where="rocksdb")
    assert list(dict.fromkeys(df["workload"])) == ["load", "write-only", "read-only"]
    assert set(df["engine"]) == {"rocksdb"} and set(df["threads"]) == {2} and set(df["data_size"]) == {1_000_000}
    assert set(df["run"]) == {1} and set(df["reload"]) == {"once"} and set(df["recordcount"]) == {1000}
    assert set(df["binding_lib"]) == {"rocksdbjni 11.8.1"}
    ops = df[df["metric"] == "ops"].set_index(["workload", "op"])["value"]
    assert ops[("load", "insert")] == 1000
    assert ops[("write-only", "update")] == 2000 and ops[("read-only", "read")] == 2000
    lat = df[df["metric"] == "lat_mean"].set_index(["workload", "op"])["value"]
    assert (lat > 0).all() and (lat < 1e6).all()
    for name in ("load", "01-write-only", "02-read-only"):
        for ext in ("txt", "out", "err", "cmd", "properties"):
            assert (out / "r1" / f"{name}.{ext}").is_file()
    assert list(tmpfs.iterdir()) == []  # the database was removed
    assert_no_processes_under(tmpfs)


def test_quick_start_unpacks_rocksdb_and_archives_classes_once(ycsb_jar, tmpfs, tmp_path):
    """The first load writes the engine's class archive as it exits; the runs start with it and with
    RocksDB's native library unpacked beside the jar; both are valid for this jar and this java."""
    jar = tmp_path / "jar" / "b.jar"
    jar.parent.mkdir()
    shutil.copy(ycsb_jar, jar)  # a new time: the archive is this copy's, not the original's
    out = tmp_path / "out"
    df = run_ycsb("rocksdb", tmpfs, ["write-only"], "500KB", 1, **_kw(jar, out))
    assert df[df["metric"] == "ops"].set_index(["workload", "op"])["value"][("write-only", "update")] == 2000
    (cache,) = (jar.parent / "b.jvm").iterdir()
    assert sorted(p.name for p in cache.iterdir()) == ["librocksdbjni-linux64.so", "rocksdb.jsa"]
    assert f"-XX:ArchiveClassesAtExit={cache}/rocksdb.jsa." in (out / "r0" / "load.cmd").read_text()
    run_cmd = (out / "r0" / "01-write-only.cmd").read_text()
    assert f"-XX:SharedArchiveFile={cache}/rocksdb.jsa" in run_cmd and f"-Djava.library.path={cache}" in run_cmd
    assert ycsb.quick_start(jar, "rocksdb", write_archive=True) == [
        f"-Djava.library.path={cache}", f"-XX:SharedArchiveFile={cache}/rocksdb.jsa"]  # once: no second archive
    # -Xshare:on refuses to start with an archive it cannot use (another jar, a broken file)
    check = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={cache}/rocksdb.jsa", "-cp", str(jar), "-version"]
    assert subprocess.run(check, capture_output=True).returncode == 0
    assert subprocess.run(check[:-2] + [str(ycsb_jar), "-version"], capture_output=True).returncode != 0


def test_keep_archive_renames_a_finished_archive_and_drops_a_failed_one(tmp_path):
    for ok in (True, False):
        (tmp_path / "mariadb.jsa").unlink(missing_ok=True)
        part = tmp_path / "mariadb.jsa.123.part"
        part.write_bytes(b"x")
        ycsb.keep_archive(["-Dx=1", f"-XX:ArchiveClassesAtExit={part}", "-Xlog:cds=off"], ok=ok)
        assert not part.exists() and (tmp_path / "mariadb.jsa").exists() == ok


def test_rocksdb_reload_per_workload_and_inserting_workloads(ycsb_jar, tmpfs, tmp_path):
    out = tmp_path / "out"
    df = run_ycsb("rocksdb", tmpfs, ["d", "f"], "500KB", 1, reload_per_workload=True,
                       **_kw(ycsb_jar, out))
    assert set(df["reload"]) == {"per-workload"}
    # two loads happened, the records of the first are kept once (no duplicate keys)
    assert (out / "r0" / "01-d-load.txt").is_file() and (out / "r0" / "02-f-load.txt").is_file()
    assert len(df[(df["workload"] == "load") & (df["metric"] == "ops")]) == 1
    assert not df.duplicated(records.KEY_COLUMNS + ["run"]).any()
    assert "read-modify-write" in set(df[df["workload"] == "f"]["op"])
    assert set(df[df["workload"] == "f"]["recordcount"]) == {500}  # reloaded: d's inserts are gone


def test_timed_runs_leave_the_load_whole_and_fast_loads_unsynced(ycsb_jar, tmpfs, tmp_path):
    """maxexecutiontime bounds the workloads, never the load (a cut load made later updates fail
    with NOT_FOUND); a fast load runs without the sync per write that the workloads keep."""
    out = tmp_path / "out"
    df = run_ycsb("rocksdb", tmpfs, ["write-only"], "1MB", 1, jar=ycsb_jar, out_dir=out, study="t",
                       device="tmpfs", maxexecutiontime=1, properties={"rocksdb.sync": "true"}, fast_load=True)
    load_cmd = (out / "r0" / "load.cmd").read_text()
    assert "-p maxexecutiontime=0" in load_cmd and "-p rocksdb.sync=false" in load_cmd
    run_cmd = (out / "r0" / "01-write-only.cmd").read_text()
    assert "rocksdb.sync=false" not in run_cmd and "rocksdb.sync=true" in (out / "r0" / "01-write-only.properties").read_text()
    ops = df[df["metric"] == "ops"].set_index(["workload", "op"])["value"]
    assert ops[("load", "insert")] == 1000 and ops[("write-only", "update")] > 0
    assert set(df["load_mode"]) == {"fast"}


def test_rocksdb_failing_run_raises_and_leaves_nothing(ycsb_jar, tmpfs, tmp_path):
    # 1000 records loaded (1MB), the runs ask for keys of 2000: about half the ops find no record
    out = tmp_path / "out"
    with pytest.raises(BenchcastError, match=r"01-read-only\.txt: YCSB reported failed operations: "
                                             r"read Return=NOT_FOUND x\d+, READ-FAILED x\d+"):
        run_ycsb("rocksdb", tmpfs, ["read-only", "write-only"], "1MB", 2, run_properties={"recordcount": 2000},
                      **_kw(ycsb_jar, out))
    assert (out / "r0" / "01-read-only.err").is_file() and not (out / "r0" / "02-write-only.txt").exists()
    assert list(tmpfs.iterdir()) == []
    assert_no_processes_under(tmpfs)


def test_a_ycsb_client_that_stops_answering_fails_within_its_deadline(ycsb_jar, tmpfs, tmp_path, monkeypatch):
    """The run phase's JVM stopped (SIGSTOP) under a 1 s workload: past its deadline (1 x 1 s + 20 s
    here) it is killed and the job fails in one line naming the client, its phase and the deadline;
    no process is left on the device."""
    import json
    import os
    import signal
    import threading
    import time

    from benchcast.core import stop
    from benchcast.sources.run import quality

    monkeypatch.setenv(quality.GUARD_ENV, json.dumps(quality.guard_settings(
        {"deadline": {"factor": 1, "margin_s": 20, "layout_mb_s": 1, "ops_per_s": 1000}})))

    def stop_run_jvm():
        until = time.monotonic() + 120
        while time.monotonic() < until:
            for p in stop.descendants(os.getpid()):
                try:
                    argv = open(f"/proc/{p}/cmdline").read().split("\0")
                except OSError:
                    continue
                if "site.ycsb.Client" in argv and "-t" in argv:
                    time.sleep(0.3)
                    os.kill(p, signal.SIGSTOP)
                    return
            time.sleep(0.02)

    threading.Thread(target=stop_run_jvm, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(BenchcastError, match=r"01-write-only\.txt: the YCSB client \(run, rocksdb\) did not finish "
                                             r"within its deadline of 21 s \(1 x 1 s \+ 20 s\)"):
        run_ycsb("rocksdb", tmpfs, ["write-only"], "500KB", 1, jar=ycsb_jar, out_dir=tmp_path / "out", study="t",
                 device="tmpfs", maxexecutiontime=1)
    assert time.monotonic() - t0 < 120
    assert_no_processes_under(tmpfs)
