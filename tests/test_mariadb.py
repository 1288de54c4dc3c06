"""benchcast.sources.run.mariadb: a real throwaway server on a tmpfs the test mounts itself, always shut down; and
real YCSB runs against it (also one that fails on purpose)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchcast import BenchcastError, config, records
from benchcast.sources.run import mariadb, ycsb
from benchcast.core import units
from ycsb_util import assert_no_processes_under, need_mariadb, processes_under, run_ycsb, tmpfs, ycsb_jar  # noqa: F401

SMALL = {"log_file_size": "8M"}  # a small redo log: tmpfs holds it


@pytest.fixture(autouse=True)
def _mariadb_installed():
    need_mariadb()


def test_server_lifecycle_on_tmpfs(tmpfs, tmp_path):
    with mariadb.server(tmpfs / "data", tmp_path / "run", {"buffer_pool_size": "16M", **SMALL}) as srv:
        assert srv.running() and (tmp_path / "run" / mariadb.PID_FILE).read_text().split()[0] == str(srv.pid)
        assert srv.sql("SELECT @@innodb_buffer_pool_size, @@port, @@datadir").split() == [
            str(16 << 20), str(srv.port), f"{tmpfs / 'data'}/"]
        assert srv.sql("SHOW DATABASES").split().count("ycsb") == 1
        props = srv.ycsb_properties()
        assert props["db.url"] == f"jdbc:mariadb://127.0.0.1:{srv.port}/ycsb" and props["db.user"] == "ycsb"
        assert srv.provenance() == {"mariadb_version": mariadb.version(),
                                    "mariadb_innodb_buffer_pool_size": 16 << 20,
                                    "mariadb_innodb_log_file_size": 8 << 20,
                                    "mariadb_innodb_lru_scan_depth": 100}
        assert "passw" not in str(srv.provenance())
        pid = srv.pid
    assert not srv.running() and not mariadb._alive(pid)
    assert not (tmp_path / "run" / mariadb.PID_FILE).exists()
    assert_no_processes_under(tmpfs)
    srv.stop()  # idempotent


def test_datadirs_are_copies_of_one_installed_per_version_and_log_size(tmpfs, tmp_path, monkeypatch):
    """mariadb-install-db runs once per server version and redo log size: a second datadir is a copy
    of the first one's template (its system tables work: the server starts and creates its user);
    another redo log size gets a template of its own, and the copy has that size."""
    monkeypatch.setattr(mariadb, "TEMPLATES", tmp_path / "templates")
    mariadb.install_db(tmpfs / "a", tmp_path / "a.log", log_file_size="8M")
    made = sorted(p.name for p in (tmp_path / "templates").iterdir())
    assert len(made) == 2 and made[1] == made[0] + ".log"  # the datadir and mariadb-install-db's log
    assert "copied from" in (tmp_path / "a.log").read_text()
    with mariadb.server(tmpfs / "b", tmp_path / "run", SMALL) as srv:
        assert "ycsb" in srv.sql("SELECT user FROM mysql.user").split()
    assert sorted(p.name for p in (tmp_path / "templates").iterdir()) == made
    assert not (tmp_path / "templates" / made[0] / "ycsb").exists()  # the template is never started
    mariadb.install_db(tmpfs / "c", tmp_path / "c.log", log_file_size="16M")
    assert len(list((tmp_path / "templates").iterdir())) == 4
    assert (tmpfs / "c" / "ib_logfile0").stat().st_size == 16 << 20
    assert (tmpfs / "a" / "ib_logfile0").stat().st_size == 8 << 20


def test_server_is_shut_down_when_the_body_raises(tmpfs, tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with mariadb.server(tmpfs / "data", tmp_path / "run", SMALL) as srv:
            pid = srv.pid
            raise RuntimeError("boom")
    assert not mariadb._alive(pid)
    assert_no_processes_under(tmpfs)


def test_a_server_killed_under_the_body_fails_it_in_one_line(tmpfs, tmp_path):
    """A server that died while the body ran (here between statements, as a SIGKILL between YCSB's
    phases or during the shutdown would leave it) fails the context, naming the server and its end,
    even though the body itself raised nothing: what was measured beside it is not kept."""
    with pytest.raises(BenchcastError, match=r"had ended \(code -9\) before its shutdown; what was measured"):
        with mariadb.server(tmpfs / "data", tmp_path / "run", SMALL) as srv:
            os.kill(srv.pid, signal.SIGKILL)
            srv._proc.wait(10)
    assert not (tmp_path / "run" / mariadb.PID_FILE).exists()
    assert_no_processes_under(tmpfs)
    with mariadb.server(tmpfs / "data2", tmp_path / "run2", SMALL) as srv:  # a clean shutdown: None
        pass
    assert srv.stop() is None


def test_start_refuses_a_used_datadir_and_reports_a_server_that_cannot_start(tmpfs, tmp_path):
    (tmpfs / "data").mkdir()
    (tmpfs / "data" / "junk").write_text("x")
    with pytest.raises(BenchcastError, match="datadir .* exists and is not empty"):
        mariadb.start(tmpfs / "data", tmp_path / "run")
    with pytest.raises(BenchcastError, match="did not start"):
        mariadb.start(tmpfs / "data", tmp_path / "run", {"options": {"no-such-option": 1}}, install=False)
    assert_no_processes_under(tmpfs)


def test_teardown_all_kills_servers_left_by_a_killed_run(tmpfs, tmp_path):
    """A run killed with SIGKILL leaves its server's pid file under the results dir; teardown_all ends it.
    (The server also gets SIGTERM from the kernel when its parent dies: either way none is left.)"""
    results = tmp_path / "results"
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); from benchcast.sources.run import mariadb\n"
        "srv = mariadb.start(sys.argv[2], sys.argv[3], {'log_file_size': '8M'})\n"
        "print(srv.pid, flush=True); time.sleep(600)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(Path(ycsb.ROOT) / "scripts"), str(tmpfs / "data"),
                              str(results / "r0" / "mariadb")], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(child.stdout.readline())
        assert mariadb._alive(pid)
    finally:
        child.kill()
        child.wait()
    killed = mariadb.teardown_all(results)
    assert killed in ([pid], [])  # [] when the parent-death signal was faster
    assert not mariadb._alive(pid)
    assert not (results / "r0" / "mariadb" / mariadb.PID_FILE).exists()
    assert mariadb.teardown_all(results) == [] and mariadb.teardown_all(tmp_path / "absent") == []
    assert_no_processes_under(tmpfs)


def test_teardown_all_with_a_live_server_and_a_stale_pid_file(tmpfs, tmp_path):
    srv = mariadb.start(tmpfs / "data", tmp_path / "a" / "mariadb", SMALL)
    try:
        stale = tmp_path / "b" / mariadb.PID_FILE
        stale.parent.mkdir()
        stale.write_text(f"{os.getpid()}\n")  # alive, but not a mariadbd: must not be touched
        assert mariadb.teardown_all(tmp_path) == [srv.pid]
        assert not srv.running() and not stale.exists()
    finally:
        srv.stop()
    assert_no_processes_under(tmpfs)


def test_sigterm_during_the_context_shuts_the_server_down(tmpfs, tmp_path):
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); from benchcast.sources.run import mariadb\n"
        "with mariadb.server(sys.argv[2], sys.argv[3], {'log_file_size': '8M'}) as srv:\n"
        "    print(srv.pid, flush=True); time.sleep(600)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(Path(ycsb.ROOT) / "scripts"), str(tmpfs / "data"),
                              str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = int(child.stdout.readline())
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=60) == 128 + signal.SIGTERM
    assert not mariadb._alive(pid)
    assert "Shutdown complete" in (tmp_path / "run" / "mariadbd.err").read_text()  # clean, not killed
    assert_no_processes_under(tmpfs)


# ------------------------------------------------------------------------------------ YCSB on MariaDB

def test_ycsb_on_mariadb_on_tmpfs(ycsb_jar, tmpfs, tmp_path):
    out = tmp_path / "out"
    t0 = time.monotonic()
    df = run_ycsb("mariadb", tmpfs, ["write-heavy", "read-only"], "1MB", 2, jar=ycsb_jar, out_dir=out,
                       study="t", device="tmpfs", operationcount=2000, mariadb_options=SMALL)
    records.check(df, where="mariadb")
    assert time.monotonic() - t0 < 60
    assert list(dict.fromkeys(df["workload"])) == ["load", "write-heavy", "read-only"]
    assert set(df["engine"]) == {"mariadb"} and set(df["binding"]) == {"benchcast.ycsb.JdbcClient"}
    # not given: the schema's default (config/schema.yaml $defs/mariadb)
    assert set(df["mariadb_innodb_buffer_pool_size"]) == {units.parse_size(config.defaults("mariadb")["buffer_pool_size"])}
    assert set(df["mariadb_version"]) == {mariadb.version()}
    ops = df[df["metric"] == "ops"].set_index(["workload", "op"])["value"]
    assert ops[("load", "insert")] == 1000 and ops[("read-only", "read")] == 2000
    assert ops[("write-heavy", "read")] + ops[("write-heavy", "update")] == 2000
    assert "db.passwd=***" in (out / "r0" / "01-write-heavy.cmd").read_text()
    assert (out / "r0" / "mariadb" / "mariadbd.err").is_file()
    assert list(tmpfs.iterdir()) == []
    assert_no_processes_under(tmpfs)


def test_fast_load_on_mariadb_batches_without_syncs_and_loses_no_record(ycsb_jar, tmpfs, tmp_path):
    out = tmp_path / "out"
    df = run_ycsb("mariadb", tmpfs, ["write-only"], "1MB", 1, jar=ycsb_jar, out_dir=out, study="t",
                       device="tmpfs", operationcount=1000, mariadb_options=SMALL, fast_load=True)
    assert "-p db.batchsize=100" in (out / "r0" / "load.cmd").read_text()
    assert "db.batchsize" not in (out / "r0" / "01-write-only.cmd").read_text()
    ops = df[df["metric"] == "ops"].set_index(["workload", "op"])["value"]
    # every record loaded (a lost batch would make the updates fail with NOT_FOUND, which raises)
    assert ops[("load", "insert")] == 1000 and ops[("write-only", "update")] == 1000
    assert set(df["load_mode"]) == {"fast"}


def test_ycsb_on_mariadb_failing_run_shuts_the_server_down(ycsb_jar, tmpfs, tmp_path):
    # 1000 records loaded (1MB), reads over 2000 keys: about half are NOT_FOUND
    out = tmp_path / "out"
    with pytest.raises(BenchcastError, match=r"01-read-only\.txt: YCSB reported failed operations: "
                                             r"read Return=NOT_FOUND x\d+"):
        run_ycsb("mariadb", tmpfs, ["read-only"], "1MB", 2, jar=ycsb_jar, out_dir=out, study="t",
                      device="tmpfs", operationcount=1000, run_properties={"recordcount": 2000},
                      mariadb_options=SMALL)
    assert "Shutdown complete" in (out / "r0" / "mariadb" / "mariadbd.err").read_text()
    assert not (out / "r0" / "mariadb" / mariadb.PID_FILE).exists()
    assert processes_under(out) == []
    assert_no_processes_under(tmpfs)
