"""What the benchmarks' workloads mean, for the sources and the analysis alike. Light: no pandas.

* fio ``rw`` -> the operation it measures (:func:`rw_op`); mixed workloads (``randrw``) measure both,
  so their figures name their op; ``append`` is fio's ``rw=write`` with ``file_append=1``.
* YCSB workload name -> CoreWorkload properties (:data:`WORKLOADS`: the paper's four read/update
  mixes and YCSB's core workloads ``a`` .. ``f``), and the read fraction of each
  (:func:`read_fractions`), a workload variable of the multiple regressions.
"""

from __future__ import annotations

from .units import size_label

#: fio rw values whose op follows from the name; other (mixed) workloads measure several ops.
RW_OP = {"randread": "read", "read": "read", "randwrite": "write", "write": "write", "append": "write"}

#: The workload name of fio's sequential writes past the end of the file (rw=write, file_append=1):
#: what a log does, each append growing the file (with fdatasync, a journal commit per sync).
APPEND = "append"


def rw_op(workload: str) -> str | None:
    """The op a fio rw measures: 'randread' -> 'read'; None for a mixed workload ('randrw')."""
    return RW_OP.get(workload)


_MIXES = ("readproportion", "updateproportion", "insertproportion", "scanproportion",
          "readmodifywriteproportion")


def _mix(read=0.0, update=0.0, insert=0.0, scan=0.0, rmw=0.0, dist="zipfian", **extra) -> dict:
    props = dict(zip(_MIXES, (read, update, insert, scan, rmw)))
    props["requestdistribution"] = dist
    props.update(extra)
    return {k: str(v) for k, v in props.items()}


#: Workload name -> CoreWorkload properties. Every proportion is explicit (CoreWorkload's own
#: defaults are read 0.95 / update 0.05).
WORKLOADS: dict[str, dict[str, str]] = {
    # Soga et al. 2018: read/update mixes, zipfian (the paper's Table 3)
    "write-only": _mix(read=0, update=1),
    "write-heavy": _mix(read=0.5, update=0.5),
    "read-heavy": _mix(read=0.95, update=0.05),
    "read-only": _mix(read=1, update=0),
    # YCSB core workloads (workloads/workloada .. workloadf of YCSB 0.17.0)
    "a": _mix(read=0.5, update=0.5),
    "b": _mix(read=0.95, update=0.05),
    "c": _mix(read=1),
    "d": _mix(read=0.95, insert=0.05, dist="latest"),
    "e": _mix(scan=0.95, insert=0.05, maxscanlength=100, scanlengthdistribution="uniform"),
    "f": _mix(read=0.5, rmw=0.5),
}
PAPER_WORKLOADS = ("write-only", "write-heavy", "read-heavy", "read-only")
CORE_WORKLOADS = ("a", "b", "c", "d", "e", "f")


def read_fractions() -> dict[str, float]:
    """Read fraction of each YCSB workload (reads and scans over all operations)."""
    return {
        name: float(props.get("readproportion", 0)) + float(props.get("scanproportion", 0))
        for name, props in WORKLOADS.items()
    }


def feature_name(workload: str, block_size: int, op: str, metric: str, iodepth: int,
                 engine: str | None, numjobs: int, setting: str = "") -> str:
    """'randwrite_64K_lat_mean'. The op is named where the workload does not say it: a mixed
    workload ('randrw_4K_read_lat_mean') or the sync calls of a logging job
    ('write_4K_sync_lat_mean', fio with fdatasync=1); an iodepth above 1 is named too
    ('randread_4K_qd32_lat_mean'), numjobs above 1 after it ('randread_4K_qd4_j8_lat_mean',
    'randread_4K_j8_lat_mean'), an ioengine where the study's grid varies it
    ('randread_4K_qd32_libaio_lat_mean') and, where one device has several cells of a figure that
    differ in other options, those (``setting``: 'randread_4K_direct0_lat_mean')."""
    qd = f"_qd{int(iodepth)}" if int(iodepth or 1) > 1 else ""  # the one place a name is made
    jobs = f"_j{int(numjobs)}" if int(numjobs or 1) > 1 else ""
    eng = f"_{engine}" if engine else ""
    more = f"_{setting}" if setting else ""
    stem = f"{workload}_{size_label(block_size)}{qd}{jobs}{eng}{more}"
    if rw_op(workload) == op:
        return f"{stem}_{metric}"
    return f"{stem}_{op}_{metric}"
