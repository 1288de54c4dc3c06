"""Tests of benchcast.core.units: sizes as fio and configs write them."""
import pytest

from benchcast import BenchcastError
from benchcast.core import units


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



def test_size_text_as_people_write_sizes():
    assert [units.size_text(v) for v in (16e9, 2e6, 128 * 2**20, 1000, 1001, 0, float("nan"))] == [
        "16 GB", "2 MB", "128 MiB", "1 KB", "1001 B", "", ""]

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


@pytest.mark.parametrize("value, metric, expected", [
    ("8.9 us", "lat_mean", 8.9), ("413 MB/s", "bw", 413e6), ("550000 IOPS", "iops", 550000.0), ("1e3 ns", "lat_mean", 1.0),
    ("50us", "lat_mean", 50.0), ("50", "lat_mean", 50.0), (" 8.9  us ", "lat_mean", 8.9), ("1E-3 s", "lat_mean", 1000.0),
    (".5 us", "lat_mean", 0.5), ("1 µs", "lat_mean", 1.0), ("550000 ops/s", "iops", 550000.0),
])
def test_a_card_value_is_one_plain_number_and_a_unit(value, metric, expected):
    """What the schema promises: a number with its unit, or a plain number already in the study's unit."""
    assert units.figure_value(value, metric) == pytest.approx(expected)


@pytest.mark.parametrize("value, message", [
    ("5_0 us", "is not a number with a unit"),  # Python's digit separator, which pint read as 50
    ("0x32", "is not a number with a unit"), ("0x32 us", "is not a number with a unit"),
    ("1/0 us", "is not a number with a unit"), ("50/2 us", "is not a number with a unit"),
    ("50 60 us", "is not a number with a unit"), ("50 us 60", "is not a number with a unit"),
    ("50 us!", "is not a number with a unit"), ("2*25 us", "is not a number with a unit"),
    ("50 us us", "is not a number with a unit"), ("us", "is not a number with a unit"),
    ("", "is not a number with a unit"), ("50e us", "is not a number with a unit"),
    ("50 xyz", "'xyz' is not a unit"), ("50 ops", "is not a time"), (True, "is not a number with a unit"),
    ("nan us", "is not a finite number above 0"), ("-inf", "is not a finite number above 0"),
])
def test_a_card_value_written_loosely_is_refused_in_one_line(value, message):
    with pytest.raises(BenchcastError) as exc:
        units.figure_value(value, "lat_mean", where="targets.T.figures[0].value")
    assert str(exc.value).startswith(f"targets.T.figures[0].value: {value!r}") and message in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("text", ["1_0K", "1e3K", "infK", "nan", "1 0K", "0x10K", "4KX", "4K4", "4+K", "1/2K",
                                  float("nan"), float("inf"), "4..0K", "４K"])
def test_a_size_written_loosely_is_refused_in_one_line(text):
    """One plain decimal number and its unit, as the schema's size pattern: what float() or pint would
    also read (a digit separator, an exponent, inf, nan, full-width digits) is no size."""
    with pytest.raises(BenchcastError) as exc:
        units.parse_size(text, what="fio.csv: line 2: bs")
    assert str(exc.value) == f"fio.csv: line 2: bs: not a size: {text!r} (use e.g. 4K, 64KiB, 2GB, 4096)"
