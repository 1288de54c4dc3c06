import pytest

from benchcast import BenchcastError, importers
from analysis_util import ROOT

DEVICES = ["nand_flash", "3d_xpoint", "dram"]
FIO = (ROOT / "resources/soga2018/fio.csv").read_text()
APP = (ROOT / "resources/soga2018/ycsb_mysql.csv").read_text()


def run(tmp_path, fio=FIO, app=APP, devices=DEVICES):
    (tmp_path / "fio.csv").write_text(fio)
    (tmp_path / "app.csv").write_text(app)
    return importers.soga2018(tmp_path / "fio.csv", tmp_path / "app.csv", "s", "import:x", devices=devices)


def test_import_shape(tmp_path):
    recs = run(tmp_path)
    assert len(recs) == 60 + 126
    fio = recs[recs.benchmark == "fio"]
    assert set(fio["block_size"]) == {1024, 4096, 16384, 65536, 262144}
    assert set(fio["metric"]) == {"lat_mean", "bw"} and set(fio["unit"]) == {"us", "MB/s"}
    app = recs[recs.benchmark == "ycsb"]
    assert app["data_size"].max() == 128 * 10**9


def test_missing_column_names_file(tmp_path):
    with pytest.raises(BenchcastError, match=r"fio.csv: missing column\(s\) value"):
        run(tmp_path, fio=FIO.replace("device,rw,bs,metric,value", "device,rw,bs,metric,val"))


def test_non_numeric_value_names_file_and_row(tmp_path):
    lines = APP.splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ",fast"
    with pytest.raises(BenchcastError, match=r"app.csv: row 6: column latency_us is not a number: 'fast'"):
        run(tmp_path, app="\n".join(lines) + "\n")


def test_unknown_device_names_file_and_row(tmp_path):
    lines = FIO.splitlines()
    lines[3] = lines[3].replace("dram", "optane_pmem")
    with pytest.raises(BenchcastError, match=r"fio.csv: row 4: unknown device 'optane_pmem'"):
        run(tmp_path, fio="\n".join(lines) + "\n")


def test_bad_block_size_and_metric(tmp_path):
    with pytest.raises(BenchcastError, match=r"fio.csv: row 2: bs: not a size: '1Q'"):
        run(tmp_path, fio=FIO.replace("randread,1K,lat_us", "randread,1Q,lat_us", 1))
    with pytest.raises(BenchcastError, match=r"fio.csv: row 2: unknown metric 'lat_ms'"):
        run(tmp_path, fio=FIO.replace("randread,1K,lat_us", "randread,1K,lat_ms", 1))
