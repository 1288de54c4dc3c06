"""Sizes as fio and configs write them. Light: no pandas, so device tools start fast."""

from __future__ import annotations

import functools
import math
import numbers
import re

from .. import BenchcastError


_BINARY = (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10))
_DECIMAL = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3))


def size_label(nbytes: int, decimal: bool = False) -> str:
    """A size's label, the largest unit that divides it: binary as fio writes it (1024 -> '1K',
    65536 -> '64K', 1048576 -> '1M'), or with ``decimal`` as data sizes are written (16e9 ->
    '16GB', 2.5e8 -> '250MB'); a size no unit divides stays bytes ('1000', '0')."""
    n = int(nbytes)
    for suffix, mult in (_DECIMAL if decimal else _BINARY):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def size_text(nbytes) -> str:
    """A data size as people write it, for tables and tick labels: '16 GB' where a decimal unit
    divides it, else '128 MiB' where a binary one does, else '1000 B'; '' for none (0, NaN)."""
    try:
        n = int(nbytes)
    except (TypeError, ValueError, OverflowError):
        return ""
    if n <= 0:
        return ""
    label = size_label(n, decimal=True)
    if label != str(n):
        return f"{label[:-2]} {label[-2:]}"
    label = size_label(n)
    return f"{label[:-1]} {label[-1]}iB" if label != str(n) else f"{n} B"


#: Time units a person reads, from the records' microseconds up: (factor, name).
_TIMES = ((1e6, "s"), (1e3, "ms"), (1.0, "us"))
#: Rates and bandwidths likewise, from the records' ops/s and B/s.
_RATES = {"ops/s": ((1e6, "M ops/s"), (1e3, "K ops/s"), (1.0, "ops/s")),
          "B/s": ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1.0, "B/s"))}


def quantity_text(value, unit: str, digits: int = 3) -> str:
    """A value in a record unit as a person reads it, ``digits`` significant digits in the largest
    unit it reaches: 240000 us -> '240 ms', 2.4e9 B/s -> '2.4 GB/s', 8.9 us -> '8.9 us'; a unit
    other than us, ops/s and B/s is kept ('12.5 %'); '' for no number."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(v):
        return ""
    scale = _TIMES if unit == "us" else _RATES.get(unit, ((1.0, unit),))
    factor, name = next(((f, n) for f, n in scale if abs(v) >= f), scale[-1])
    return f"{float(f'{v / factor:.{digits}g}'):g} {name}"


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


#: A size as text: a plain decimal number (digits, at most one point), optional blanks, its unit.
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*", re.ASCII)


def parse_size(text, what: str = "size", whole: bool = False) -> int:
    """Parse '64K', '4KiB', '2GB', '1.5G', 4096 into bytes.

    K/M/G/T and KiB/MiB/GiB/TiB are binary (as fio reads them); KB/MB/GB/TB are decimal. A fraction
    of a byte is rounded (as fio does), or with ``whole`` refused, as is a size of 8 EiB or more
    (a record's 64-bit column): the config's sizes.
    """
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        return int(text)
    if isinstance(text, float) and text.is_integer():
        return int(text)
    m = _SIZE.fullmatch(str(text))  # one plain decimal number and a unit: no '1_0K', '1e3K', 'infK', '1 0K'
    if m is None or m.group(2).upper() not in _SUFFIX:
        raise BenchcastError(f"{what}: not a size: {text!r} (use e.g. 4K, 64KiB, 2GB, 4096)")
    nbytes = float(m.group(1)) * _SUFFIX[m.group(2).upper()]
    if whole and (abs(nbytes - round(nbytes)) > 1e-6 * max(nbytes, 1.0) or nbytes >= 2**63):
        raise BenchcastError(f"{what}: {text!r} is not a whole number of bytes below 8 EiB")
    return int(round(nbytes))


# --------------------------------------------------------------------------- figures with units

#: The canonical record unit of each kind of figure, and what a figure's metric measures.
CANONICAL = {"time": "us", "bandwidth": "B/s", "rate": "ops/s"}
#: The record metric that carries a run's latency histogram (records' ``hdr`` column; its value is
#: the operation count, not a latency).
HISTOGRAM_METRIC = "lat_hdr"


def metric_kind(metric: str) -> str:
    """What a metric measures: ``time`` (lat_mean, clat_p99 ...), ``bandwidth`` (bw) or ``rate``
    (iops, throughput)."""
    if metric == "bw" or metric.startswith("bw_"):
        return "bandwidth"
    if metric in ("iops", "throughput") or metric.startswith("iops_"):
        return "rate"
    return "time"


def _is_figure(metric: str) -> bool:
    """Latencies (lat_*, clat_*, slat_*), bandwidths and rates: the metrics with a canonical unit
    (counts such as ``ops``, and YCSB's ``runtime`` in ms, keep theirs)."""
    if metric == HISTOGRAM_METRIC:
        return False
    return metric.split("_")[0] in ("lat", "clat", "slat", "bw", "iops") or metric == "throughput"


def canonical_factors(pairs) -> dict[tuple[str, str], tuple[float, str]]:
    """For (metric, unit) pairs of records: the factor to the metric's canonical unit
    (:data:`CANONICAL`) and that unit, for the pairs that are not in it already (``MB/s`` bandwidth
    -> ``B/s`` x 1e6, ``ms`` latency -> ``us`` x 1000). Pairs whose unit is no known unit of the
    metric's kind are left as they are."""
    out = {}
    for metric, unit in pairs:
        if not _is_figure(metric):
            continue
        kind = metric_kind(metric)
        target = CANONICAL[kind]
        if unit == target or not unit:
            continue
        import pint  # only for a unit to convert: the import alone costs a measuring job 0.2 s

        ureg = _registry()
        try:
            q = ureg.Quantity(1.0, ureg.Unit(unit))
            if q.check(_DIMENSION[kind]):
                out[(metric, unit)] = (float(q.to(ureg.Unit(target)).magnitude), target)
        except (pint.errors.PintError, ValueError, AttributeError, TypeError):
            continue
    return out


_REGISTRY = None


def _registry():
    global _REGISTRY
    if _REGISTRY is None:
        import pint

        # pint counts bits as dimensionless, so MB/s and IOPS would both be 1/time: give information
        # its own dimension, so that a bandwidth and a rate cannot be mistaken for each other
        ureg = pint.UnitRegistry(on_redefinition="ignore")
        ureg.define("bit = [information]")
        ureg.define("byte = 8 * bit = B = octet")
        ureg.define("IOPS = 1 / second = iops")
        ureg.define("ops = 1")  # an operation is a count: ops/s is a rate
        _REGISTRY = ureg
    return _REGISTRY


_DIMENSION = {"time": "[time]", "bandwidth": "[information] / [time]", "rate": "1 / [time]"}


def figure_value(value, metric: str, unit: str | None = None, where: str = "value") -> float:
    """A figure in ``unit`` (default: the canonical unit of its metric, :data:`CANONICAL`). A number
    is taken as already in that unit; a string with a unit ("413 MB/s", "8.9 us", "550000 IOPS",
    "10 us") is converted. A unit that does not fit the metric, or text that is no quantity, is a
    :class:`BenchcastError` naming ``where``."""
    x = _figure(value, metric, unit, where)
    if not math.isfinite(x) or x <= 0:
        raise BenchcastError(f"{where}: {value!r} is not a finite number above 0")
    return x


#: A figure as text: one plain decimal number (an optional sign and exponent; nan and inf are read, for
#: the finite check to name), optional blanks, and its unit (words of letters joined by / or *) or none.
_FIGURE = re.compile(r"\s*([+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|inf|infinity))"
                     r"\s*((?:[^\W\d_]+(?:\s*[/*]\s*[^\W\d_]+)*)?)\s*", re.IGNORECASE)


def _figure(value, metric: str, unit: str | None, where: str) -> float:
    kind = metric_kind(metric)
    unit = unit or CANONICAL[kind]
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if "," in str(value):  # "8,9 us": a decimal comma or a thousands separator, never guessed
        raise BenchcastError(f"{where}: {value!r} has a comma: write the number with a decimal point "
                             f"and no separators ('8.9 us', '550000 IOPS')")
    m = _FIGURE.fullmatch(str(value))  # no '5_0 us', '0x32', '1/0 us', '50 60 us', '50 us!'
    if m is None:
        raise BenchcastError(f"{where}: {value!r} is not a number with a unit (e.g. '8.9 us', '413 MB/s')")
    number, written = float(m.group(1)), m.group(2)
    if not written:
        return number  # a plain number written as text: already in the study's unit
    import pint

    ureg = _registry()
    try:
        q = ureg.Quantity(number, ureg.Unit(written))
    except (pint.errors.PintError, ValueError, AttributeError, TypeError, ArithmeticError):
        raise BenchcastError(f"{where}: {value!r}: {written!r} is not a unit (e.g. '8.9 us', '413 MB/s')") from None
    if not q.check(_DIMENSION[kind]):
        raise BenchcastError(f"{where}: {value!r} is not a {kind} (metric {metric} needs e.g. "
                             f"{ {'time': 'us', 'bandwidth': 'MB/s', 'rate': 'IOPS'}[kind]})")
    try:
        return float(q.to(ureg.Unit(unit)).magnitude)
    except pint.errors.PintError:
        raise BenchcastError(f"{where}: cannot express {value!r} in {unit}") from None


# --------------------------------------------------------------------------- conversions


@functools.lru_cache(maxsize=None)
def _scale(unit: str, target: str) -> tuple[float, bool]:
    """(k, divide): a value in ``unit`` is ``value * k`` in ``target``, or ``value / k`` where
    ``divide`` (the factor is below 1). pint gives the factor; a whole factor or inverse is taken
    whole, so a conversion gives the float the hand-written one would (x / 1000, x * 1024). Sizes
    (GB to B) are the config's (:func:`parse_size`: K/M/G/T binary, KB/MB/GB/TB decimal)."""
    import pint

    if unit.upper() in _SUFFIX and target.upper() in _SUFFIX:
        f = _SUFFIX[unit.upper()] / _SUFFIX[target.upper()]
    else:
        try:
            f = float(_registry().Quantity(1.0, unit).to(target).magnitude)
        except (pint.errors.PintError, ValueError, AttributeError, TypeError):
            raise BenchcastError(f"cannot convert {unit} to {target}") from None
    k, divide = (f, False) if f >= 1 else (1.0 / f, True)
    return (float(round(k)) if abs(k - round(k)) <= 1e-9 * k else k), divide


def convert(value, unit: str, target: str):
    """``value`` (a number, an array or a Series) in ``unit`` expressed in ``target``: ``ns`` to
    ``us``, ``KiB/s`` to ``B/s``, ``GB`` to ``byte``, ``s`` to ``ms`` ..."""
    k, divide = _scale(unit, target)
    return value / k if divide else value * k


def time_per_op(rate, unit: str = "us"):
    """The time one operation takes (in ``unit``) at ``rate`` operations per second."""
    k, divide = _scale("s", unit)
    return (1.0 / k if divide else k) / rate
