"""Tests of benchcast.units: sizes as fio and configs write them."""
import pytest

from benchcast import BenchcastError, units


@pytest.mark.parametrize("text, nbytes", [
    ("4K", 4096), ("64KiB", 65536), ("1M", 1 << 20), ("2GB", 2 * 10**9), ("1.5G", 3 << 29), (4096, 4096),
    ("512 B", 512), (8.0, 8), ("16gb", 16 * 10**9),
])
def test_parse_size_binary_and_decimal_units(text, nbytes):
    assert units.parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["lots", "4X", "", "-4K", "K"])
def test_parse_size_refuses_naming_the_key(text):
    with pytest.raises(BenchcastError, match=r"^features.block_sizes: "):
        units.parse_size(text, what="features.block_sizes")


def test_size_label_round_trips_fio_sizes():
    for n in (1024, 4096, 65536, 262144, 1 << 20, 3 << 30, 1 << 40):
        assert units.parse_size(units.size_label(n)) == n
    assert units.size_label(65536) == "64K" and units.size_label(1000) == "1000"


@pytest.mark.parametrize("value, metric, unit, expected", [
    ("8.9 us", "lat_mean", None, 8.9), ("0.5 ms", "clat_p99", "us", 500.0), ("413 MB/s", "bw", "B/s", 413e6),
    ("413 MB/s", "bw", "MB/s", 413.0), ("1 GiB/s", "bw", "MB/s", 1073.741824), ("550000 IOPS", "iops", None, 550000.0),
    ("550 kIOPS", "iops", "ops/s", 550000.0), (12.5, "lat_mean", "us", 12.5), ("12.5", "bw", "B/s", 12.5),
])
def test_figure_values_with_units_convert_to_the_study_unit(value, metric, unit, expected):
    assert units.figure_value(value, metric, unit) == pytest.approx(expected)


@pytest.mark.parametrize("value, metric, message", [
    ("413 MB/s", "lat_mean", "is not a time"), ("8.9 us", "bw", "is not a bandwidth"),
    ("10 us", "iops", "is not a rate"), ("fast", "lat_mean", "not a number with a unit"),
])
def test_figure_values_with_the_wrong_unit_are_refused_naming_the_key(value, metric, message):
    with pytest.raises(BenchcastError, match=rf"^targets.T.figures\[0\].value: .*{message}"):
        units.figure_value(value, metric, where="targets.T.figures[0].value")
