"""A measured source's settings as frozen objects, one per concern: what the fio grid, a YCSB job
and an out-of-core job read, built from a source the schema validated (its defaults filled in,
:func:`benchcast.config.check_source`), sizes already in bytes. Code reads these; it never supplies
a default of its own for a key the schema has (tests/test_defaults.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import config
from ..core.units import parse_size

#: The fio options a cell is made of (its id hashes them), and those a device may override.
FIO_OPTIONS = ("ioengine", "iodepth", "numjobs", "direct", "size", "runtime", "ramp_time", "extra")
FIO_OVERRIDES = (*FIO_OPTIONS, "rwmixread")


def memory_limit(source: dict) -> int | None:
    """The memory cgroup limit (bytes) of a YCSB or out-of-core source, None without one: the one
    place a source's ``memory_limit`` is read."""
    limit = source.get("memory_limit")
    return parse_size(limit, what="memory_limit") if limit else None


#: RocksDBClient.java's ``rocksdb.blockcachesize`` when a source sets none (tests/test_settings.py
#: reads it there).
ROCKSDB_BLOCK_CACHE = 8388608


def memory_lines(sources: dict) -> dict:
    """The memory each measured source's data could be cached in (bytes), the line its data sizes
    cross (:mod:`benchcast.screening.sizes`' knee, the charts' memory line): record source label
    (``ycsb:NAME``) -> its ``memory_limit``; ``ycsb:NAME/ENGINE`` -> an engine cache that direct
    I/O makes the only one of the data: MariaDB's buffer pool (O_DIRECT, InnoDB's default flush
    method) and RocksDB's block cache with ``rocksdb.directio: true``. ``sources``: a validated
    study's sources (defaults filled)."""
    out = {}
    for name, src in sources.items():
        label = f"{src['type']}:{name}"
        if src["type"] in ("ycsb", "ooc") and memory_limit(src):
            out[label] = memory_limit(src)
        if src["type"] != "ycsb":
            continue
        ys = ycsb(src, name)
        flush = str((ys.mariadb.get("options") or {}).get("innodb-flush-method", "O_DIRECT"))
        if "mariadb" in src["engines"] and flush.upper().startswith("O_DIRECT"):
            out[f"{label}/mariadb"] = parse_size(ys.mariadb["buffer_pool_size"], what="buffer_pool_size")
        if "rocksdb" in src["engines"] and ys.direct_reads:
            out[f"{label}/rocksdb"] = parse_size(ys.properties.get("rocksdb.blockcachesize", ROCKSDB_BLOCK_CACHE),
                                                 what="rocksdb.blockcachesize")
    return out


def _sizes(values, what: str) -> tuple[int, ...]:
    return tuple(parse_size(v, what=what) for v in values)


@dataclass(frozen=True)
class FioSettings:
    """A fio source: its grid (rw x block sizes less ``exclude``), the options of its cells (the
    source's own, then ``per_kind`` by the device's kind, then ``per_device``) and its repeats."""

    name: str
    rw: tuple[str, ...]
    block_sizes: tuple[int, ...]
    exclude: tuple[dict, ...]
    options: dict
    per_kind: dict
    per_device: dict
    devices: tuple[str, ...] | None
    repeats: int


def fio(source: dict, name: str = "fio") -> FioSettings:
    """The settings of a fio source (validated here: a config's source or one given alone)."""
    src = config.check_source(source, name)
    devices = src.get("devices")
    return FioSettings(
        name=name, rw=tuple(src["rw"]),
        block_sizes=_sizes(src["block_sizes"], f"source {name}: block_sizes"),
        exclude=tuple(src["exclude"]), options={k: src[k] for k in FIO_OVERRIDES},
        per_kind=src["per_kind"], per_device=src["per_device"],
        devices=None if devices is None else tuple(devices), repeats=src["repeats"])


@dataclass(frozen=True)
class YcsbSettings:
    """A YCSB source as one job runs it: the workloads in order at one load, the record shape, how
    long each run lasts, the database's settings. ``properties`` are strings as YCSB reads them."""

    workloads: tuple[str, ...]
    threads: int
    operationcount: int | None
    maxexecutiontime: int | None
    reload_per_workload: bool
    fast_load: bool
    fieldcount: int
    fieldlength: int
    properties: dict
    mariadb: dict
    memory_limit: int | None

    @property
    def direct_reads(self) -> bool:
        """RocksDB reads its data with O_DIRECT (``rocksdb.directio``)."""
        return self.properties.get("rocksdb.directio") == "true"


def ycsb(source: dict, name: str = "ycsb") -> YcsbSettings:
    """The settings of a YCSB source (validated here: a config's source or one given alone)."""
    src = config.check_source(source, name)
    props = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (src.get("properties") or {}).items()}
    return YcsbSettings(
        workloads=tuple(src["workloads"]), threads=src["threads"], operationcount=src.get("operationcount"),
        maxexecutiontime=src.get("maxexecutiontime"), reload_per_workload=src["reload_per_workload"],
        fast_load=src["fast_load"], fieldcount=src["fieldcount"], fieldlength=src["fieldlength"],
        properties=props, mariadb=src["mariadb"], memory_limit=memory_limit(src))


@dataclass(frozen=True)
class OocSettings:
    """An out-of-core source as one job runs it (sizes in bytes; ``swap_size`` None: twice the
    largest working set)."""

    programs: tuple[str, ...]
    working_sets: tuple[int, ...]
    memory_limit: int
    passes: int
    swap_size: int | None
    swap_priority: int
    existing_swap: str
    timeout: float


def ooc(source: dict, name: str = "ooc") -> OocSettings:
    """The settings of an out-of-core source (validated here: a config's source or one given alone)."""
    src = config.check_source(source, name)
    swap = src.get("swap_size")
    return OocSettings(
        programs=tuple(src["programs"]), working_sets=_sizes(src["working_sets"], "working_sets"),
        memory_limit=memory_limit(src), passes=src["passes"],
        swap_size=parse_size(swap, what="swap_size") if swap else None, swap_priority=src["swap_priority"],
        existing_swap=src["existing_swap"], timeout=src["timeout"])


def match_rule(row: dict, pairing) -> int:
    """Index of the first pairing rule whose ``when`` matches the series, -1 if none."""
    for i, rule in enumerate(pairing or []):
        if all(str(row.get(k)) == str(v) for k, v in rule["when"].items()):
            return i
    return -1
