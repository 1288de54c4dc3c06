"""What one benchmark job does around its work: the per-node lock, and cells a device cannot run."""
import json
import subprocess
import sys
import time

import pytest

from benchcast import devices
from benchcast.sources.run import fio
from devices_util import HAS_ZRAM, clean, needs_root  # noqa: F401 (fixtures)

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

HOLD = """
import sys, time
sys.path.insert(0, {scripts!r})
from benchcast.devices import benchmark_lock
with benchmark_lock({lock!r}):
    start = time.monotonic()
    time.sleep(0.4)
    print(start, time.monotonic())
"""


def test_benchmark_lock_serialises_jobs(tmp_path):
    from analysis_util import ROOT

    code = HOLD.format(scripts=str(ROOT / "scripts"), lock=str(tmp_path / "lock"))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    spans = sorted(tuple(map(float, p.communicate(timeout=30)[0].split())) for p in procs)
    assert all(p.returncode == 0 for p in procs)
    for (s0, e0), (s1, _e1) in zip(spans, spans[1:]):
        assert s1 >= e0, f"two jobs held the lock at once: {spans}"


def cell(bs):
    return {"device": "zr", "cell": f"randread-{bs}", "rw": "randread", "bs": bs, "rwmixread": None,
            "ioengine": "psync", "iodepth": 1, "numjobs": 1, "direct": True, "size": 4 << 20, "runtime": 1,
            "ramp_time": 0, "extra": {}, "repeats": 1}


@needs_root
@pytest.mark.skipif(not HAS_ZRAM, reason="the kernel has no zram")
def test_direct_cell_below_the_logical_block_size_is_recorded_as_skipped(clean):
    spec = {"kind": "zram", "disksize": "64M"}
    state = clean / "state" / "zr.json"
    try:
        # 1K direct I/O on zram (logical block size 4096) is impossible: skipped, said in the file
        fio.run_cell("zr", spec, state, cell(1024), 0, clean / "a.fio", clean / "a.json")
        out = json.loads((clean / "a.json").read_text())
        assert "logical block size 4096" in out["benchcast_skipped"]
        assert fio.parse(clean / "a.json", study="s", device="zr").empty
        # 4K runs for real on the same device
        fio.run_cell("zr", spec, state, cell(4096), 0, clean / "b.fio", clean / "b.json")
        recs = fio.parse(clean / "b.json", study="s", device="zr")
        assert set(recs["metric"]) >= {"lat_mean", "bw", "iops"} and (recs["value"] > 0).all()
    finally:
        devices.teardown(state)
