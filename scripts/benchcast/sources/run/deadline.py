"""How long a benchmark process may run: its deadline, from what it was asked to do.

A process that stops answering (a fio whose job process was killed under it, a device that no longer
completes requests, a JVM stuck) would otherwise hold its job, and the run, for ever. Each benchmark
process gets ``margin_s + factor x`` what it was asked to do (the run's ``deadline`` settings,
``config/schema.yaml`` ``$defs/deadline``, handed to the jobs in the environment with the shield:
:func:`benchcast.sources.run.quality.guard`; the schema's defaults where a job runs outside a workflow):

* fio (:func:`fio_seconds`): its ramp time and runtime, and its files laid out at ``layout_mb_s``;
* a YCSB phase (:func:`ycsb_seconds`): a run's ``maxexecutiontime``, or its operations (a load's
  records) at ``ops_per_s``.

Past it the process and everything it started are stopped and the job fails in one line naming the
process, the device and the deadline (:func:`expired`). The out-of-core programs have their source's
``timeout``, a MariaDB server's start and stop their own.
"""

from __future__ import annotations

from ... import config
from ...core.units import size_text


def policy() -> dict:
    """The deadline settings this job was handed (:func:`benchcast.sources.run.quality.guard`), else the
    schema's defaults."""
    from . import quality

    return quality.guard().get("deadline") or config.defaults("deadline")


def _seconds(asked: float, p: dict) -> float:
    return float(p["margin_s"]) + float(p["factor"]) * float(asked)


def fio_seconds(cell: dict, p: dict) -> tuple[float, str]:
    """(deadline in seconds, how it was made) of one fio run of ``cell`` (ramp_time, runtime, size,
    numjobs): the files of its jobs laid out at ``layout_mb_s``, then ramp and runtime."""
    layout = float(cell["size"]) * int(cell.get("numjobs") or 1) / (float(p["layout_mb_s"]) * 1e6)
    asked = float(cell["ramp_time"]) + float(cell["runtime"]) + layout
    how = (f"{p['factor']:g} x (ramp {cell['ramp_time']} s + runtime {cell['runtime']} s + "
           f"{size_text(int(cell['size']) * int(cell.get('numjobs') or 1))} laid out at {p['layout_mb_s']:g} MB/s)"
           f" + {p['margin_s']:g} s")
    return _seconds(asked, p), how


def ycsb_seconds(p: dict, *, seconds: float | None = None, operations: float | None = None) -> tuple[float, str]:
    """(deadline in seconds, how it was made) of a YCSB phase: its ``maxexecutiontime`` (``seconds``)
    where it has one, else its ``operations`` (a load's records) at ``ops_per_s``."""
    if seconds:
        asked, what = float(seconds), f"{seconds:g} s"
    else:
        asked = float(operations or 0) / float(p["ops_per_s"])
        what = f"{int(operations or 0)} operations at {p['ops_per_s']:g}/s"
    return _seconds(asked, p), f"{p['factor']:g} x {what} + {p['margin_s']:g} s"


def ycsb_phase(timeout: float | None, **asked) -> tuple[float, str]:
    """A YCSB phase's deadline: ``timeout`` where the caller gives one, else what it was asked to do
    (:func:`ycsb_seconds` under :func:`policy`)."""
    return (float(timeout), "given") if timeout is not None else ycsb_seconds(policy(), **asked)


def expired(process: str, seconds: float, how: str) -> str:
    """The one line of a process stopped at its deadline (the caller names the device and the job)."""
    return f"{process} did not finish within its deadline of {seconds:.0f} s ({how}): stopped, with all it started"
