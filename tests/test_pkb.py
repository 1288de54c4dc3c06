"""benchcast.sources.parse.pkb: PerfKitBenchmarker sample files (its fio and YCSB samples) into records, every
sample checked with its file and line."""
import json

import pytest

from benchcast import BenchcastError
from benchcast.sources.parse import pkb


def pkb_line(metric, value, unit, **metadata):
    md = {"rw": "randread", "blocksize": "4k", "iodepth": "16", "numjobs": "2", "ioengine": "libaio",
          "size": "1g", "fio_job": "rr", **metadata}
    return json.dumps({"metric": metric, "value": value, "unit": unit, "metadata": md, "test": "fio",
                       "labels": "|machine_type:n2-standard-8|", "timestamp": 1700000000.0, "run_uri": "abc"})


PKB_FILE = "\n".join([
    pkb_line("rr:read:bandwidth", 400000, "KB/s"),
    pkb_line("rr:read:latency", 310.5, "usec"),
    pkb_line("rr:read:latency:p99", 900, "usec"),
    pkb_line("rr:read:latency:p99.9", 1500, "usec"),
    pkb_line("rr:read:latency:min", 20, "usec"),
    pkb_line("rr:read:iops", 100000, ""),
    pkb_line("sw:write:latency", 55.0, "usec", rw="write", blocksize="128k", iodepth="1", numjobs="1"),
    json.dumps({"metric": "lscpu", "value": 0, "unit": "", "metadata": {"cpus": 8}}),
    "",
])


def test_pkb_fio_samples_become_records(tmp_path):
    (tmp_path / "a.json").write_text(PKB_FILE)
    (tmp_path / "b.json").write_text(PKB_FILE)
    recs = pkb.pkb({"gce_pd": str(tmp_path)}, study="s", source="import:pkb")
    a = recs[(recs["run"] == 0) & (recs["workload"] == "randread")].set_index("metric")
    assert a.loc["bw", "value"] == 400000 * 1024 and a.loc["bw", "unit"] == "B/s"
    assert a.loc["clat_mean", "value"] == 310.5 and a.loc["clat_p99.9", "value"] == 1500
    assert a.loc["iops", "value"] == 100000 and "lat_mean" not in a.index  # PKB reports completion latency
    assert set(a["threads"]) == {32} and set(a["block_size"]) == {4096} and set(a["engine"]) == {"libaio"}
    w = recs[recs["workload"] == "write"]
    assert set(w["block_size"]) == {131072} and set(w["op"]) == {"write"} and set(w["threads"]) == {1}
    assert sorted(recs["run"].unique()) == [0, 1]  # two files of the same cells: repeats
    assert set(a["iodepth"]) == {16} and set(a["numjobs"]) == {2}
    # the same job buffered is another cell, not a third repeat
    (tmp_path / "c.json").write_text(PKB_FILE.replace('"iodepth": "16"', '"iodepth": "16", "direct": "0"'))
    recs = pkb.pkb({"gce_pd": str(tmp_path)}, study="s", source="import:pkb")
    rr = recs[(recs["workload"] == "randread") & (recs["metric"] == "iops")]
    assert sorted(rr["run"]) == [0, 0, 1] and rr["cell"].nunique() == 2
    assert rr.loc[rr["run"] == 0, "cell"].str.contains("direct=0").sum() == 1
    (tmp_path / "c.json").write_text(PKB_FILE + "{not json\n")
    with pytest.raises(BenchcastError, match=r"c.json: line 9: not a PKB sample"):
        pkb.pkb({"gce_pd": str(tmp_path)}, study="s", source="import:pkb")


def pkb_ycsb_line(metric, value, unit, stage="run"):
    """A YCSB sample as PKB's ycsb_stats.CreateSamples writes it: '<op> <statistic>', YCSB's us
    latencies converted to ms, the operation and stage in the metadata."""
    return json.dumps({"metric": metric, "value": value, "unit": unit, "test": "ycsb",
                       "metadata": {"stage": stage, "operation": metric.split()[0], "ycsb_version": "0.17.0",
                                    "threads": 4}, "timestamp": 1700000000.0, "run_uri": "abc"})


PKB_YCSB_FILE = "\n".join([
    pkb_ycsb_line("overall RunTime", 29770.0, "ms"),
    pkb_ycsb_line("overall Throughput", 33590.86, "ops/sec"),
    pkb_ycsb_line("update Operations", 49856.0, ""),
    pkb_ycsb_line("update AverageLatency", 1.478, "ms"),
    pkb_ycsb_line("update 95thPercentileLatency", 3.501, "ms"),
    pkb_ycsb_line("update 99thPercentileLatency", 6.747, "ms"),
    pkb_ycsb_line("update Return=OK", 49856, ""),
    pkb_ycsb_line("update p99 latency", 6.8, "ms"),  # the histogram's reading: the summary wins
    pkb_ycsb_line("update p99.9 latency", 12.1, "ms"),
    pkb_ycsb_line("insert AverageLatency", 0.07492, "ms", stage="load"),
    pkb_ycsb_line("update MinLatency", 0.312, "ms"),
    "",
])


def test_pkb_ycsb_samples_become_application_records(tmp_path):
    (tmp_path / "a.json").write_text(PKB_YCSB_FILE + PKB_FILE)
    (tmp_path / "b.json").write_text(PKB_YCSB_FILE)
    spec = {"engine": "redis", "workload": "b", "data_size": "1GB", "threads": 4}
    recs = pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb", ycsb=spec)
    y = recs[(recs["benchmark"] == "ycsb") & (recs["run"] == 0)]
    upd = y[y["workload"] == "b"].set_index(["op", "metric"])["value"]
    assert upd[("update", "lat_mean")] == pytest.approx(1478.0) and upd[("update", "lat_p99")] == pytest.approx(6747)
    assert upd[("update", "lat_p99.9")] == pytest.approx(12100) and upd[("update", "ops")] == 49856
    assert upd[("overall", "throughput")] == pytest.approx(33590.86) and upd[("overall", "runtime")] == 29770
    assert ("update", "lat_min") not in upd.index
    load = y[y["workload"] == "load"].set_index("metric")["value"]
    assert load["lat_mean"] == pytest.approx(74.92)
    assert set(y["engine"]) == {"redis"} and set(y["data_size"]) == {10**9} and set(y["threads"]) == {4}
    assert set(recs.loc[recs["benchmark"] == "fio", "workload"]) == {"randread", "write"}  # both kinds of a file
    assert sorted(recs.loc[recs["benchmark"] == "ycsb", "run"].unique()) == [0, 1]  # a file is a run
    with pytest.raises(BenchcastError, match=r"a.json: YCSB samples, but the source does not say"):
        pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb")
    (tmp_path / "b.json").write_text(PKB_YCSB_FILE + pkb_ycsb_line("update Return=ERROR", 3, "") + "\n")
    with pytest.raises(BenchcastError, match=r"b.json: line 12: YCSB reported failed operations"):
        pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb", ycsb=spec)
    (tmp_path / "b.json").write_text(json.dumps({"metric": "lscpu", "value": 0, "unit": ""}) + "\n")
    with pytest.raises(BenchcastError, match=r"b.json: no PKB fio or YCSB samples"):
        pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb", ycsb=spec)



@pytest.mark.parametrize("extra, message", [
    (PKB_FILE.splitlines()[2], r"a.json: line 10: duplicate sample \(the same as line 3: sample rr:read:latency:p99\)"),
    (pkb_line("rr:read:latency:p99", 950, "usec"), r"a.json: line 10: conflicting duplicate of line 3 \(cell rw=randread"
                                                   r".* op read, metric clat_p99: value 900.0 vs 950.0\)"),
    (pkb_line("rr:read:iops", 0, ""), r"a.json: line 10: column value: value is zero: 0.0 \(read iops: it must be"),
    (pkb_line("zz:read:iops", 5, "", rw="randwirte"), r"a.json: line 10: unknown workload 'randwirte'"),
    (pkb_line("rr:read:latency:mean", 310.5, "usec"), None),  # one figure twice, agreeing: PKB's latency and :mean
])
def test_pkb_samples_checked_naming_file_and_line(tmp_path, extra, message):
    (tmp_path / "a.json").write_text(PKB_FILE.rstrip("\n") + "\n\n" + extra + "\n")
    if message is None:
        pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb")
        return
    with pytest.raises(BenchcastError, match=message):
        pkb.pkb({"vm": str(tmp_path)}, study="s", source="import:pkb")



def _collapsed(line: str) -> str:
    """A sample as PKB's default JSON output writes it (NewlineDelimitedJSONPublisher with
    collapse_labels): its metadata as a labels string, publisher.GetLabelsFromDict's encoding."""
    s = json.loads(line)
    md = s.pop("metadata", {})
    s["labels"] = ",".join(f"|{k}:{v}|" for k, v in sorted(md.items()))
    return json.dumps(s)


def test_pkb_default_output_with_labels_reads_as_with_metadata(tmp_path):
    """Before: every fio sample of PKB's default output was refused ('metadata lacks rw'), and a
    YCSB load-stage sample was recorded as the run stage's workload."""
    (tmp_path / "meta.json").write_text(PKB_YCSB_FILE + PKB_FILE)
    (tmp_path / "labels.json").write_text("\n".join(_collapsed(ln) for ln in (PKB_YCSB_FILE + PKB_FILE).splitlines()
                                                    if ln.strip()) + "\n")
    spec = {"engine": "redis", "workload": "b", "data_size": "1GB", "threads": 4}
    cols = ["benchmark", "workload", "op", "metric", "cell", "value"]
    got = [pkb.pkb({"vm": str(tmp_path / f)}, study="s", source="p", ycsb=spec)[cols].sort_values(cols)
           .reset_index(drop=True) for f in ("meta.json", "labels.json")]
    assert got[0].equals(got[1]) and "load" in set(got[1]["workload"])
    (tmp_path / "bad.json").write_text(json.dumps({"metric": "rr:read:iops", "value": 5, "unit": "",
                                                   "labels": "|rw:randread|,|blocksize|"}) + "\n")
    with pytest.raises(BenchcastError, match=r"bad.json: line 1: PKB label 'blocksize' is not key:value"):
        pkb.pkb({"vm": str(tmp_path / "bad.json")}, study="s", source="p")


def test_pkb_own_metadata_is_no_part_of_the_cell(tmp_path):
    """PKB's fio samples carry their statistics (bw_min ... of a bandwidth sample, min ... p99.99 of
    a latency sample, fio.ParseResults) and the run's facts (run_number, perfkitbenchmarker_version,
    vm_*) beside the job's options: before, each sample kind was a cell of its own and two runs never
    repeats of one."""
    def run(n):
        extra = {"perfkitbenchmarker_version": "v1.12.0", "run_number": str(n), "vm_1_zone": f"us-east-1{n}"}
        return "\n".join([pkb_line("rr:read:bandwidth", 400000 + n, "KB/s", bw_min=1000 + n, bw_mean=399000, **extra),
                          pkb_line("rr:read:latency", 310.5, "usec", min=20, mean=310.5, p99=900, stddev=4.5, **extra),
                          pkb_line("rr:read:latency:p99", 900, "usec", min=20, mean=310.5, p99=900, **extra),
                          pkb_line("rr:read:iops", 100000, "", **extra)]) + "\n"
    (tmp_path / "a.json").write_text(run(0))
    (tmp_path / "b.json").write_text(run(1))
    recs = pkb.pkb({"gce_pd": str(tmp_path)}, study="s", source="import:pkb")
    assert recs["cell"].nunique() == 1 and "bw_min" not in recs["cell"].iloc[0]
    assert sorted(recs.loc[recs["metric"] == "bw", "run"]) == [0, 1]
