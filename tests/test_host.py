"""Tests of benchcast.core.host: the machine's provenance and where it keeps its caches."""
import platform
import shutil
import subprocess

from benchcast.core import host


def test_machine_names_this_host():
    m = host.machine()
    assert m["hostname"] == platform.node() and m["kernel"] == platform.release()
    cpu = subprocess.run(["grep", "-m1", "model name", "/proc/cpuinfo"], capture_output=True, text=True).stdout
    if cpu:
        assert m["cpu_model"] == cpu.split(":", 1)[1].strip()


def test_fio_version_is_the_fio_on_path():
    v = host.fio_version()
    if shutil.which("fio"):
        assert v.startswith("fio-") and v == subprocess.run(["fio", "--version"], capture_output=True,
                                                             text=True).stdout.strip()
    else:
        assert v == ""


def test_the_cache_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert host.cache_dir("vega") == tmp_path / "benchcast" / "vega"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert host.cache_dir("mariadb") == tmp_path / "home" / ".cache" / "benchcast" / "mariadb"
    assert not (tmp_path / "benchcast").exists()  # named, not made
