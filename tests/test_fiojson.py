"""benchcast.fiojson: fio's JSON output in as records (synthetic outputs; real runs: test_fio)."""

from __future__ import annotations

import json

import pytest

from benchcast import BenchcastError, fiojson, records

# --------------------------------------------------------------------------- JSON in


def op_stats(ios, lat, clat, bw_bytes, iops):
    return {"io_bytes": ios * 4096, "io_kbytes": ios * 4, "bw_bytes": bw_bytes, "bw": bw_bytes // 1024,
            "iops": iops, "runtime": 1000, "total_ios": ios, "short_ios": 0, "drop_ios": 0,
            "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
            "clat_ns": {"min": 1, "max": 9, "mean": clat, "stddev": 1.0, "N": ios,
                        "percentile": {"1.000000": 1000, "50.000000": 2000, "99.000000": 8000,
                                       "99.900000": 9000, "99.990000": 9500}},
            "lat_ns": {"min": 1, "max": 9, "mean": lat, "stddev": 1.0, "N": ios}}


def fio_json(rw="randread", read=True, write=False):
    zero = op_stats(0, 0.0, 0.0, 0, 0.0)
    zero["clat_ns"].pop("percentile")
    return {
        "fio version": "fio-3.33", "timestamp": 1, "time": "now",
        "global options": {"ioengine": "libaio"},
        "jobs": [{"jobname": "randread-4K-abc123", "groupid": 0, "error": 0,
                  "job options": {"directory": "/mnt/x", "rw": rw, "bs": "4K", "size": "4M", "numjobs": "2",
                                  "iodepth": "8", "direct": "1"},
                  "read": op_stats(1000, 2500.0, 2000.0, 4096000, 1000.0) if read else zero,
                  "write": op_stats(500, 5000.0, 4500.0, 2048000, 500.0) if write else zero,
                  "trim": zero, "sync": {"total_ios": 0}}],
    }


def test_parse_converts_units_and_keeps_only_ops_that_did_io(tmp_path):
    p = tmp_path / "o.json"
    p.write_text(json.dumps(fio_json()))
    df = fiojson.parse(p, study="s", device="d", run=2, provenance={"device_model": "zram (lz4)"})
    assert set(df["op"]) == {"read"}
    v = dict(zip(df["metric"], df["value"]))
    u = dict(zip(df["metric"], df["unit"]))
    assert v == {"lat_mean": 2.5, "clat_mean": 2.0, "clat_p50": 2.0, "clat_p99": 8.0, "clat_p99.9": 9.0,
                 "bw": 4096000.0, "iops": 1000.0}
    assert u["lat_mean"] == "us" and u["bw"] == "B/s" and u["iops"] == "ops/s"
    row = df.iloc[0]
    assert (row.study, row.source, row.device, row.benchmark, row.engine, row.workload) == (
        "s", "fio", "d", "fio", "libaio", "randread")
    assert (row.block_size, row.threads, row.iodepth, row.numjobs, row.data_size, row.run) == (4096, 16, 8, 2, 4 << 20, 2)
    assert row.fio_version == "fio-3.33" and row.jobname == "randread-4K-abc123" and row.device_model == "zram (lz4)"
    # the cell: every option that shapes the measurement, read back from fio (not the directory)
    assert row.cell == "rw=randread bs=4K iodepth=8 numjobs=2 ioengine=libaio direct=1 size=4M"
    assert fiojson.parse(p, study="s", device="d", cell="randread-4K-abc123")["cell"].eq("randread-4K-abc123").all()
    assert {"kernel", "cpu_model", "mount_options"} <= set(df.columns)
    records.check(df, "t")
    records.write(df, tmp_path / "r.csv")
    assert len(records.read(tmp_path / "r.csv")) == 7


def test_parse_mixed_and_bw_in_kib_when_no_bw_bytes(tmp_path):
    data = fio_json("randrw", read=True, write=True)
    del data["jobs"][0]["write"]["bw_bytes"]
    p = tmp_path / "o.json"
    p.write_text("fio: note: a warning fio printed before its JSON\n" + json.dumps(data))
    df = fiojson.parse(p, study="s", device="d", cell="c1")
    assert set(df["op"]) == {"read", "write"}
    w = df[(df.op == "write") & (df.metric == "bw")]["value"].item()
    assert w == (2048000 // 1024) * 1024.0
    assert set(df["cell"]) == {"c1"}


@pytest.mark.parametrize("content, pattern", [
    (None, r"o.json: no fio output file"),
    ("", r"o.json: not fio JSON output"),
    ("fio: engine libfoo not loadable\n", r"o.json: not fio JSON output"),
    (json.dumps(fio_json())[:300], r"o.json: fio JSON is truncated or malformed"),
    ('{"fio version": "fio-3.33", "jobs": []}', r"o.json: fio JSON has no jobs"),
    ('{"fio version": "fio-3.33", "client_stats": [{"jobname": "j"}]}',
     r"o.json: fio JSON has no jobs \(an output of fio --client: its client_stats are not read; import each "
     r"server's own output\)$"),
])
def test_bad_fio_output_names_the_file(tmp_path, content, pattern):
    p = tmp_path / "o.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(BenchcastError, match=pattern):
        fiojson.parse(p, study="s", device="d")


def test_job_error_and_no_io_are_errors(tmp_path):
    data = fio_json()
    data["jobs"][0]["error"] = 5
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(BenchcastError, match=r"a.json: fio job .* ended with error 5"):
        fiojson.parse(tmp_path / "a.json", study="s", device="d")
    (tmp_path / "b.json").write_text(json.dumps(fio_json(read=False)))
    with pytest.raises(BenchcastError, match=r"b.json: fio job did no I/O"):
        fiojson.parse(tmp_path / "b.json", study="s", device="d")
