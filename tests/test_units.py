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
