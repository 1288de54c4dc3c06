"""fio grid, job files, JSON -> records (synthetic and real runs), throttle caps measured for real."""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from benchcast import BenchcastError, devices, features
from benchcast.sources.run import fio
from benchcast.sources.parse import fiojson
from test_fiojson import fio_json
from devices_util import HAS_ZRAM, clean, needs_blkio, needs_fuse, needs_loop, needs_root  # noqa: F401
from ycsb_util import processes_named

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parents[1]
DEVICES = {
    "paper": {"kind": "imported"},
    "ram": {"kind": "tmpfs", "size": "1G"},
    "zr": {"kind": "zram", "disksize": "2G"},
    "pm": {"kind": "fsdax", "region": 0, "size": "4G", "optional": True},
}
SOURCE = {"type": "fio", "rw": ["randread", "randwrite", "randrw"], "block_sizes": ["4K", "64K"],
          "rwmixread": [70, 30], "iodepth": 4, "size": "64M", "runtime": 10, "ramp_time": 2}


# --------------------------------------------------------------------------- grid


def test_grid_expands_devices_rw_block_sizes_and_mixes():
    cells = fio.expand_grid(SOURCE, DEVICES)
    assert {c["device"] for c in cells} == {"ram", "zr", "pm"}  # imported devices are not measured
    zr = [c for c in cells if c["device"] == "zr"]
    assert len(zr) == 2 * (1 + 1 + 2)
    ids = [c["cell"] for c in zr]
    assert len(set(ids)) == len(ids)
    assert any(i.startswith("randread-4K-") for i in ids) and any(i.startswith("randrw-64K-r30-") for i in ids)
    c = next(c for c in zr if c["cell"].startswith("randwrite-64K"))
    assert (c["bs"], c["iodepth"], c["numjobs"], c["size"], c["runtime"], c["ramp_time"], c["repeats"]) == (
        65536, 4, 1, 64 << 20, 10, 2, 5)
    assert c["rwmixread"] is None and c["ioengine"] == "libaio" and c["direct"] is True


def test_kind_defaults_and_overrides():
    cells = {(c["device"], c["rw"], c["bs"], c["rwmixread"]): c for c in fio.expand_grid(SOURCE, DEVICES)}
    assert cells[("pm", "randread", 4096, None)]["ioengine"] == "libpmem"
    assert cells[("ram", "randread", 4096, None)]["direct"] is False
    src = {**SOURCE, "ioengine": "psync", "per_kind": {"tmpfs": {"direct": True}},
           "per_device": {"zr": {"numjobs": 2}}, "devices": ["ram", "zr"]}
    cells = {(c["device"], c["rw"], c["bs"], c["rwmixread"]): c for c in fio.expand_grid(src, DEVICES)}
    assert cells[("ram", "randread", 4096, None)]["direct"] is True
    assert cells[("ram", "randread", 4096, None)]["ioengine"] == "psync"
    assert cells[("zr", "randread", 4096, None)]["numjobs"] == 2
    assert {d for d, *_ in cells} == {"ram", "zr"}


def test_cell_ids_are_stable_and_change_only_for_the_changed_device():
    a = {(c["device"], c["rw"], c["bs"], c["rwmixread"]): c["cell"] for c in fio.expand_grid(SOURCE, DEVICES)}
    assert a == {(c["device"], c["rw"], c["bs"], c["rwmixread"]): c["cell"]
                 for c in fio.expand_grid(copy.deepcopy(SOURCE), DEVICES)}
    b = {(c["device"], c["rw"], c["bs"], c["rwmixread"]): c["cell"]
         for c in fio.expand_grid({**SOURCE, "per_device": {"zr": {"iodepth": 8}}}, DEVICES)}
    changed = {k[0] for k in a if a[k] != b[k]}
    assert changed == {"zr"}
    # the repeat count is not part of a cell's identity
    c = {(x["device"], x["rw"], x["bs"], x["rwmixread"]): x["cell"]
         for x in fio.expand_grid({**SOURCE, "repeats": 3}, DEVICES)}
    assert c == a


def test_excluded_pairs_leave_the_grid_and_the_other_cells_keep_their_ids():
    key = lambda c: (c["device"], c["rw"], c["bs"], c["rwmixread"])  # noqa: E731
    full = {key(c): c["cell"] for c in fio.expand_grid(SOURCE, DEVICES)}
    src = {**SOURCE, "exclude": [{"rw": "randwrite", "block_size": "64K"}, {"rw": "randrw", "block_size": "4K"}]}
    less = {key(c): c["cell"] for c in fio.expand_grid(src, DEVICES)}
    gone = set(full) - set(less)
    # every device loses randwrite at 64K and both mixes of randrw at 4K, nothing else
    assert gone == {(d, rw, bs, m) for d in ("ram", "zr", "pm")
                    for rw, bs, m in [("randwrite", 65536, None), ("randrw", 4096, 70), ("randrw", 4096, 30)]}
    assert less == {k: v for k, v in full.items() if k not in gone}


@pytest.mark.parametrize("change, pattern", [
    ({"rw": ["randreed"]}, r"^source fio: rw\[0\]: 'randreed' is not one of"),
    ({"rw": []}, r"^source fio: rw: \[\] should be non-empty"),
    ({"block_sizes": ["4Q"]}, r"^source fio: block_sizes\[0\]: '4Q' is not a size"),
    ({"iodepth": 0}, r"^source fio: iodepth: 0 is less than the minimum of 1"),
    ({"per_device": {"zr": {"iodeph": 2}}}, r"^source fio: per_device.zr: unknown key 'iodeph'"),
    ({"per_device": {"nope": {"iodepth": 2}}}, r"^source fio: per_device.nope: not a device this source measures"),
    ({"devices": ["paper"]}, r"^source fio: devices: 'paper' is an imported device"),
    ({"devices": ["ghost"]}, r"^source fio: devices: 'ghost' is not a device of the study"),
    ({"rwmixread": 120}, r"^source fio: rwmixread: 120 is greater than the maximum of 100"),
    ({"bogus": 1}, r"^source fio: unknown key 'bogus'"),
    ({"per_device": {"zr": {"size": "1B"}}}, r"^source fio: per_device.zr.size: 1 bytes is too small"),
    ({"exclude": [{"rw": "randwrite", "block_size": "16K"}]}, r"^source fio: exclude\[0\]: randwrite at 16K is not a cell"),
    ({"exclude": [{"rw": "write", "block_size": "4K"}]}, r"^source fio: exclude\[0\]: write at 4K is not a cell"),
    ({"exclude": [{"rw": "randwrite"}]}, r"^source fio: exclude\[0\]: 'block_size' is a required property"),
    ({"exclude": {"rw": "randwrite", "block_size": "4K"}}, r"^source fio: exclude: .* is not of type 'array'"),
])
def test_bad_grid_is_one_line_naming_the_key(change, pattern):
    with pytest.raises(BenchcastError, match=pattern) as info:
        fio.expand_grid({**SOURCE, **change}, DEVICES)
    assert "\n" not in str(info.value)


def test_job_file_text():
    cell = next(c for c in fio.expand_grid(SOURCE, DEVICES) if c["device"] == "zr" and c["rw"] == "randrw"
                and c["bs"] == 4096 and c["rwmixread"] == 70)
    text = fio.job_text(cell, "/mnt/zr", repeat=3)
    lines = text.splitlines()
    assert lines[0].startswith("; benchcast: device zr, cell randrw-4K-r70-") and lines[0].endswith("repeat 3")
    assert lines[1] == f"[{cell['cell']}]"
    for opt in ("directory=/mnt/zr", "rw=randrw", "rwmixread=70", "bs=4K", "ioengine=libaio", "iodepth=4",
                "numjobs=1", "direct=1", "size=64M", "time_based=1", "runtime=10", "ramp_time=2",
                "group_reporting=1"):
        assert opt in lines
    assert fio.command("j.fio", "o.json") == ["fio", "--output-format=json", "--output=o.json", "j.fio"]


# --------------------------------------------------------------------------- real runs


SMALL = {"type": "fio", "size": "4M", "runtime": 1, "ramp_time": 0, "repeats": 1}


@needs_root
def test_real_fio_on_tmpfs_parsed(clean):
    src = {**SMALL, "rw": ["randrw"], "block_sizes": ["4K"], "rwmixread": 70, "numjobs": 2, "iodepth": 2}
    spec = {"kind": "tmpfs", "size": "32M"}
    cell = fio.expand_grid(src, {"ram": spec})[0]
    with devices.session("ram", spec, clean / "ram.json") as st:
        df = fio.run_and_parse(cell, st, 0, clean / "job.fio", clean / "out.json", study="s")
        assert list((clean / "mnt" / "ram").iterdir()) == []  # unlink=1: no files left on the device
    assert set(df["op"]) == {"read", "write"} and set(df["metric"]) == set(fiojson.METRICS)
    assert (df["value"] > 0).all() and set(df["threads"]) == {4} and set(df["data_size"]) == {4 << 20}
    assert set(df["device_model"]) == {"DRAM (tmpfs)"} and "size=32768k" in df["mount_options"].iloc[0]
    assert df["fio_version"].iloc[0].startswith("fio-") and set(df["cell"]) == {cell["cell"]}
    r = df.set_index(["op", "metric"])["value"]
    assert r["read", "iops"] > r["write", "iops"]  # 70% reads


def test_direct_io_refused_where_the_probe_said_no(tmp_path):
    cell = fio.expand_grid({**SMALL, "rw": ["read"], "block_sizes": ["4K"]}, {"d": {"kind": "dir", "path": "/tmp"}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": False}
    with pytest.raises(BenchcastError, match=r"fio: device d, cell read-4K-\w+, repeat 0: direct: O_DIRECT does not work"):
        fio.run(cell, state, 0, tmp_path / "j.fio", tmp_path / "o.json")


@needs_loop
@needs_blkio
@pytest.mark.parametrize("backing, limit, rw, metric, expect", [
    ("zram", {"write_bps": "4M"}, "write", "bw", 4 << 20),
    ("loop", {"write_bps": "4M"}, "write", "bw", 4 << 20),
    ("loop", {"read_iops": 200}, "randread", "iops", 200),
])
def test_throttle_really_caps(clean, backing, limit, rw, metric, expect):
    if backing == "zram" and not HAS_ZRAM:
        pytest.skip("kernel has no zram")
    b = {"kind": "zram", "disksize": "32M"} if backing == "zram" else {
        "kind": "loop", "size": "32M", "backing_dir": str(clean)}
    spec = {"kind": "throttled", "backing": b, **limit}
    src = {**SMALL, "rw": [rw], "block_sizes": ["64K" if rw == "write" else "4K"], "runtime": 2}
    cell = fio.expand_grid(src, {"slow": spec})[0]
    with devices.session("slow", spec, clean / "slow.json") as st:
        df = fio.run_and_parse(cell, st, 0, clean / "job.fio", clean / "out.json", study="s")
    op = "write" if rw == "write" else "read"
    got = df[(df.op == op) & (df.metric == metric)]["value"].item()
    assert 0.7 * expect <= got <= 1.3 * expect, f"{metric} {got} not within 30% of the cap {expect}"
    assert "throttled" in df["device_model"].iloc[0]


@needs_loop
def test_the_same_device_unthrottled_is_far_faster_than_the_cap(clean):
    spec = {"kind": "loop", "size": "32M", "backing_dir": str(clean)}
    cell = fio.expand_grid({**SMALL, "rw": ["write"], "block_sizes": ["64K"]}, {"lp": spec})[0]
    with devices.session("lp", spec, clean / "lp.json") as st:
        df = fio.run_and_parse(cell, st, 0, clean / "job.fio", clean / "out.json", study="s")
    assert df[(df.op == "write") & (df.metric == "bw")]["value"].item() > 3 * (4 << 20)


@needs_fuse
def test_delays_add_to_each_request_as_configured(clean):
    """Direct 4K random writes and log commits on a delayed device over tmpfs: the direct write
    latency grows by the write delay; a buffered write stays in the page cache (not delayed) and
    its fdatasync pays for writing the page back and the sync (a latency added to each request,
    unlike a throttle's rate cap), each within 20 %."""
    def measure(spec, tag):
        got = {}
        with devices.session(tag, spec, clean / f"{tag}.json") as st:
            for src, op in (({**SMALL, "rw": ["randwrite"], "block_sizes": ["4K"], "direct": True}, "write"),
                            ({**SMALL, "rw": ["write"], "block_sizes": ["4K"], "direct": False,
                              "extra": {"fdatasync": 1}}, "sync")):
                cell = fio.expand_grid(src, {tag: spec})[0]
                df = fio.run_and_parse(cell, st, 0, clean / "job.fio", clean / "out.json", study="s")
                got[op] = df[(df.op == op) & (df.metric == "lat_mean")]["value"].item()
                if op == "sync":
                    got["buffered"] = df[(df.op == "write") & (df.metric == "lat_mean")]["value"].item()
            assert "delayfs over DRAM" in df["device_model"].iloc[0]
        return got

    backing = {"kind": "tmpfs", "size": "32M"}
    base = measure({"kind": "delayed", "backing": backing, "write_delay_us": 0}, "d0")
    slow = measure({"kind": "delayed", "backing": backing, "write_delay_us": 400, "sync_delay_us": 1000}, "d1")
    assert 0.8 * 400 <= slow["write"] - base["write"] <= 1.2 * 400, (base, slow)
    assert 0.8 * 1400 <= slow["sync"] - base["sync"] <= 1.2 * 1400, (base, slow)
    assert slow["buffered"] < 100, (base, slow)


@pytest.mark.bench
def test_real_fio_log_commit_job_gives_sync_records(tmp_path):
    """A log-commit job (4K appends, fdatasync after each) is parsed into op ``sync`` records from
    fio's own sync statistics (jobs[].sync.lat_ns), which fio reports apart from the writes."""
    src = {**SMALL, "rw": ["write"], "block_sizes": ["4K"], "direct": False, "ioengine": "psync",
           "extra": {"fdatasync": 1}}
    cell = fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}
    fio.run(cell, state, 0, tmp_path / "j.fio", tmp_path / "o.json")
    assert "fdatasync=1" in (tmp_path / "j.fio").read_text()
    df = fio.parse(tmp_path / "o.json", study="s", device="d")
    sync = df[df["op"] == "sync"].set_index("metric")["value"]
    assert set(sync.index) == {"lat_mean", "lat_p50", "lat_p99", "lat_p99.9"}
    assert (sync > 0).all() and sync["lat_p50"] <= sync["lat_p99"] <= sync["lat_p99.9"]
    lat = json.loads((tmp_path / "o.json").read_text())["jobs"][0]["sync"]["lat_ns"]
    assert sync["lat_mean"] == pytest.approx(lat["mean"] / 1000.0)
    assert set(df["op"]) == {"write", "sync"} and (df["workload"] == "write").all()
    plain = fio_json()
    (tmp_path / "p.json").write_text(json.dumps(plain))
    assert "sync" not in set(fio.parse(tmp_path / "p.json", study="s", device="d")["op"])


@pytest.mark.bench
def test_real_fio_appends_are_their_own_workload(tmp_path):
    """rw=write with file_append=1 (a write-ahead log: each append grows the file) is recorded as
    workload ``append``, so its figures are told apart from in-place writes."""
    src = {**SMALL, "rw": ["write"], "block_sizes": ["4K"], "direct": False, "ioengine": "psync",
           "extra": {"fdatasync": 1, "file_append": 1}}
    cell = fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}
    fio.run(cell, state, 0, tmp_path / "j.fio", tmp_path / "o.json")
    df = fio.parse(tmp_path / "o.json", study="s", device="d")
    assert set(df["workload"]) == {"append"} and set(df["op"]) == {"write", "sync"}
    agg = df.assign(n=1)
    names = set(features.feature_table(agg, {"metrics": ["lat_mean"]})["feature"])
    assert names == {"append_4K_lat_mean", "append_4K_sync_lat_mean"}


@pytest.mark.bench
def test_real_fio_paging_figures_parsed(tmp_path):
    """Figures shaped like paging (reads of a swap cluster and of readahead windows, 1 MiB written
    back without and with a sync: msync), run for real on a small file, are parsed into records
    that a study's features find by their columns; the default study's features leave them out
    (they helped on one tree and hurt on another, docs/method.md)."""
    import yaml

    study = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())["studies"]["local"]
    reads = {"type": "fio", "rw": ["randread", "randwrite"], "block_sizes": ["32K", "128K", "1M"], "direct": True,
             "exclude": [{"rw": "randwrite", "block_size": "32K"}, {"rw": "randwrite", "block_size": "128K"}]}
    msync = {"type": "fio", "rw": ["write"], "block_sizes": ["1M"], "direct": False, "extra": {"fdatasync": 1}}
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}
    frames = []
    for name, source in (("paging", reads), ("msync", msync)):
        src = {**source, "ioengine": "psync", "size": "8M", "runtime": 1, "repeats": 1, "devices": ["d"]}
        for cell in fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}}, name):
            out = tmp_path / f"{cell['cell']}.json"
            fio.run(cell, state, 0, tmp_path / "j.fio", out)
            frames.append(fio.parse(out, study="s", device="d"))
    agg = pd.concat(frames, ignore_index=True).assign(n=1)
    f = features.feature_table(agg, {**study["features"], "block_sizes": ["32K", "128K", "1M"]}).set_index("feature")
    lat = f[f["metric"] == "lat_mean"]["value"]
    assert {"randread_32K_lat_mean", "randread_128K_lat_mean", "randread_1M_lat_mean", "randwrite_1M_lat_mean",
            "write_1M_sync_lat_mean", "write_1M_lat_mean"} == set(lat.index)
    assert f.loc["randread_1M_lat_mean", "block_size"] == 1 << 20 and f.loc["write_1M_sync_lat_mean", "op"] == "sync"
    assert (lat > 0).all() and lat["randread_1M_lat_mean"] > lat["randread_32K_lat_mean"]
    bw = f[f["metric"] == "bw"]["value"]
    assert (bw > 0).all() and bw["randread_1M_bw"] > bw["randread_32K_bw"]  # larger requests, more bytes a second
    assert features.feature_table(agg, study["features"]).empty


def test_iodepth_numjobs_and_ioengine_lists_are_grid_axes():
    devs = {"d": {"kind": "dir", "path": "."}}
    one = fio.expand_grid({"type": "fio", "rw": ["randread"], "block_sizes": ["4K"], "iodepth": 1}, devs)
    src = {"type": "fio", "rw": ["randread"], "block_sizes": ["4K"], "iodepth": [1, 4, 16], "numjobs": [1, 2],
           "ioengine": ["psync", "libaio"]}
    cells = fio.expand_grid(src, devs)
    assert len(cells) == 12 and len({c["cell"] for c in cells}) == 12
    assert {(c["ioengine"], c["iodepth"], c["numjobs"]) for c in cells} == {
        (e, d, j) for e in ("psync", "libaio") for d in (1, 4, 16) for j in (1, 2)}
    # a single value keeps the cell id it always had (nothing measured is planned again)
    same = [c for c in fio.expand_grid({**src, "iodepth": [1], "numjobs": [1], "ioengine": ["libaio"]}, devs)]
    assert [c["cell"] for c in same] == [c["cell"] for c in one]
    assert "iodepth=16" in fio.job_text(next(c for c in cells if c["iodepth"] == 16), "/tmp")
    # the same number in flight two ways: two cells (the records keep iodepth and numjobs apart)
    four = [c for c in fio.expand_grid({**src, "iodepth": [2, 4], "numjobs": [1, 2]}, devs)
            if c["iodepth"] * c["numjobs"] == 4 and c["ioengine"] == "libaio"]
    assert sorted((c["iodepth"], c["numjobs"]) for c in four) == [(2, 2), (4, 1)] and four[0]["cell"] != four[1]["cell"]


def test_a_fio_output_of_a_killed_job_is_cut_short():
    """fio's output when its job's process was SIGKILLed 0.4 s into a 1 s run (by the fault
    harness, benchmarks/faults.py): fio said so in one line before its JSON, exited 0, and reported
    the job with job_runtime 0 but 64666 reads. It was kept as a whole run; now it is cut short."""
    data = fio.load(ROOT / "tests" / "data" / "fio" / "killed-worker.json")
    cell = {"runtime": 1}
    assert fio.cut_short(data, cell) == "jobs[0] (randread-4K-7ccc8e) ran 0 ms of its 1000 ms (its process killed?)"
    whole = fio_json()
    whole["jobs"][0]["job_runtime"] = 1001
    assert fio.cut_short(whole, cell) is None
    # a job that appends ends when its file is full, early but whole: 4 MiB written in 232 ms
    full = fio_json()
    full["jobs"][0].update(job_runtime=232, write={**full["jobs"][0].get("write", {}), "io_bytes": 4 << 20})
    appends = {"runtime": 1, "size": 4 << 20, "numjobs": 1, "extra": {"fdatasync": 1, "file_append": 1}}
    assert fio.cut_short(full, appends) is None
    assert fio.cut_short(full, {**appends, "size": 8 << 20}).startswith("jobs[0]")
    assert fio.cut_short(full, {"runtime": 1, "size": 4 << 20}).startswith("jobs[0]")  # time based: loops
    # one pass over the file (time_based 0: a first read of a mapped file) is whole when it moved its size
    once = {"runtime": 1, "size": 4 << 20, "numjobs": 1, "extra": {"time_based": 0}}
    assert fio.cut_short(full, once) is None
    assert fio.cut_short(full, {**once, "size": 8 << 20}).startswith("jobs[0]")


@pytest.mark.bench
def test_a_run_whose_fio_job_was_killed_is_not_kept(tmp_path):
    """SIGKILL of fio's job process half-way: fio either exits 0 with the job's partial figures (the
    case above) or aborts; either way the run fails, naming it, and neither its JSON nor its job
    file is kept; a whole run of the same cell then is."""
    import os
    import signal
    import threading
    import time

    from benchcast import BenchcastError
    from benchcast.core import stop

    src = {**SMALL, "rw": ["randread"], "block_sizes": ["4K"], "direct": False, "runtime": 2}
    cell = fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}

    def kill_worker():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            fios = processes_named("fio")
            workers = [p for p in fios if stop.parent(p) in fios]
            if workers:
                time.sleep(0.5)
                os.kill(workers[0], signal.SIGKILL)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_worker)
    killer.start()
    with pytest.raises(BenchcastError, match=r"fio: device d, cell randread-4K-\w+, repeat 0: fio('s run was cut "
                                             r"short: jobs\[0\] .* ran \d+ ms of its 2000 ms| exit -?\d+: .*got signal=9)"):
        fio.run(cell, state, 0, tmp_path / "j.fio", tmp_path / "o.json")
    killer.join()
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "j.fio").exists()
    fio.run({**cell, "runtime": 1}, state, 1, tmp_path / "j.fio", tmp_path / "o.json")
    assert fio.load(tmp_path / "o.json")["jobs"][0]["job_runtime"] >= 900


@pytest.mark.bench
def test_a_stopped_fio_leaves_no_worker_running(tmp_path):
    """fio forks each job into a session of its own: stopping fio (here its timeout; SIGTERM's
    SystemExit takes the same path) stops the workers too, so none keeps a device busy."""
    import subprocess
    import time

    from ycsb_util import processes_under

    job = tmp_path / "long.fio"
    job.write_text(f"[long]\nfilename={tmp_path / 'f'}\nrw=randwrite\nbs=4k\nsize=4M\nruntime=60\n"
                   "time_based=1\nioengine=psync\n")
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        fio.run_fio(fio.command(job, tmp_path / "out.json"), timeout=2)
    assert time.monotonic() - t0 < 15
    assert processes_under(tmp_path) == []


def _deadline_env(monkeypatch, **deadline):
    """The run's deadline settings as the workflow hands them to a job (the guard's environment)."""
    import json

    from benchcast.sources.run import quality

    settings = quality.guard_settings({"deadline": {"factor": 1, "margin_s": 4, "layout_mb_s": 1000, "ops_per_s": 50,
                                                    **deadline}})
    monkeypatch.setenv(quality.GUARD_ENV, json.dumps(settings))


@pytest.mark.bench
def test_a_fio_that_stops_answering_fails_within_its_deadline_in_one_line(tmp_path, monkeypatch):
    """fio's job process stopped (SIGSTOP: a device that no longer completes requests, a worker that
    hangs): fio waits for it for ever. Past its deadline (1 x (runtime 1 s + layout) + 4 s here) fio is
    stopped with every process it started, and the run fails in one line naming fio, the device and
    the deadline; no fio process is left."""
    import os
    import signal
    import threading
    import time

    from benchcast import BenchcastError
    from benchcast.core import stop
    from ycsb_util import processes_under

    _deadline_env(monkeypatch)
    src = {**SMALL, "rw": ["randread"], "block_sizes": ["4K"], "direct": False, "runtime": 1}
    cell = fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}

    def stop_worker():
        until = time.monotonic() + 20
        while time.monotonic() < until:
            fios = processes_named("fio")
            workers = [p for p in fios if stop.parent(p) in fios]
            if workers:
                os.kill(workers[0], signal.SIGSTOP)
                return
            time.sleep(0.01)

    threading.Thread(target=stop_worker).start()
    t0 = time.monotonic()
    with pytest.raises(BenchcastError, match=r"^fio: device d, cell randread-4K-\w+, repeat 0: fio did not finish "
                                             r"within its deadline of 5 s \(1 x \(ramp 0 s \+ runtime 1 s"):
        fio.run(cell, state, 0, tmp_path / "j.fio", tmp_path / "o.json")
    assert time.monotonic() - t0 < 5 + 5 + 10  # the deadline, SIGTERM's grace, the wait for the tree
    assert processes_under(tmp_path) == [] and not (tmp_path / "o.json").exists()


@pytest.mark.bench
def test_killing_fio_s_job_process_never_holds_the_job_past_its_deadline(tmp_path, monkeypatch):
    """SIGKILL of fio's job process, as the fault harness strikes it, at a seeded point of the run, 20
    times: the race that once left fio's main process waiting for ever. Every run ends within its
    deadline (or before it: the run is then cut short or fio says the job died), in one line."""
    import os
    import random
    import signal
    import threading
    import time

    from benchcast import BenchcastError
    from benchcast.core import stop
    from ycsb_util import processes_under

    _deadline_env(monkeypatch)
    src = {**SMALL, "rw": ["randread"], "block_sizes": ["4K"], "direct": False, "runtime": 1}
    cell = fio.expand_grid(src, {"d": {"kind": "dir", "path": str(tmp_path)}})[0]
    state = {"device": "d", "kind": "dir", "status": "ready", "target": str(tmp_path), "direct_ok": True}
    rng = random.Random(63)
    for i in range(20):
        wait = rng.uniform(0.0, 1.2)

        def kill_worker():
            until = time.monotonic() + 20
            while time.monotonic() < until:
                fios = processes_named("fio")
                workers = [p for p in fios if stop.parent(p) in fios]
                if workers:
                    time.sleep(wait)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(workers[0], signal.SIGKILL)
                    return
                time.sleep(0.002)

        killer = threading.Thread(target=kill_worker)
        killer.start()
        t0 = time.monotonic()
        try:
            fio.run(cell, state, i, tmp_path / f"j{i}.fio", tmp_path / f"o{i}.json")
        except BenchcastError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("fio: device d, cell randread-4K-")
        killer.join()
        assert time.monotonic() - t0 < 5 + 5 + 10, f"run {i} (kill after {wait:.2f} s) held its job"
        assert processes_under(tmp_path) == []
