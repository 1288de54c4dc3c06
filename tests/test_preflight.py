"""preflight: the files planned jobs will read are checked before any job runs."""
import json
import shutil
import subprocess

import pytest

from benchcast import BenchcastError
from benchcast.sources.parse import preflight

ROOT_RESULTS = "results/local/fio/fio/dram/randread-4K-abc123/run0.json"


def fio_json(tmp_path, data) -> str:
    path = tmp_path / ROOT_RESULTS
    path.parent.mkdir(parents=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
@pytest.mark.bench
def test_a_real_fio_json_passes_and_its_truncation_is_refused(tmp_path):
    out = tmp_path / "real.json"
    subprocess.run(["fio", "--name=p", f"--directory={tmp_path}", "--rw=randread", "--bs=4k", "--size=1M",
                    "--runtime=1", "--time_based=0", "--output-format=json", f"--output={out}"], check=True,
                   capture_output=True)
    path = fio_json(tmp_path, out.read_text())
    preflight.check_file(path)
    with open(path, "r+") as fh:
        fh.truncate(len(out.read_text()) // 2)
    with pytest.raises(BenchcastError, match="run0.json: fio JSON is truncated or malformed"):
        preflight.check_file(path)


def test_a_failed_fio_job_is_refused(tmp_path):
    data = {"fio version": "fio-3.33", "jobs": [{"jobname": "x", "error": 5, "job options": {"rw": "randread"}}]}
    with pytest.raises(BenchcastError, match="ended with error 5"):
        preflight.check_file(fio_json(tmp_path, data))


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
@pytest.mark.workflow
def test_import_sources_are_read_whole_before_any_job(tmp_path):
    """Each kind of import source is checked as its import reads it: a good folder passes, a
    non-fio JSON file in it, a PKB file of no samples, a record file with a negative value are
    refused naming the file."""
    folder = tmp_path / "theirs"
    folder.mkdir()
    subprocess.run(["fio", "--name=p", f"--directory={tmp_path}", "--rw=randread", "--bs=4k", "--size=1M",
                    "--output-format=json", f"--output={folder / 'randread-1-1.json'}"], check=True, capture_output=True)
    src = {"type": "fio_json", "files": {"a": str(folder)}}
    preflight.imported(src, ["a"])
    (folder / "notes.json").write_text('{"hello": "world"}')
    with pytest.raises(BenchcastError, match=r"notes.json: fio JSON has no jobs"):
        preflight.imported(src, ["a"])
    with pytest.raises(BenchcastError, match=r"notes.json: line 1: a PKB sample needs metric"):
        preflight.imported({"type": "pkb", "files": {"a": str(folder / "notes.json")}}, ["a"])
    recs = tmp_path / "recs.csv"
    recs.write_text("study,source,device,benchmark,engine,workload,block_size,threads,data_size,op,metric,unit,"
                    "value,run\ns,fio,a,fio,,randread,4096,1,0,read,lat_mean,us,-3,0\n")
    with pytest.raises(BenchcastError, match=r"recs.csv: line 2: value is negative"):
        preflight.imported({"type": "records", "files": str(recs)}, ["a"])


def test_ycsb_records_with_a_negative_value_are_refused(tmp_path):
    from benchcast import records

    path = tmp_path / "results/local/ycsb/ycsb/dram/rocksdb/1000000/run0.csv"
    recs = records.make([{"op": "update", "metric": "lat_mean", "unit": "us", "value": 1.0}], study="local",
                        source="ycsb:ycsb", device="dram", benchmark="ycsb", workload="write-only", run=0)
    path.parent.mkdir(parents=True)
    recs.assign(value=-1.0).to_csv(path, index=False)
    with pytest.raises(BenchcastError, match="value is negative"):
        preflight.check_file(str(path))


def test_other_files_are_not_read(tmp_path):
    preflight.check_file(str(tmp_path / "results/local/devices/dram/provisioned.json"))  # not there: no error


def test_a_results_file_is_refused(tmp_path):
    res = tmp_path / "results"
    res.write_text("x\n")
    with pytest.raises(BenchcastError, match=r"results: the results folder is a file here; move it away"):
        preflight.check_writable(str(res))


@pytest.mark.workflow
def test_a_read_only_results_folder_is_refused(tmp_path):
    import os

    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    res = tmp_path / "results"
    res.mkdir()
    preflight.check_writable(str(res))
    subprocess.run(["mount", "--bind", str(res), str(res)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(res)], check=True)
        with pytest.raises(BenchcastError, match="results folder is not writable \\(read-only file system\\)"):
            preflight.check_writable(str(res))
    finally:
        subprocess.run(["umount", str(res)], check=True)


PAPER = {"type": "soga2018", "fio": "resources/soga2018/fio.csv", "app": "resources/soga2018/ycsb_mysql.csv",
         "benchmark": "ycsb"}
FOCUS = {"focus": {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write",
                   "metric": "lat_mean"}, "focus_data_size": "16GB"}


def paper_copy(tmp_path, line, engine):
    """The paper's tables, the app row on ``line`` (1-based) relabelled to ``engine``."""
    from analysis_util import ROOT

    lines = (ROOT / PAPER["app"]).read_text().splitlines()
    cells = lines[line - 1].split(",")
    lines[line - 1] = ",".join([engine] + cells[1:])
    (tmp_path / "app.csv").write_text("\n".join(lines) + "\n")
    return {**PAPER, "fio": str(ROOT / PAPER["fio"]), "app": str(tmp_path / "app.csv")}


def test_the_report_focus_needs_min_devices_at_its_data_size(tmp_path):
    """The imported rows must give the focus a fit at its data size (screen.min_devices devices);
    the paper's do, one relabelled row of it not."""
    from analysis_util import ROOT

    cells = preflight.import_names({**PAPER, "fio": str(ROOT / PAPER["fio"]), "app": str(ROOT / PAPER["app"])})[2]
    preflight.check_focus_devices("config: studies.p", FOCUS, 3, cells)
    preflight.check_focus_devices("config: studies.p", {}, 3, cells)
    with pytest.raises(BenchcastError, match=r"^config: studies.p.report.focus: ycsb mysql write-only write lat_mean "
                                             r"at 16GB: the imported results come from 3 device\(s\) "):
        preflight.check_focus_devices("config: studies.p", FOCUS, 4, cells)
    cells = preflight.import_names(paper_copy(tmp_path, 5, "rocksdb"))[2]
    with pytest.raises(BenchcastError, match=r"come from 2 device\(s\) \(3d_xpoint, dram\), fewer than "
                                             r"screen.min_devices \(3\): no series could be fitted for the report$"):
        preflight.check_focus_devices("config: studies.p", FOCUS, 3, cells)
    preflight.check_focus_devices("config: studies.p", {**FOCUS, "focus_data_size": "8GB"}, 3, cells)
    with pytest.raises(BenchcastError, match=r"^config: studies.p.report.focus_data_size: 48GB: no imported result "
                                             r"of ycsb mysql write-only write lat_mean at that size \(sizes: 2GB, 4GB, "
                                             r"8GB, 16GB, 32GB, 64GB, 128GB\)$"):
        preflight.check_focus_devices("config: studies.p", {**FOCUS, "focus_data_size": "48GB"}, 3, cells)
    with pytest.raises(BenchcastError, match=r"^config: studies.p.report.focus: no imported application result is "
                                             r"ycsb mysql write-only write lat_p99$"):
        preflight.check_focus_devices("config: studies.p", {"focus": {**FOCUS["focus"], "metric": "lat_p99"}}, 3, cells)


def test_an_app_series_no_fit_can_use_is_refused_at_its_first_line(tmp_path):
    from analysis_util import ROOT

    preflight.check_app_series(ROOT / PAPER["app"], 3)
    src = paper_copy(tmp_path, 77, "rocksdb")
    with pytest.raises(BenchcastError, match=r"app.csv: line 77: engine rocksdb, workload read-heavy, op read: at "
                                             r"every data size rows of 1 device\(s\) \(nand_flash\), fewer than "
                                             r"screen.min_devices \(3\): no fit can use them$"):
        preflight.check_app_series(src["app"], 3)
    preflight.check_app_series(src["app"], 1)
    # a cell missing where the other devices have the series: third-party results may lack one
    lines = (ROOT / PAPER["app"]).read_text().splitlines()
    (tmp_path / "gap.csv").write_text("\n".join(lines[:76] + lines[77:]) + "\n")
    preflight.check_app_series(tmp_path / "gap.csv", 3)


def test_a_fio_figure_no_fit_can_use_is_refused_at_its_first_line(tmp_path):
    """A block size mistyped in the paper-shaped fio table leaves its figure on one device: refused at
    its line (Tables 9-11 changed, exit 0); the same size written another way (1k, 1K) is one figure."""
    from analysis_util import ROOT

    preflight.check_fio_figures(ROOT / PAPER["fio"], 3)
    lines = (ROOT / PAPER["fio"]).read_text().splitlines()
    for bs in ("1k", "1KiB"):
        (tmp_path / "fio.csv").write_text("\n".join([lines[0], lines[1].replace(",1K,", f",{bs},"), *lines[2:]]) + "\n")
        preflight.check_fio_figures(tmp_path / "fio.csv", 3)
    (tmp_path / "fio.csv").write_text("\n".join([lines[0], lines[1].replace(",1K,", ",3K,"), *lines[2:]]) + "\n")
    with pytest.raises(BenchcastError, match=r"fio.csv: line 2: rw randread, bs 3K, metric lat_us: rows of 1 "
                                             r"device\(s\) \(nand_flash\), fewer than screen.min_devices \(3\): no "
                                             r"fit can use them$"):
        preflight.check_fio_figures(tmp_path / "fio.csv", 3)


def test_an_imported_device_no_row_names_is_refused_naming_it():
    devices = {"dram": {"kind": "imported"}, "optane": {"kind": "imported"}, "ram": {"kind": "tmpfs"}}
    with pytest.raises(BenchcastError) as exc:
        preflight.check_imported_devices("config: studies.s", devices, {"dram", "other"})
    assert str(exc.value) == ("config: studies.s.devices.optane: kind imported, but no file the study imports has a "
                              "row for it (its rows name dram, other)")
    with pytest.raises(BenchcastError, match=r"\(its rows name no device\)$"):
        preflight.check_imported_devices("config: studies.s", devices, set())
    preflight.check_imported_devices("config: studies.s", devices, {"dram", "optane"})  # a measured device needs none
