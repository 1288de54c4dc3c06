"""Before any job runs: the files the planned jobs will read are checked, so that a corrupt or
truncated raw output, or a bad imported table, stops the run with one line naming the file while
every earlier result is still in place (Snakemake deletes a job's old outputs when the job starts).

The records rules check the same things again when they run; this only moves the refusal first.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import BenchcastError, plan


def check_file(path: str) -> None:
    """Check one raw output a records rule will read (fio JSON, a YCSB run's records)."""
    run = plan.parse(path)
    if run is None:
        return
    if run.type == "fio":
        from . import fiojson

        fiojson.parse(path, study="check", device="check")  # also refuses a job that ended in error
    elif run.type == "ycsb":
        from . import records

        records.read(path)


def check_import(fio_csv: str, app_csv: str, devices) -> None:
    """Check the paper-shaped tables an import rule will read."""
    from . import importers

    importers.soga2018(fio_csv, app_csv, study="check", source="check", benchmark="check", devices=devices)


def check_import_source(src: dict, devices=None) -> None:
    """Check the files an import source of kind fio_json, pkb, records or ycsb_output will read: the
    import itself, run without writing anything (:mod:`benchcast.importers`)."""
    from . import importers

    kind, files = src["type"], src.get("files")
    if kind == "fio_json":
        importers.fio_json(files, study="check", source="check")
    elif kind == "pkb":
        importers.pkb(files, study="check", source="check", ycsb=src.get("ycsb"))
    elif kind == "records":
        importers.record_files(files, study="check", source="check", devices=devices, rename=src.get("rename"))
    elif kind == "ycsb_output":
        importers.ycsb_output(src["runs"], study="check", source="check", devices=devices)


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
