import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from benchcast import BenchcastError, features, records
from benchcast.sources.parse import fiojson, importers, preflight
from analysis_util import ROOT
from test_pkb import PKB_FILE, PKB_YCSB_FILE
from ycsb_util import run_ycsb, tmpfs, ycsb_jar  # noqa: F401  (fixtures)

DEVICES = ["nand_flash", "3d_xpoint", "dram"]
FIO = (ROOT / "resources/soga2018/fio.csv").read_text()
APP = (ROOT / "resources/soga2018/ycsb_mysql.csv").read_text()


def run(tmp_path, fio=FIO, app=APP, devices=DEVICES):
    (tmp_path / "fio.csv").write_text(fio)
    (tmp_path / "app.csv").write_text(app)
    return importers.soga2018(tmp_path / "fio.csv", tmp_path / "app.csv", "s", "import:x", "ycsb", devices=devices)


def test_import_shape(tmp_path):
    recs = run(tmp_path)
    assert len(recs) == 60 + 126
    fio = recs[recs.benchmark == "fio"]
    assert set(fio["block_size"]) == {1024, 4096, 16384, 65536, 262144}
    # the paper's MB/s become the records' one bandwidth unit, B/s
    assert set(fio["metric"]) == {"lat_mean", "bw"} and set(fio["unit"]) == {"us", "B/s"}
    paper = pd.read_csv(ROOT / "resources/soga2018/fio.csv")
    first = paper[paper["metric"] == "bw_MBps"].iloc[0]
    mine = fio[(fio["metric"] == "bw") & (fio["device"] == first["device"]) & (fio["workload"] == first["rw"])
               & (fio["block_size"] == records.parse_size(first["bs"]))]
    assert mine["value"].tolist() == [pytest.approx(first["value"] * 1e6)]
    app = recs[recs.benchmark == "ycsb"]
    assert app["data_size"].max() == 128 * 10**9


def test_missing_column_names_file(tmp_path):
    with pytest.raises(BenchcastError, match=r"fio.csv: missing column\(s\) value"):
        run(tmp_path, fio=FIO.replace("device,rw,bs,metric,value", "device,rw,bs,metric,val"))


def test_non_numeric_value_names_file_and_row(tmp_path):
    lines = APP.splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ",fast"
    with pytest.raises(BenchcastError, match=r"app.csv: line 6: column latency_us is not a number: 'fast'"):
        run(tmp_path, app="\n".join(lines) + "\n")


def test_unknown_device_names_file_and_row(tmp_path):
    lines = FIO.splitlines()
    lines[3] = lines[3].replace("dram", "optane_pmem")
    with pytest.raises(BenchcastError, match=r"fio.csv: line 4: unknown device 'optane_pmem'"):
        run(tmp_path, fio="\n".join(lines) + "\n")


def test_bad_block_size_and_metric(tmp_path):
    with pytest.raises(BenchcastError, match=r"fio.csv: line 2: bs: not a size: '1Q'"):
        run(tmp_path, fio=FIO.replace("randread,1K,lat_us", "randread,1Q,lat_us", 1))
    with pytest.raises(BenchcastError, match=r"fio.csv: line 2: unknown metric 'lat_ms'"):
        run(tmp_path, fio=FIO.replace("randread,1K,lat_us", "randread,1K,lat_ms", 1))
    with pytest.raises(BenchcastError, match=r"fio.csv: line 2: bs: '0K' is not a size above 0"):
        run(tmp_path, fio=FIO.replace("randread,1K,lat_us", "randread,0K,lat_us", 1))
    # what float() reads is no size: a traceback for inf and nan, 10K for 1_0K, 1000K for 1e3K
    for bad in ("infK", "nanK", "1_0K", "1e3K", "1 0K"):
        with pytest.raises(BenchcastError, match=rf"^.*fio.csv: line 2: bs: not a size: '{bad}' \(use e.g."):
            run(tmp_path, fio=FIO.replace("randread,1K,lat_us", f"randread,{bad},lat_us", 1))


def test_a_folder_for_a_table_is_named(tmp_path):
    with pytest.raises(BenchcastError, match=r": a folder, not a CSV file$"):
        importers.soga2018(tmp_path, tmp_path, study="s", source="x", benchmark="ycsb")


# --- fio JSON from elsewhere: real fio outputs made here, bench-fio's file naming ------------------

def fio_run(out: Path, scratch: Path, rw: str, bs: str, iodepth: int, numjobs: int, fmt: str = "json"):
    """Run the real fio (libaio, direct, 300 ms) in ``scratch`` and write its output to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    subprocess.run(["fio", "--name=benchfio", f"--directory={scratch}", f"--rw={rw}", f"--bs={bs}",
                    f"--iodepth={iodepth}", f"--numjobs={numjobs}", "--ioengine=libaio", "--direct=1",
                    "--size=4M", "--time_based", "--runtime=300ms", "--group_reporting", "--unlink=1",
                    f"--output-format={fmt}", f"--output={out}"], check=True, capture_output=True)


@pytest.fixture(scope="module")
def bench_fio_tree(tmp_path_factory):
    """Two devices' folders in bench-fio's layouts: <dev>/<rw>-<iodepth>-<numjobs>.json (json) and
    <dev>/<bs>/<rw>-<iodepth>-<numjobs>.json (json+), an iodepth x numjobs sweep each."""
    root = tmp_path_factory.mktemp("benchfio")
    for rw in ("randread", "randwrite"):
        for qd in (1, 4):
            for jobs in (1, 2):
                fio_run(root / "nvme_a" / f"{rw}-{qd}-{jobs}.json", root / "scratch", rw, "4k", qd, jobs)
                fio_run(root / "nvme_b" / "16k" / f"{rw}-{qd}-{jobs}.json", root / "scratch", rw, "16k", qd, jobs,
                        fmt="json+")
    return root


def test_fio_json_reads_cells_from_the_options_not_the_names(bench_fio_tree, tmp_path):
    # a misleading file name: the cell comes from the JSON's own options
    wrong = tmp_path / "randwrite-32-8.json"
    wrong.write_text((bench_fio_tree / "nvme_a" / "randread-1-1.json").read_text())
    recs = importers.fio_json({"nvme_a": str(bench_fio_tree / "nvme_a"), "nvme_b": str(bench_fio_tree / "nvme_b"),
                               "other": str(wrong)}, study="s", source="import:fio_json")
    a = recs[recs["device"] == "nvme_a"]
    assert set(a["workload"]) == {"randread", "randwrite"} and set(a["block_size"]) == {4096}
    assert set(a["threads"]) == {1, 2, 4, 8}  # iodepth x numjobs
    assert set(recs.loc[recs["device"] == "nvme_b", "block_size"]) == {16384}
    assert set(a["run"]) == {0} and (a["value"] > 0).all()
    assert set(a["metric"]) >= {"lat_mean", "clat_p99", "clat_p99.9", "bw", "iops"}
    assert a["file"].str.endswith(".json").all() and (a["fio_version"] != "").all()
    other = recs[recs["device"] == "other"]
    assert set(other["workload"]) == {"randread"} and set(other["threads"]) == {1}
    # latency in us and bandwidth in B/s, as fio reported them
    data = json.loads((bench_fio_tree / "nvme_a" / "randread-4-2.json").read_text())
    st = data["jobs"][0]["read"]
    row = a[(a["workload"] == "randread") & (a["threads"] == 8)].set_index("metric")["value"]
    assert row["lat_mean"] == pytest.approx(st["lat_ns"]["mean"] / 1000)
    assert row["bw"] == pytest.approx(st["bw_bytes"])
    # the features carry the queue depth
    agg = recs.assign(n=1)
    names = set(features.feature_table(agg[agg["device"] != "other"])["feature"])
    assert {"randread_4K_lat_mean", "randread_4K_qd4_j2_lat_mean", "randwrite_16K_qd4_clat_p99"} <= names


SWEEP = [(d, j) for d in (1, 2, 4) for j in (1, 2, 4)]


def sweep_run(out: Path, scratch: Path, iodepth: int, numjobs: int, *more: str, fmt: str = "json"):
    """fio as bench-fio runs it (a job per command line, per-file logs), a fixed amount of I/O per
    job at a capped rate: 512 direct 4K random reads of a 4 MB file per job, 2000 IOPS each
    (a quarter of a second: long enough that a slow start moves the rate little)."""
    scratch.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["fio", "--name=random-read", f"--filename={scratch}/f", "--rw=randread", "--bs=4k",
                    f"--iodepth={iodepth}", f"--numjobs={numjobs}", "--size=4M", "--io_size=2M",
                    "--rate_iops=2000", f"--write_bw_log={scratch}/{out.stem}", "--log_avg_msec=100",
                    *(more or ("--ioengine=libaio", "--direct=1")), f"--output-format={fmt}", f"--output={out}"],
                   check=True, capture_output=True)


@pytest.fixture(scope="module")
def sweep_tree(tmp_path_factory):
    """A bench-fio sweep, iodepth {1, 2, 4} x numjobs {1, 2, 4}, in its file layout
    (randread-<iodepth>-<numjobs>.json) twice: ``grouped`` with group_reporting (json), ``solo``
    without (json+: fio reports every job of numjobs on its own, with its latency histogram)."""
    root = tmp_path_factory.mktemp("sweep")
    for d, j in SWEEP:
        sweep_run(root / "grouped" / f"randread-{d}-{j}.json", root / "scratch", d, j, "--ioengine=libaio",
                  "--direct=1", "--group_reporting")
        sweep_run(root / "solo" / f"randread-{d}-{j}.json", root / "scratch", d, j, fmt="json+")
    return root


def _expected(path: Path) -> dict:
    """What the records of one file must hold, read with the json module alone: the read statistics of
    its one job, or of its numjobs jobs summed (IOPS, bandwidth), their latency means weighted by each
    job's I/O count and their percentiles read from the added histograms (fio's way: the first bin
    where the running count reaches the percentile)."""
    jobs = [j["read"] for j in json.loads(path.read_text())["jobs"]]
    n = [j["total_ios"] for j in jobs]
    out = {"iops": sum(j["iops"] for j in jobs), "bw": sum(j["bw_bytes"] for j in jobs),
           "lat_mean": sum(j["lat_ns"]["mean"] * k for j, k in zip(jobs, n)) / sum(n) / 1000,
           "clat_mean": sum(j["clat_ns"]["mean"] * k for j, k in zip(jobs, n)) / sum(n) / 1000}
    if len(jobs) == 1:
        pct = jobs[0]["clat_ns"]["percentile"]
        return {**out, "clat_p50": pct["50.000000"] / 1000, "clat_p99": pct["99.000000"] / 1000,
                "clat_p99.9": pct["99.900000"] / 1000}
    bins: dict = {}
    for j in jobs:
        for k, v in j["clat_ns"]["bins"].items():
            bins[int(k)] = bins.get(int(k), 0) + v
    total, run, found = sum(bins.values()), 0, {}
    for value in sorted(bins):
        run += bins[value]
        for name, p in (("clat_p50", 50), ("clat_p99", 99), ("clat_p99.9", 99.9)):
            if name not in found and run >= p / 100 * total:
                found[name] = value / 1000
    return {**out, **found}


def test_fio_json_sweep_every_setting_its_own_cell_equal_to_its_json(sweep_tree):
    """The iodepth x numjobs sweep, with and without group_reporting: nine cells per device, each
    once (no repeats, so no noise), every value what its JSON says; feature names per setting."""
    from benchcast import aggregate
    from benchcast.report import tables

    recs = importers.fio_json({"grouped": str(sweep_tree / "grouped"), "solo": str(sweep_tree / "solo")},
                              study="s", source="import:fio_json")
    assert (recs["run"] == 0).all()
    for dev in ("grouped", "solo"):
        mine = recs[recs["device"] == dev]
        assert mine["cell"].nunique() == 9 and set(zip(mine["iodepth"], mine["numjobs"])) == set(SWEEP)
        for d, j in SWEEP:
            rows = mine[(mine["iodepth"] == d) & (mine["numjobs"] == j)]
            assert rows["threads"].eq(d * j).all() and rows["cell"].nunique() == 1
            assert f"iodepth={d} numjobs={j} ioengine=libaio direct=1" in rows["cell"].iloc[0]
            assert "bw_log" not in rows["cell"].iloc[0]
            got = rows.set_index("metric")["value"].to_dict()
            assert got == pytest.approx(_expected(sweep_tree / dev / f"randread-{d}-{j}.json"), rel=1e-12)
    agg = aggregate.aggregate(recs, trim=1)
    assert (agg["n"] == 1).all() and tables.noisy_cells(agg, 0.0).empty
    names = set(features.feature_table(agg)["feature"])
    assert {"randread_4K_lat_mean", "randread_4K_qd4_lat_mean", "randread_4K_j4_lat_mean",
            "randread_4K_qd2_j4_iops"} <= names and len(names) == 9 * 7


def test_jobs_reported_one_by_one_add_up_as_group_reporting_does(sweep_tree):
    """The same settings with and without group_reporting: the merged jobs did the I/O fio's group
    reports (the same count), at its rate (IOPS, bandwidth within 25 %: two runs at a capped rate);
    a histogram's percentiles computed as fio computes them."""
    for d, j in SWEEP:
        grouped = fiojson.load(sweep_tree / "grouped" / f"randread-{d}-{j}.json")
        solo = fiojson.load(sweep_tree / "solo" / f"randread-{d}-{j}.json")
        assert len(solo["jobs"]) == j and len(grouped["jobs"]) == 1
        (_, merged), = fiojson.file_cells(solo, "solo")
        want, got = grouped["jobs"][0]["read"], merged["read"]
        assert got["total_ios"] == want["total_ios"] == 512 * j
        assert got["iops"] == pytest.approx(want["iops"], rel=0.25)
        assert got["bw_bytes"] == pytest.approx(want["bw_bytes"], rel=0.25)
        if j == 1:
            clat = solo["jobs"][0]["read"]["clat_ns"]
            assert fiojson._bin_percentiles(clat["bins"], fiojson.PERCENTILES) == {
                k: float(clat["percentile"][k]) for k in fiojson.PERCENTILES.values()}


@pytest.mark.bench
def test_fio_json_outputs_differing_only_in_direct_or_ioengine_stay_two_cells(tmp_path):
    for name, more in (("a", ("--ioengine=libaio", "--direct=1")), ("b", ("--ioengine=libaio", "--direct=0")),
                       ("c", ("--ioengine=psync", "--direct=1")), ("d", ("--ioengine=libaio", "--direct=1"))):
        sweep_run(tmp_path / "dev" / f"randread-1-1-{name}.json", tmp_path / "scratch", 1, 1, *more)
    recs = importers.fio_json({"dev": str(tmp_path / "dev")}, study="s", source="import:fio_json")
    runs = recs.drop_duplicates("file").set_index(recs.drop_duplicates("file")["file"].str[-6])["run"]
    assert recs["cell"].nunique() == 3 and runs.to_dict() == {"a": 0, "b": 0, "c": 0, "d": 1}
    names = set(features.feature_table(aggregate_of(recs), {"metrics": ["lat_mean"]})["feature"])
    assert names == {"randread_4K_libaio_direct1_lat_mean", "randread_4K_libaio_direct0_lat_mean",
                     "randread_4K_psync_lat_mean"}


@pytest.mark.workflow
def test_imports_only_study_runs_end_to_end_and_refuses_a_bad_file_last(sweep_tree, tmp_path):
    """A study of two imported sweep folders alone (no targets, no application results): records,
    device figures, noise, inventory and the report. A truncated file, then a JSON file that is not
    fio's, stop the next run before any job: one line naming the file, the last on stderr; the
    results stay as they were."""
    from workflow_util import checksums, copy_workflow, edit_config, snakemake

    wd = copy_workflow(tmp_path / "wf")
    for dev in ("grouped", "solo"):
        shutil.copytree(sweep_tree / dev, wd / "imports" / dev)

    def only(cfg):
        cfg["studies"] = {"mine": {
            "devices": {"grouped": {"kind": "imported"}, "solo": {"kind": "imported"}},
            "sources": {"theirs": {"type": "fio_json", "files": {"grouped": "imports/grouped", "solo": "imports/solo"}}},
            "features": {"workloads": ["randread"], "block_sizes": ["4K"], "metrics": ["lat_mean", "clat_p99", "iops"]}}}
        cfg.pop("run", None)

    edit_config(wd, only)
    snakemake(wd)
    res = wd / "results" / "mine"
    assert pd.read_csv(res / "tables" / "noise.csv").empty  # no setting counted as a repeat of another
    figs = pd.read_csv(res / "tables" / "device_figures.csv")
    for dev in ("grouped", "solo"):
        mine = figs[(figs["device"] == dev) & (figs["metric"] == "lat_mean")]
        assert sorted(zip(mine["iodepth"], mine["numjobs"])) == sorted(SWEEP) and (mine["n"] == 1).all()
    assert (res / "tables" / "inventory.csv").exists() and (res / "charts" / "device_figures.svg").exists()
    snakemake(wd, "--report", "report.html")
    assert "device_figures" in (wd / "report.html").read_text()
    before = checksums(wd / "results")
    bad = wd / "imports" / "solo" / "randread-2-2.json"
    for text, what in ((bad.read_text()[:700], "fio JSON is truncated or malformed"),
                       ('{"hello": "world"}', "fio JSON has no jobs")):
        bad.write_text(text)
        proc = snakemake(wd, check=False)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode != 0 and lines[-1].startswith(f"benchcast: imports/solo/randread-2-2.json: {what}")
        assert sum("randread-2-2.json" in ln for ln in (proc.stdout + proc.stderr).splitlines()) == 1
        assert checksums(wd / "results") == before
        locks = wd / ".snakemake" / "locks"
        assert not (locks.exists() and any(locks.iterdir())), "a refused run left its lock"


def test_fio_json_files_of_one_cell_whose_numbers_differ_are_refused_not_averaged(sweep_tree, tmp_path):
    """Outputs with the same options are repeats; where their IOPS differ more than twofold the
    options do not tell apart what the numbers do: one line naming both files, not an average."""
    src = json.loads((sweep_tree / "grouped" / "randread-1-1.json").read_text())
    (tmp_path / "one.json").write_text(json.dumps(src))
    src["jobs"][0]["read"]["iops"] *= 3
    (tmp_path / "two.json").write_text(json.dumps(src))
    with pytest.raises(BenchcastError, match=r"two.json and .*one.json: the same fio options \(rw=randread .*x3.0"):
        importers.fio_json({"d": str(tmp_path)}, study="s", source="import:fio_json")


def aggregate_of(recs):
    from benchcast import aggregate

    return aggregate.aggregate(recs, trim=1)


def test_fio_json_same_cell_twice_is_a_repeat(bench_fio_tree, tmp_path):
    for i in (1, 2):
        (tmp_path / f"copy{i}.json").write_text((bench_fio_tree / "nvme_a" / "randread-1-1.json").read_text())
    # the same output twice is no repeat
    with pytest.raises(BenchcastError, match=r"copy2.json: jobs\[0\] \(benchfio\): duplicate job \(the same as "
                                             r".*copy1.json: jobs\[0\] \(benchfio\): device d, cell rw=randread"):
        importers.fio_json({"d": str(tmp_path)}, study="s", source="import:fio_json")
    # another run of the same job is
    data = json.loads((tmp_path / "copy2.json").read_text())
    data["jobs"][0]["read"]["iops"] *= 1.01
    (tmp_path / "copy2.json").write_text(json.dumps(data))
    recs = importers.fio_json({"d": str(tmp_path)}, study="s", source="import:fio_json")
    assert sorted(recs.drop_duplicates("file")["run"]) == [0, 1]
    # an absolute glob names the same files as the folder
    assert importers.input_files(f"{tmp_path}/copy*.json") == [tmp_path / "copy1.json", tmp_path / "copy2.json"]
    # a benchcast results folder: each run's interference record beside it is no result
    (tmp_path / "quality-run0.json").write_text('{"other_cpu": 0.1}')
    assert importers.input_files(str(tmp_path)) == [tmp_path / "copy1.json", tmp_path / "copy2.json"]


OLD_FIO = {  # fio 2.x: latencies in usec under lat/clat, bandwidth in KiB/s, no *_ns keys
    "fio version": "fio-2.2.10",
    "global options": {"rw": "randread", "bs": "4k", "iodepth": "1", "ioengine": "libaio", "size": "1G"},
    "jobs": [{"jobname": "old", "error": 0, "job options": {"name": "old"},
              "read": {"io_bytes": 409600, "bw": 40000, "iops": 10000.0, "total_ios": 100,
                       "lat": {"min": 80, "max": 300, "mean": 98.5, "stddev": 3.0},
                       "clat": {"min": 75, "max": 290, "mean": 95.25, "stddev": 3.0,
                                "percentile": {"50.00": 94, "99.00": 150, "99.90": 280}}},
              "write": {"io_bytes": 0, "bw": 0, "iops": 0.0, "total_ios": 0}}],
}


def test_fio_json_older_versions_report_usec(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps(OLD_FIO))
    recs = importers.fio_json({"d": str(tmp_path / "old.json")}, study="s", source="import:fio_json")
    v = recs.set_index("metric")["value"]
    assert v["lat_mean"] == 98.5 and v["clat_mean"] == 95.25
    assert (v["clat_p50"], v["clat_p99"], v["clat_p99.9"]) == (94, 150, 280)
    assert v["bw"] == 40000 * 1024 and set(recs["op"]) == {"read"}


@pytest.mark.parametrize("text, message", [
    ('{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "job options": {"rw": "read"}, "re', "truncated"),
    ("hello", "no JSON object"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "error": 5}]}), "ended with error 5"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "read": {"total_ios": 3, "iops": 1.0}}]}), "lack"),
    (json.dumps({**OLD_FIO, "jobs": [OLD_FIO["jobs"][0], 1]}), r"jobs\[1\]: not a fio job"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "job options": ["rw=read"]}]}), r"jobs\[0\]: not a fio job"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "read": {**OLD_FIO["jobs"][0]["read"], "iops": "fast"}}]}),
     "read statistics are not numbers where fio writes them"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "read": {**OLD_FIO["jobs"][0]["read"], "lat": None}}]}),
     "read statistics are not numbers where fio writes them"),
    (json.dumps({**OLD_FIO, "jobs": OLD_FIO["jobs"] * 2}), r"jobs\[1\] \(old\): duplicate job \(the same as jobs\[0\]"),
    (json.dumps({**OLD_FIO, "jobs": [{**OLD_FIO["jobs"][0], "jobname": n} for n in ("one", "two")]}),
     r"jobs\[1\] \(two\): 2 jobs of the same cell .*, the first jobs\[0\] \(one\)"),
])
def test_fio_json_refuses_malformed_files_naming_them(tmp_path, text, message):
    (tmp_path / "good.json").write_text(json.dumps(OLD_FIO))
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(BenchcastError, match=rf"bad.json: .*{message}"):
        importers.fio_json({"d": str(tmp_path)}, study="s", source="import:fio_json")


def test_fio_json_an_empty_folder_is_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchcastError, match=r"empty: no \*.json file"):
        importers.fio_json({"d": str(tmp_path / "empty")}, study="s", source="import:fio_json")


# --- benchcast's own records from another tree ------------------------------------------------------


def test_record_files_join_another_machines_results(tmp_path):
    rows = [{"op": "read", "metric": "lat_mean", "unit": "us", "value": v, "run": r} for v, r in ((10.0, 0), (11.0, 1))]
    theirs = records.make(rows, study="theirs", source="fio", device="ssd", benchmark="fio", workload="randread",
                          block_size=4096, threads=1)
    records.write(theirs, tmp_path / "other" / "records" / "fio" / "fio.csv")
    recs = importers.record_files(str(tmp_path / "other"), study="s", source="import:records", devices=["ssd2"],
                                  rename={"ssd": "ssd2"})
    assert set(recs["device"]) == {"ssd2"} and set(recs["study"]) == {"s"}
    assert set(recs["origin_study"]) == {"theirs"} and set(recs["origin_source"]) == {"fio"}
    assert list(recs["value"]) == [10.0, 11.0]
    with pytest.raises(BenchcastError, match=r"fio.csv: line 2: unknown device 'ssd'"):
        importers.record_files(str(tmp_path / "other"), study="s", source="import:records", devices=["ssd2"])
    (tmp_path / "bad.csv").write_text("study,source\nx,y\n")
    with pytest.raises(BenchcastError, match=r"bad.csv: missing record column"):
        importers.record_files(str(tmp_path / "bad.csv"), study="s", source="import:records")


# --- a study mixing imported fio folders with a measured device, end to end -----------------------


@pytest.mark.workflow
def test_study_mixing_imported_fio_folders_and_a_measured_device(bench_fio_tree, ycsb_jar, tmpfs, tmp_path):
    """Two imported bench-fio folders (YCSB outputs made elsewhere for one of them, the one with the
    same 4K figures as the measured devices) beside two measured devices running fio and YCSB: one
    study, from records to validity tables."""
    from workflow_util import copy_workflow, edit_config, snakemake

    wd = copy_workflow(tmp_path / "wf")
    imports = wd / "imports"
    imports.mkdir()
    for dev in ("nvme_a", "nvme_b"):
        shutil.copytree(bench_fio_tree / dev, imports / dev)
    # the imported devices' YCSB outputs (with their histogram logs): real runs of our bindings
    for dev in ("nvme_a",):
        for size in ("1MB", "2MB"):
            out = tmp_path / "ycsb" / dev / size
            run_ycsb("rocksdb", tmpfs, ["write-only"], size, 1, jar=ycsb_jar, out_dir=out, study="t",
                          device=dev, operationcount=300, repeats=[0], properties={"rocksdb.sync": "true"})
            dest = imports / f"ycsb-{dev}-{size}"
            dest.mkdir()
            for f in (out / "r0").glob("01-write-only.*"):
                if f.suffix in (".txt", ".hdr"):
                    shutil.copy(f, dest / f.name)

    def mixed(cfg):
        study = cfg["studies"]["local"]
        study["devices"] = {"nvme_a": {"kind": "imported", "label": "bench-fio folder A (4K)"},
                            "nvme_b": {"kind": "imported", "label": "bench-fio folder B (16K, json+)"},
                            "disk": {"kind": "dir", "path": "."},
                            "dram": {"kind": "tmpfs", "size": "64M"}}
        study["sources"] = {
            "theirs": {"type": "fio_json", "files": {"nvme_a": "imports/nvme_a", "nvme_b": "imports/nvme_b"}},
            "fio": {"type": "fio", "rw": ["randread", "randwrite"], "block_sizes": ["4K"], "iodepth": 1,
                    "repeats": 1, "ioengine": "psync", "size": "4M", "runtime": 1, "ramp_time": 0,
                    "direct": False},
            "their_ycsb": {"type": "ycsb_output", "runs": [
                {"files": f"imports/ycsb-{dev}-{size}", "device": dev, "engine": "rocksdb",
                 "workload": "write-only", "data_size": size} for dev in ("nvme_a",)
                for size in ("1MB", "2MB")]},
            "ycsb": {"type": "ycsb", "engines": ["rocksdb"], "workloads": ["write-only"],
                     "data_sizes": ["1MB", "2MB"], "operationcount": 300, "repeats": 2,
                     "properties": {"rocksdb.sync": "true"}},
        }
        study["features"]["block_sizes"] = ["4K", "16K"]
        study["features"]["workloads"] = ["randread", "randwrite"]
        study.pop("report", None)
        study["targets"] = {"Optane-P4800X": study["targets"]["Optane-P4800X"]}  # the others give 64K figures
        cfg["studies"] = {"local": study}
        cfg.pop("run", None)

    edit_config(wd, mixed)
    snakemake(wd)
    recs = records.read(wd / "results/local/records/fio_json/theirs.csv")
    assert set(recs["device"]) == {"nvme_a", "nvme_b"} and set(recs["source"]) == {"import:fio_json"}
    figs = pd.read_csv(wd / "results/local/tables/device_figures.csv")
    assert set(figs["device"]) == {"nvme_a", "nvme_b", "disk", "dram"}
    assert set(figs.loc[figs["device"] == "nvme_a", "threads"]) == {1, 2, 4, 8}
    agg = pd.read_csv(wd / "results/local/aggregated.csv", keep_default_na=False)
    names = set(features.feature_table(agg)["feature"])
    assert {"randread_4K_qd4_lat_mean", "randwrite_16K_qd4_j2_lat_mean", "randread_4K_lat_mean"} <= names
    svg = (wd / "results/local/charts/device_figures.svg").read_text()
    assert "queue depth (requests in flight: fio iodepth; a line per numjobs)" in svg and "bench-fio folder B (16K, json+)" in svg
    # an added file reruns the import and nothing measured
    again = json.loads((imports / "nvme_a" / "randread-1-1.json").read_text())  # a repeat, not a copy:
    again["jobs"][0]["read"]["lat_ns"]["mean"] *= 1.01  # an identical job is refused as one imported twice
    (imports / "nvme_a" / "again.json").write_text(json.dumps(again))
    # the applications: three devices per series, screened, validated, and their aggregation said
    app = pd.read_csv(wd / "results/local/records/ycsb_output/their_ycsb.csv")
    assert set(app["device"]) == {"nvme_a"} and "lat_hdr" in set(app["metric"])
    verdicts = pd.read_csv(wd / "results/local/tables/validity_verdicts.csv", keep_default_na=False)
    upd = verdicts[(verdicts["op"] == "update") & (verdicts["metric"] == "lat_mean")]
    assert len(upd) == 2 and (upd["n_devices"] == 3).all() and set(upd["aggregation"]) == {"trimmed mean"}
    p99 = agg[(agg["benchmark"] == "ycsb") & (agg["op"] == "update") & (agg["metric"] == "lat_p99")]
    assert set(p99["aggregation"]) == {"merged histogram"} and set(p99["device"]) == {"nvme_a", "disk", "dram"}
    out = snakemake(wd, "-n").stdout
    assert "import_fio_json" in out and "fio_run" not in out and "ycsb_run" not in out


# --- YCSB outputs from elsewhere ---------------------------------------------------------------------

YCSB_DATA = ROOT / "tests" / "data" / "ycsb"  # real text-exporter outputs of our bindings


def _write_run(dest: Path, k: int, name="rocksdb-02-read-only.txt") -> None:
    """A real output written as run ``k``: its run time ``k`` ms longer (two runs never write the same
    bytes; a byte-identical copy is refused as one run imported twice)."""
    lines = (YCSB_DATA / name).read_text().splitlines()
    assert lines[0].startswith("[OVERALL], RunTime(ms), ")
    lines[0] = f"[OVERALL], RunTime(ms), {int(lines[0].rsplit(',', 1)[1]) + k}"
    dest.write_text("\n".join(lines) + "\n")


def test_ycsb_output_text_files_are_repeats_of_what_the_entry_says(tmp_path):
    for i in (1, 2):
        _write_run(tmp_path / f"run{i}.txt", i)
    recs = importers.ycsb_output([{"files": str(tmp_path), "device": "ssd", "engine": "rocksdb",
                                   "workload": "c", "data_size": "1GB", "threads": 4}],
                                 study="s", source="import:ycsb_output", devices=["ssd"])
    assert sorted(recs["run"].unique()) == [0, 1] and set(recs["data_size"]) == {10**9}
    assert set(recs["threads"]) == {4} and set(recs["workload"]) == {"c"} and set(recs["benchmark"]) == {"ycsb"}
    assert {"lat_mean", "lat_p95", "lat_p99"} <= set(recs.loc[recs["op"] == "read", "metric"])
    with pytest.raises(BenchcastError, match=r"runs\[0\]: unknown device 'ssd'"):
        importers.ycsb_output([{"files": str(tmp_path), "device": "ssd", "engine": "rocksdb", "workload": "c",
                                "data_size": "1GB", "threads": 1}], study="s", source="import:ycsb_output", devices=["nvme"])
    bad = tmp_path / "bad" / "x.txt"
    bad.parent.mkdir()
    shutil.copy(YCSB_DATA / "rocksdb-notfound.txt", bad)
    with pytest.raises(BenchcastError, match=r"x.txt: YCSB reported failed operations"):
        importers.ycsb_output([{"files": str(bad.parent), "device": "ssd", "engine": "rocksdb", "workload": "c",
                                "data_size": "1GB", "threads": 1}], study="s", source="import:ycsb_output")


def _ycsb_entry(files, **said):
    return {"files": files, "device": "ssd", "engine": "rocksdb", "workload": "c", "data_size": "1GB", "threads": 1,
            **said}


def test_ycsb_output_the_same_run_listed_twice_and_unknown_devices_name_the_entry(tmp_path):
    """An output named by two entries is one run listed twice: one error when the entries say the same
    of it, another when they disagree; a device the study has not is named by its entry's key."""
    for k, name in enumerate(("run1.txt", "run2.txt")):
        _write_run(tmp_path / name, k)
    key = "config: studies.s.sources.theirs"
    one, two = str(tmp_path / "run1.txt"), str(tmp_path / "run2.txt")
    with pytest.raises(BenchcastError, match=rf"^{key}.runs\[1\]: duplicate run \(the same as runs\[0\]: {one}\)$"):
        importers.ycsb_output([_ycsb_entry(one), _ycsb_entry([two, one])], "s", "import:ycsb_output", key=key)
    with pytest.raises(BenchcastError, match=rf"^{key}.runs\[1\]: conflicting duplicate of runs\[0\] "
                                             rf"\({one}: device ssd vs nvme, threads 1 vs 4\)$"):
        importers.ycsb_output([_ycsb_entry(str(tmp_path)), _ycsb_entry(one, device="nvme", threads=4)], "s",
                              "import:ycsb_output", key=key)
    with pytest.raises(BenchcastError, match=rf"^{key}.runs\[1\]: unknown device 'nvme' \(study devices: ssd\)$"):
        importers.ycsb_output([_ycsb_entry(one), _ycsb_entry(two, device="nvme")], "s", "import:ycsb_output",
                              devices=["ssd"], key=key)
    # two entries of one cell are more repeats of it; of another, runs of their own
    recs = importers.ycsb_output([_ycsb_entry(one), _ycsb_entry(two)], "s", "import:ycsb_output", devices=["ssd"])
    assert sorted(recs["run"].unique()) == [0, 1]
    recs = importers.ycsb_output([_ycsb_entry(one), _ycsb_entry(two, threads=2)], "s", "import:ycsb_output")
    assert set(recs["run"]) == {0} and set(recs["threads"]) == {1, 2}


def test_ycsb_output_a_byte_identical_copy_is_no_repeat(tmp_path):
    """A copy of one output beside it (or named by another entry) is one run imported twice: refused
    naming both files, not counted as a second repeat."""
    _write_run(tmp_path / "run1.txt", 0)
    shutil.copy(tmp_path / "run1.txt", tmp_path / "run2.txt")
    one, two = tmp_path / "run1.txt", tmp_path / "run2.txt"
    message = rf"^{two}: the same bytes as {one}: one YCSB run imported twice \(a copy is no repeat\); remove the copy$"
    with pytest.raises(BenchcastError, match=message):
        importers.ycsb_output([_ycsb_entry(str(tmp_path))], "s", "import:ycsb_output")
    with pytest.raises(BenchcastError, match=message):
        importers.ycsb_output([_ycsb_entry(str(one)), _ycsb_entry(str(two), threads=2)], "s", "import:ycsb_output")
    _write_run(two, 1)  # a second run: other bytes
    recs = importers.ycsb_output([_ycsb_entry(str(tmp_path))], "s", "import:ycsb_output")
    assert sorted(recs["run"].unique()) == [0, 1]


def test_ycsb_output_lines_checked_naming_file_and_line(tmp_path):
    lines = (YCSB_DATA / "rocksdb-02-read-only.txt").read_text().splitlines()
    (tmp_path / "good.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "bad.txt").write_text("\n".join(lines[:12] + ["[READ], AverageLatency(us), -50.4"] + lines[13:]) + "\n")
    with pytest.raises(BenchcastError, match=r"bad.txt: line 13: \[READ\], AverageLatency\(us\): value is negative"):
        importers.ycsb_output([_ycsb_entry(str(tmp_path))], "s", "import:ycsb_output")


def test_ycsb_json_exporter_output_from_our_bindings(ycsb_jar, tmpfs, tmp_path):
    """A real run with YCSB's JSONArrayMeasurementsExporter: the import reads the same numbers as the
    text exporter would give (both go through one parser)."""
    out = tmp_path / "out"
    exporter = "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter"
    run = run_ycsb("rocksdb", tmpfs, ["write-only"], "1MB", 1, jar=ycsb_jar, out_dir=out, study="t",
                        device="tmpfs", operationcount=500, repeats=[0], properties={"exporter": exporter})
    export = out / "r0" / "01-write-only.txt"
    assert export.read_text().lstrip().startswith("[")
    recs = importers.ycsb_output([{"files": str(export), "device": "d", "engine": "rocksdb",
                                   "workload": "write-only", "data_size": "1MB", "threads": 1}], study="s",
                                 source="import:ycsb_output")
    mine = run[(run["workload"] == "write-only") & (run["op"] == "update")].set_index("metric")["value"]
    theirs = recs[recs["op"] == "update"].set_index("metric")["value"]
    assert theirs["ops"] == 500 and theirs["lat_mean"] == mine["lat_mean"] and theirs["lat_p99"] == mine["lat_p99"]


def test_ycsb_histogram_logs_beside_outputs_merge_into_true_percentiles(ycsb_jar, tmpfs, tmp_path):
    """Two real runs of our bindings imported from a folder (outputs and their .hdr logs): the logs
    are not taken for outputs, each run keeps its histograms, and aggregation merges them: the
    merged p99 is the p99 of both runs' operations together, labelled as such."""
    from benchcast import aggregate
    from benchcast.records import hdr
    from benchcast.sources.run import ycsb

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    for run in (0, 1):
        out = tmp_path / f"out{run}"
        run_ycsb("rocksdb", tmpfs, ["write-only"], "1MB", 1, jar=ycsb_jar, out_dir=out, study="t",
                      device="tmpfs", operationcount=1000, repeats=[run])
        for f in (out / f"r{run}").glob("01-write-only*"):
            if f.suffix in (".txt", ".hdr"):
                shutil.copy(f, folder / f.name.replace("01-write-only", f"run{run}"))
    assert sorted(p.name for p in folder.iterdir()) == [
        "run0.CLEANUP.hdr", "run0.UPDATE.hdr", "run0.txt", "run1.CLEANUP.hdr", "run1.UPDATE.hdr", "run1.txt"]
    recs = importers.ycsb_output([{"files": str(folder), "device": "d", "engine": "rocksdb",
                                   "workload": "write-only", "data_size": "1MB", "threads": 1}], study="s",
                                 source="import:ycsb_output")
    hists = recs[recs["metric"] == "lat_hdr"]
    assert sorted(hists["run"]) == [0, 1] and set(hists["op"]) == {"update"} and (hists["value"] == 1000).all()
    agg = aggregate.aggregate(recs, trim=1)
    p99 = agg[(agg["op"] == "update") & (agg["metric"] == "lat_p99")].iloc[0]
    both = hdr.merge(hists["hdr"], where="t")
    assert p99["aggregation"] == "merged histogram" and p99["n"] == 2
    assert p99["value"] == hdr.percentiles(both, [99])[0]
    assert p99["min"] <= p99["value"] <= p99["max"]
    assert agg.loc[agg["metric"] == "lat_mean", "aggregation"].eq("trimmed mean").all()
    with pytest.raises(BenchcastError, match="only histogram logs"):
        importers.ycsb_output([{"files": str(folder / "*.hdr"), "device": "d", "engine": "rocksdb",
                                "workload": "write-only", "data_size": "1MB", "threads": 1}], study="s", source="x")


# --- every imported row checked, with its file and its own line (fio JSON: its job) ----------------


def _fio_variant(**read):
    data = json.loads(json.dumps(OLD_FIO))
    data["jobs"][0]["read"].update(read)
    return data


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["jobs"][0]["read"]["lat"].update(mean=0), r"bad.json: jobs\[0\] \(old\): column value: value is zero: "
                                                           r"0.0 \(read lat_mean: it must be above 0\)"),
    (lambda d: d["jobs"][0]["read"].update(iops=-3.0), r"bad.json: jobs\[0\] \(old\): column value: value is negative"),
    (lambda d: d["jobs"][0]["read"]["clat"]["percentile"].update({"99.00": float("nan")}),
     r"bad.json: jobs\[0\] \(old\): column value: value is not finite"),
    (lambda d: d["global options"].update(rw="randwirte"), r"bad.json: jobs\[0\] \(old\): unknown rw 'randwirte'"),
])
def test_fio_json_jobs_checked_naming_file_and_job(tmp_path, edit, message):
    data = _fio_variant(iops=9000.0)
    edit(data)
    (tmp_path / "good.json").write_text(json.dumps(OLD_FIO))
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(BenchcastError, match=message):
        importers.fio_json({"d": str(tmp_path)}, study="s", source="import:fio_json")


def test_fio_json_the_same_output_for_two_devices_is_no_error_for_one_it_is(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(OLD_FIO))
    (tmp_path / "b.json").write_text(json.dumps(OLD_FIO))
    recs = importers.fio_json({"d": str(tmp_path / "a.json"), "e": str(tmp_path / "b.json")}, study="s", source="x")
    assert set(recs["device"]) == {"d", "e"}
    with pytest.raises(BenchcastError, match=r"b.json: jobs\[0\] \(old\): duplicate job \(the same as .*a.json: "
                                             r"jobs\[0\] \(old\): device d, cell rw=randread"):
        importers.fio_json({"d": [str(tmp_path / "a.json"), str(tmp_path / "b.json")]}, study="s", source="x")


def _record_file(path, runs=(0, 1)):
    rows = [{"op": "read", "metric": "lat_mean", "unit": "us", "value": 10.0 + r, "run": r} for r in runs]
    records.write(records.make(rows, study="theirs", source="fio", device="ssd", benchmark="fio", workload="randread",
                               block_size=4096, threads=1), path)
    return path.read_text().splitlines()


@pytest.mark.parametrize("edit, message", [
    (lambda ln: ln + [ln[2]], r"c.csv: line 4: duplicate record \(the same as line 3: device ssd, benchmark fio, "
                              r"workload randread, .* run 1\)"),
    (lambda ln: ln + [ln[2].replace(",11.0,", ",12.0,")], r"c.csv: line 4: conflicting duplicate of line 3 \(.*: "
                                                          r"value 11.0 vs 12.0\)"),
    (lambda ln: ln[:1], r"c.csv: no rows \(only a header\)"),
    (lambda ln: [ln[0], "", ln[1].replace(",10.0,", ",0,")], r"c.csv: line 3: column value: value is zero"),
    (lambda ln: [ln[0], ln[1], "", ln[2].replace(",11.0,", ",-1,")], r"c.csv: line 4: value is negative"),
    (lambda ln: [ln[0], ln[1].replace("randread", "randreed")], r"c.csv: line 2: unknown workload 'randreed'"),
    (lambda ln: [ln[0], ln[1].replace(",10.0,", ",fast,")], r"c.csv: line 2: column value is not a number: 'fast'"),
])
def test_record_files_rows_checked_naming_file_and_line(tmp_path, edit, message):
    lines = _record_file(tmp_path / "a.csv")
    (tmp_path / "c.csv").write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(BenchcastError, match=message):
        importers.record_files(str(tmp_path / "c.csv"), study="s", source="import:records")


def test_record_files_the_same_record_in_two_files(tmp_path):
    _record_file(tmp_path / "a" / "fio.csv")
    _record_file(tmp_path / "b" / "fio.csv", runs=(1, 2))
    with pytest.raises(BenchcastError, match=r"b/fio.csv: line 2: duplicate record \(the same as .*a/fio.csv: "
                                             r"line 3: device ssd, .*run 1\)"):
        importers.record_files([str(tmp_path / "a"), str(tmp_path / "b")], study="s", source="import:records")
    # renamed apart, they are two devices
    recs = importers.record_files(str(tmp_path / "a"), study="s", source="import:records", rename={"ssd": "x"})
    assert set(recs["device"]) == {"x"}


def test_import_names_read_from_the_files_before_any_job(tmp_path):
    """What an import brings, for the checks of spec cards and of the report's focus before any job:
    figures (workload, block size, metric or None) and series (benchmark, engine, workload, op)."""
    (tmp_path / "old.json").write_text(json.dumps(OLD_FIO))
    assert preflight.import_names({"type": "fio_json", "files": {"d": str(tmp_path / "old.json")}})[:2] == (
        {("randread", 4096, m) for m in ("lat_mean", "clat_mean", "clat_p50", "clat_p99", "clat_p99.9", "bw", "iops")},
        set())
    (tmp_path / "p.json").write_text(PKB_YCSB_FILE + PKB_FILE)
    figs, series, _, devices = preflight.import_names({"type": "pkb", "files": {"vm": str(tmp_path / "p.json")},
                                              "ycsb": {"engine": "redis", "workload": "b", "data_size": "1GB",
                                                       "threads": 1}})
    assert ("randread", 4096, "clat_mean") in figs and ("randread", 4096, "lat_mean") not in figs
    assert devices == {"vm"}  # the devices its rows name, for an imported device no file has
    assert ("ycsb", "redis", "b", "update") in series and ("ycsb", "redis", "load", "insert") in series
    soga = {"type": "soga2018", "fio": str(ROOT / "resources/soga2018/fio.csv"),
            "app": str(ROOT / "resources/soga2018/ycsb_mysql.csv"), "benchmark": "ycsb"}
    figs, series, _, devices = preflight.import_names(soga)
    assert devices == {"3d_xpoint", "dram", "nand_flash"}
    assert ("randwrite", 65536, "lat_mean") in figs and ("ycsb", "mysql", "write-only", "write") in series
    recs = importers.soga2018(soga["fio"], soga["app"], "s", "x", "ycsb")
    records.write(recs, tmp_path / "paper.csv")
    assert preflight.import_names({"type": "records", "files": str(tmp_path / "paper.csv")})[:2] == (figs, series)
    renamed = {"type": "records", "files": str(tmp_path / "paper.csv"), "rename": {"dram": "ram"}}
    assert preflight.import_names(renamed)[3] == {"3d_xpoint", "ram", "nand_flash"}  # after the rename
    # what the import refuses, its own check names: the file, before any job
    (tmp_path / "old.json").write_text("{")
    with pytest.raises(BenchcastError, match="old.json: fio JSON is truncated or malformed"):
        preflight.import_names({"type": "fio_json", "files": {"d": str(tmp_path / "old.json")}})
    (tmp_path / "paper.csv").write_text((tmp_path / "paper.csv").read_text().splitlines()[0] + "\n")
    with pytest.raises(BenchcastError, match="paper.csv"):
        preflight.import_names({"type": "records", "files": str(tmp_path / "paper.csv")})
    with pytest.raises(BenchcastError, match="paper.csv"):
        preflight.import_names({**soga, "fio": str(tmp_path / "paper.csv")})


def test_a_record_file_with_a_ycsb_workload_that_does_not_exist_is_refused_at_its_line(tmp_path):
    """A YCSB record of a mistyped workload (writeonly) would be a series of its own, and the report's
    focus would then blame the devices it has left: the file and the row's own line instead."""
    recs = importers.soga2018(str(ROOT / "resources/soga2018/fio.csv"), str(ROOT / "resources/soga2018/ycsb_mysql.csv"),
                              "s", "x", "ycsb")
    path = tmp_path / "paper.csv"
    records.write(recs, path)
    lines = path.read_text().splitlines()
    n = next(i for i, ln in enumerate(lines) if ",write-only," in ln and ",ycsb," in ln)
    lines[n] = lines[n].replace(",write-only,", ",writeonly,")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchcastError) as exc:
        importers.record_files(str(path), "s", "x")
    assert str(exc.value).startswith(f"{path}: line {n + 1}: unknown workload 'writeonly' (known: ")
    assert "load, read-heavy" in str(exc.value) and "\n" not in str(exc.value)
