"""The names the measuring sources write into records and the analysis reads back: record ops,
benchmark names, out-of-core modes and programs, YCSB engines. Light: no imports.

They live here, below every layer, so that the analysis (records, aggregate, features, fits,
screening, validation, prediction, report) reads them without importing :mod:`benchcast.sources`,
the code that measures; the sources take them from here too (their ``OP``, ``MODES`` ... are these)."""

from __future__ import annotations

#: The op of the records of what an application run did to the device (:mod:`benchcast.records.blockio`).
DEVICE_OP = "device"
#: The op of the records of what paging did during an out-of-core run (:mod:`benchcast.sources.run.paging`).
PAGING_OP = "paging"

#: The benchmark name of the out-of-core programs' records (:mod:`benchcast.sources.run.ooc`).
OOC_BENCHMARK = "ooc"
#: The out-of-core programs and the kernels each one times.
OOC_PROGRAMS = {"stream": ["copy", "scale", "add", "triad"], "stencil": ["stencil5"], "himeno": ["himeno"]}
#: The out-of-core modes (not a schema default: every mode there is).
OOC_MODES = ("memory", "swap", "mmap")
#: The mode that runs in memory: the reference the out-of-core modes are divided by, measured beside
#: each device only to share its moment; not a result of the device.
OOC_REFERENCE_MODE = "memory"
#: Device kinds whose filesystem holds a swap file (mode swap), and those whose mapped files are
#: written back to the device (mode mmap; FUSE too); on tmpfs both would be memory. No swap on FUSE
#: (delayed): a loop device over a FUSE file deadlocks as soon as the daemon's memory or its tmpfs
#: backing is paged out to that very swap (seen here with 128 MiB against a 32 MiB limit).
OOC_SWAP_KINDS = frozenset({"dir", "zram", "loop", "blockdev", "throttled"})
OOC_MMAP_KINDS = OOC_SWAP_KINDS | {"delayed"}
#: Mode -> the device kinds it is planned on (None: any).
OOC_MODE_KINDS = {"memory": None, "swap": OOC_SWAP_KINDS, "mmap": OOC_MMAP_KINDS}

#: YCSB's engines: the name a study gives -> the binding's class in benchcast's own jar (``ycsb/``).
YCSB_ENGINES = {
    "rocksdb": "benchcast.ycsb.RocksDBClient",
    "mariadb": "benchcast.ycsb.JdbcClient",
}
