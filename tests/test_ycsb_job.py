"""Tests of benchcast.ycsb_job: the YCSB job's command line fails in one line, touching nothing, when its
device spec is bad (the runs themselves are tested in test_ycsb and test_mariadb)."""
import json
import subprocess
import sys

from analysis_util import ROOT


def test_bad_device_spec_is_one_line_and_exit_1(tmp_path):
    job = {"device": "x", "spec": {"kind": "floppy"}, "state": str(tmp_path / "x.json"), "study": "s",
           "source_name": "ycsb", "source": {"workloads": ["write-only"], "mariadb": {}}, "engine": "rocksdb",
           "size": 1000000, "repeat": 0, "jar": "none.jar", "raw": str(tmp_path / "raw"),
           "records": str(tmp_path / "out.csv")}
    proc = subprocess.run([sys.executable, "-m", "benchcast.ycsb_job", "--job", json.dumps(job)],
                          cwd=ROOT / "scripts", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert "\n" not in line and line.startswith("benchcast: ")
    assert "device x: kind: 'floppy' is not one of tmpfs, dir, zram" in line
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "x.json").exists()
