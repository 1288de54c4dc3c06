"""benchcast.sources.parse.fiojson: fio's JSON output in as records (synthetic outputs; real runs: test_fio)."""

from __future__ import annotations

import json

import pytest

from benchcast import BenchcastError, records
from benchcast.sources.parse import fiojson

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
    ('{"fio version": "fio-3.33", "client_stats": []}',
     r"o.json: fio JSON has no jobs \(an output of fio --client whose client_stats hold no client's jobs\)$"),
    ('{"fio version": "fio-3.33", "client_stats": [{"jobname": "j"}]}', r"o.json: fio JSON lacks the job option rw$"),
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


THIRDPARTY = __import__("pathlib").Path(__file__).resolve().parent / "data" / "thirdparty"


def test_real_json_normal_output_reads_the_json_between_fios_text(tmp_path):
    """A real CBT output (--output-format=json,normal): job lines, the JSON, then fio's text output."""
    src = THIRDPARTY / "cbt-rawfio-json-normal.txt"
    df = fiojson.parse(src, study="s", device="nvme")
    got = {(r.op, r.metric): r.value for r in df.itertuples()}
    assert got == pytest.approx({("write", "lat_mean"): 2492.474939713, ("write", "clat_mean"): 2486.019027849,
                                 ("write", "clat_p50"): 2375.680, ("write", "clat_p99"): 4751.360,
                                 ("write", "clat_p99.9"): 6127.616, ("write", "bw"): 13116864.0,
                                 ("write", "iops"): 3201.659668})
    assert df["cell"].iloc[0].startswith("rw=randwrite bs=4K iodepth=8 numjobs=1 ioengine=libaio direct=1")
    # two runs appended to one file (fio ... >> out.json): refused, naming the second's line
    text = src.read_text()
    two = tmp_path / "two.json"
    two.write_text(text + text)
    second = len(text.splitlines()) + 4  # the second copy's "{" (its 3 job lines first)
    with pytest.raises(BenchcastError, match=rf"two.json: line {second}: a second fio JSON output"):
        fiojson.load(two)


def _cbt_json() -> dict:
    text = (THIRDPARTY / "cbt-rawfio-json-normal.txt").read_text()
    return json.JSONDecoder().raw_decode(text, text.index("\n{") + 1)[0]


def test_unified_rw_reporting_read_as_the_op_of_a_one_way_workload_refused_for_a_mix(tmp_path):
    """fio --unified_rw_reporting=1 reports a job's I/O as 'mixed' (the real CBT output, its write
    section moved there as fio would write it): a randwrite's are its writes; a randrw's cannot be
    told apart, refused with one line (before: 'did no I/O')."""
    data = _cbt_json()
    job = data["jobs"][0]
    job["mixed"] = job.pop("write")
    del job["read"], job["trim"]
    data["global options"]["unified_rw_reporting"] = "1"
    one = tmp_path / "unified.json"
    one.write_text(json.dumps(data, indent=2))
    df = fiojson.parse(one, study="s", device="nvme")
    got = {(r.op, r.metric): r.value for r in df.itertuples()}
    assert got[("write", "iops")] == 3201.659668 and got[("write", "bw")] == 13116864.0
    assert got[("write", "clat_p99")] == pytest.approx(4751.36)
    data["global options"]["rw"] = "randrw"
    mix = tmp_path / "mix.json"
    mix.write_text(json.dumps(data, indent=2))
    with pytest.raises(BenchcastError, match=r"mix.json: jobs\[0\] \(/dev/nvme8n6\): rw=randrw reported with "
                                             r"unified_rw_reporting"):
        fiojson.load(mix)


def test_client_server_output_of_one_client_imports_of_several_is_refused(tmp_path):
    """fio --client output holds client_stats, not jobs (the real CBT job, as one client reports it)."""
    data = _cbt_json()
    job = {**data.pop("jobs")[0], "hostname": "loader1", "port": 8765}
    data["client_stats"] = [job]
    one = tmp_path / "client.json"
    one.write_text(json.dumps(data, indent=2))
    df = fiojson.parse(one, study="s", device="nvme")
    assert {(r.op, r.metric): r.value for r in df.itertuples()}[("write", "iops")] == 3201.659668
    data["client_stats"] = [job, {**job, "hostname": "loader2"}, {**job, "jobname": "All clients"}]
    two = tmp_path / "clients.json"
    two.write_text(json.dumps(data, indent=2))
    with pytest.raises(BenchcastError, match=r"clients.json: fio client/server output of 2 clients \(loader1, loader2\)"):
        fiojson.load(two)


def test_real_fio_2_output_usec_and_kib_per_s(tmp_path):
    """PKB's fio 2.17 output: two jobs of numjobs=2 with group_reporting, latencies in usec, bw in KiB/s."""
    from benchcast.sources.parse import importers

    recs = importers.fio_json({"gce": str(THIRDPARTY / "pkb-fio-2.17-numjobs2.json")}, study="s", source="src")
    got = {(r.workload, r.op, r.metric): r.value for r in recs.itertuples()}
    assert len(got) == 14 and set(recs["numjobs"]) == {2} and set(recs["block_size"]) == {16384}
    assert got[("randread", "read", "lat_mean")] == 245.531122 and got[("randread", "read", "clat_p99")] == 1352
    assert got[("randread", "read", "bw")] == 129386 * 1024 and got[("randread", "read", "iops")] == 8086.673998
    assert got[("randwrite", "write", "clat_p99.9")] == 5728 and got[("randwrite", "write", "bw")] == 39312 * 1024


def test_percentiles_of_the_total_latency_are_recorded_as_lat_percentiles(tmp_path):
    """fio --lat_percentiles=1 --clat_percentiles=0 reports its percentiles under lat_ns, none under
    clat_ns (the real CBT job, its percentiles moved there): recorded as lat_p*, not dropped."""
    data = _cbt_json()
    st = data["jobs"][0]["write"]
    st["lat_ns"]["percentile"] = st["clat_ns"].pop("percentile")
    path = tmp_path / "lat.json"
    path.write_text(json.dumps(data, indent=2))
    got = {(r.op, r.metric): r.value for r in fiojson.parse(path, study="s", device="d").itertuples()}
    assert got[("write", "lat_p50")] == pytest.approx(2375.680) and got[("write", "lat_p99.9")] == pytest.approx(6127.616)
    assert not any(m.startswith("clat_p") for _, m in got)


def test_a_file_windows_powershell_wrote_reads_as_its_utf8_copy(tmp_path):
    """`fio ... > out.json` in Windows PowerShell 5 writes UTF-16 with a byte-order mark (before:
    'fio output is not text'); a UTF-8 mark is dropped too."""
    text = (THIRDPARTY / "cbt-rawfio-json-normal.txt").read_text()
    want = fiojson.parse(THIRDPARTY / "cbt-rawfio-json-normal.txt", study="s", device="d")["value"].tolist()
    for name, data in (("u16.json", text.encode("utf-16")), ("u8bom.json", b"\xef\xbb\xbf" + text.encode())):
        (tmp_path / name).write_bytes(data)
        assert fiojson.parse(tmp_path / name, study="s", device="d")["value"].tolist() == want
