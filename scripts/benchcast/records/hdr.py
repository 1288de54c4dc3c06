"""Latency histograms (HdrHistogram): YCSB's histogram logs in, percentiles of merged repeats out.

YCSB with ``hdrhistogram.fileoutput=true`` writes one HdrHistogram interval log per operation
(``<path><OP>.hdr``; the operation is named in the log's own ``#[Logging for: OP]`` comment). The
intervals of a log add up to the run's whole histogram, kept in the records as one compressed,
base64 string (:func:`encode`). Adding the histograms of repeats gives the distribution of every
operation of every run, and its percentile is a true percentile of all runs, which a mean of per-run
percentiles is not.

Percentiles follow Java HdrHistogram's rule (the smallest recorded value whose cumulative count
reaches ``ceil(p/100 * total)``, reported as the highest value equivalent to it), so a single run's
percentile is exactly the figure YCSB prints; the Python package rounds the count instead.
Values are microseconds, recorded from 1 us to one hour with 3 significant digits (YCSB's settings).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from .. import BenchcastError

LOWEST, HIGHEST, DIGITS = 1, 3_600_000_000, 3
_LOGGING_FOR = re.compile(r"^#\[Logging for: (.+)\]\s*$")


def empty() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def read_log(path) -> tuple[str, HdrHistogram]:
    """The operation a YCSB histogram log is for, and the sum of its interval histograms."""
    path = Path(path)
    try:
        head = path.read_text(errors="replace").splitlines()[:1]
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such histogram log") from None
    m = _LOGGING_FOR.match(head[0]) if head else None
    if not m:
        raise BenchcastError(f"{path}: not a YCSB histogram log (no '#[Logging for: OP]' first line)")
    total = empty()
    reader = HistogramLogReader(str(path), empty())
    try:
        while True:
            hist = reader.get_next_interval_histogram()
            if hist is None:
                break
            total.add(hist)
    except Exception as exc:  # the decoder raises its own and zlib/base64 errors
        raise BenchcastError(f"{path}: malformed histogram interval ({type(exc).__name__})") from None
    finally:
        reader.close()
    return m.group(1).strip(), total


def encode(hist: HdrHistogram) -> str:
    """The histogram as HdrHistogram's compressed, base64 text (V2 encoding)."""
    return hist.encode().decode("ascii")


def decode(text: str, where: str) -> HdrHistogram:
    try:
        return HdrHistogram.decode(str(text).encode("ascii"))
    except Exception as exc:
        raise BenchcastError(f"{where}: malformed encoded histogram ({type(exc).__name__})") from None


def merge(encoded, where: str) -> HdrHistogram:
    """The sum of encoded histograms (the repeats of one measurement)."""
    total = empty()
    for text in encoded:
        total.add(decode(text, where))
    return total


def percentiles(hist: HdrHistogram, ps) -> list[float]:
    """The values at percentiles ``ps`` (0 < p <= 100) by Java HdrHistogram's rule, in one pass;
    NaN for an empty histogram."""
    total = hist.get_total_count()
    if total == 0:
        return [math.nan] * len(ps)
    wanted = [max(1, math.ceil(math.nextafter(min(max(float(p), 0.0), 100.0), -math.inf) / 100.0 * total))
              for p in ps]
    order = sorted(range(len(ps)), key=wanted.__getitem__)
    out = [float(hist.get_max_value())] * len(ps)
    seen, j = 0, 0
    for item in hist.get_recorded_iterator():
        seen += item.count_added_in_this_iter_step
        while j < len(order) and seen >= wanted[order[j]]:
            out[order[j]] = float(hist.get_highest_equivalent_value(item.value_iterated_to))
            j += 1
        if j == len(order):
            break
    return out
