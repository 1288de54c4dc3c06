"""Fixtures shared by test_ycsb.py and test_mariadb.py: the bindings jar (built once) and a fresh tmpfs
that the test mounts itself and unmounts afterwards."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from benchcast import BenchcastError
from benchcast.sources.run import mariadb, ycsb

DATA = Path(__file__).resolve().parent / "data" / "ycsb"


@pytest.fixture(scope="session")
def ycsb_jar():
    """The bindings jar, rebuilt only when ycsb/ sources are newer than ycsb/target/benchcast-ycsb.jar."""
    if shutil.which("java") is None:
        pytest.skip("java not installed (needs JDK 17: envs/ycsb.yaml)")
    if shutil.which("mvn") is None:
        if ycsb.DEFAULT_JAR.is_file():
            return ycsb.DEFAULT_JAR
        pytest.skip("mvn not installed and no prebuilt ycsb/target/benchcast-ycsb.jar (envs/ycsb.yaml)")
    try:
        return ycsb.build_jar(ycsb.DEFAULT_JAR)
    except BenchcastError as exc:
        pytest.fail(f"building the YCSB bindings failed: {exc}")


def _mounted(path: Path) -> bool:
    return os.path.ismount(path)


@pytest.fixture
def tmpfs(tmp_path):
    """A fresh 256M tmpfs mounted at tmp_path/dev for this test; unmounted afterwards (fails the test
    when it cannot be unmounted, e.g. because a process still uses it)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    dev = tmp_path / "dev"
    dev.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256M,mode=0755", "benchcast-test", str(dev)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount tmpfs: {res.stderr.strip()}")
    try:
        yield dev
    finally:
        res = subprocess.run(["umount", str(dev)], capture_output=True, text=True)
        if res.returncode != 0:
            subprocess.run(["umount", "-l", str(dev)], capture_output=True)
            pytest.fail(f"tmpfs {dev} could not be unmounted: {res.stderr.strip()}")
        assert not _mounted(dev)


def processes_under(path) -> list[tuple[int, str]]:
    """(pid, cmdline) of live processes whose command line mentions ``path`` (our servers and JVMs)."""
    path = str(path)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
        if path in cmd and state not in ("Z", "X"):
            found.append((int(entry.name), cmd.strip()))
    return found


def processes_named(name: str) -> list[int]:
    """Live processes under this one whose command name is ``name``; one that ends while it is looked
    at is left out (its /proc entry goes between the listing and the read)."""
    from benchcast.core import stop

    found = []
    for pid in stop.descendants(os.getpid()):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if comm == name:
            found.append(pid)
    return found


def assert_no_processes_under(path, wait: float = 10):
    deadline = time.monotonic() + wait
    while processes_under(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_under(path) == []


def need_mariadb():
    if reason := mariadb.available():
        pytest.skip(reason)


def run_ycsb(engine, device_dir, workloads, data_size, threads, *, jar, out_dir, study, device, repeats=(0,),
             run_properties=None, io_counter=None, mariadb_options=None, **source):
    """:func:`benchcast.sources.run.ycsb.run_ycsb` with a YCSB source's keys as keywords (operationcount,
    properties, fast_load: false unless given, reload_per_workload ...), the rest as the place."""
    from benchcast.config import settings

    src = {"type": "ycsb", "engines": [engine], "workloads": list(workloads), "data_sizes": [data_size],
           "threads": threads, "fast_load": False, **source}
    if mariadb_options:
        src["mariadb"] = mariadb_options
    at = ycsb.Place(device_dir=Path(device_dir), jar=Path(jar), out_dir=Path(out_dir), study=study, device=device,
                    runs=tuple(repeats), io_counter=io_counter, run_properties=run_properties or {})
    return ycsb.run_ycsb(engine, data_size, settings.ycsb(src), at)
