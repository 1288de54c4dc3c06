"""Sizes as fio and configs write them. Light: no pandas, so device tools start fast."""

from __future__ import annotations

import numbers

from . import BenchcastError


def size_label(nbytes: int) -> str:
    """Binary size label as fio writes it: 1024 -> '1K', 65536 -> '64K', 1048576 -> '1M'."""
    n = int(nbytes)
    for suffix, mult in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


_SUFFIX = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "KIB": 1 << 10,
    "M": 1 << 20,
    "MIB": 1 << 20,
    "G": 1 << 30,
    "GIB": 1 << 30,
    "T": 1 << 40,
    "TIB": 1 << 40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}


def parse_size(text, what: str = "size") -> int:
    """Parse '64K', '4KiB', '2GB', '1.5G', 4096 into bytes.

    K/M/G/T and KiB/MiB/GiB/TiB are binary (as fio reads them); KB/MB/GB/TB are decimal.
    """
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        return int(text)
    if isinstance(text, float) and text.is_integer():
        return int(text)
    s = str(text).strip().upper().replace(" ", "")
    num = s.rstrip("KMGTIB")
    suffix = s[len(num):]
    try:
        value = float(num)
        mult = _SUFFIX[suffix]
    except (ValueError, KeyError):
        raise BenchcastError(f"{what}: not a size: {text!r} (use e.g. 4K, 64KiB, 2GB, 4096)") from None
    if value < 0:
        raise BenchcastError(f"{what}: negative size {text!r}")
    return int(round(value * mult))
