"""Before any job runs: the files the planned jobs will read are checked, so that a corrupt or
truncated raw output, or a bad imported table, stops the run with one line naming the file while
every earlier result is still in place (Snakemake deletes a job's old outputs when the job starts).

The records rules check the same things again when they run; this only moves the refusal first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import BenchcastError

FIO_RUN = re.compile(r"(^|/)results/[^/]+/fio/[^/]+/[^/]+/[^/]+/run\d+\.json$")
YCSB_RUN = re.compile(r"(^|/)results/[^/]+/ycsb/[^/]+/[^/]+/[^/]+/\d+/run\d+\.csv$")


def check_file(path: str) -> None:
    """Check one raw output a records rule will read (fio JSON, a YCSB run's records)."""
    if FIO_RUN.search(path):
        from . import fio

        fio.parse(path, study="check", device="check")  # also refuses a job that ended in error
    elif YCSB_RUN.search(path):
        from . import records

        records.read(path)


def check_import(fio_csv: str, app_csv: str, devices) -> None:
    """Check the paper-shaped tables an import rule will read."""
    from . import importers

    importers.soga2018(fio_csv, app_csv, study="check", source="check", devices=devices)


def check_fio_import(files: dict, kind: str = "fio_json", ycsb: dict | None = None) -> None:
    """Check the fio JSON files (or PKB sample files) an import source will read: each parses,
    whole, as the import reads it (:func:`benchcast.importers.fio_json`, :func:`~benchcast.importers.pkb`)."""
    from . import importers

    if kind == "pkb":
        importers.pkb(files, study="check", source="check", ycsb=ycsb)
    else:
        importers.fio_json(files, study="check", source="check")


def check_writable(directory: str = "results") -> None:
    """The results folder (or, before it exists, the working directory) must take new files."""
    d = Path(directory)
    probe = d if d.exists() else d.resolve().parent
    if not os.access(probe, os.W_OK):
        why = "read-only file system" if _read_only_mount(probe) else "no write permission"
        raise BenchcastError(f"{probe}: results folder is not writable ({why}); nothing was run")


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
