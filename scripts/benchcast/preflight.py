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


def check_import_source(src: dict, devices=None, key: str | None = None) -> None:
    """Check the files an import source of kind fio_json, pkb, records or ycsb_output will read: the
    import itself, run without writing anything (:mod:`benchcast.importers`, :mod:`benchcast.pkb`);
    ``key``: the source's config key, named by an error of one of its entries."""
    from . import importers, pkb

    kind, files = src["type"], src.get("files")
    if kind == "fio_json":
        importers.fio_json(files, study="check", source="check")
    elif kind == "pkb":
        pkb.pkb(files, study="check", source="check", ycsb=src.get("ycsb"))
    elif kind == "records":
        importers.record_files(files, study="check", source="check", devices=devices, rename=src.get("rename"))
    elif kind == "ycsb_output":
        importers.ycsb_output(src["runs"], study="check", source="check", devices=devices, key=key)


def source_names(src: dict, devices=None) -> tuple[set, set] | None:
    """What an import source brings, for the checks of spec cards and of the report's focus before
    any job runs: (figures, series), figures as (workload, block size, metric) of its device
    figures, series as (benchmark, engine, workload, op or None: any) of its application results.
    Read by the import itself, its checks included (``devices``: the study's); None where it
    refuses a file: its own check (before any job, :func:`check_import_source`) then names it."""
    from . import importers, pkb

    kind = src["type"]
    if kind == "ycsb_output":  # the outputs do not say what they measured: the config does
        return set(), {("ycsb", run["engine"], run["workload"], None) for run in src["runs"]}
    try:
        if kind == "soga2018":
            recs = importers.soga2018(src["fio"], src["app"], "check", "check", src["benchmark"], devices)
        elif kind == "fio_json":
            recs = importers.fio_json(src["files"], study="check", source="check")
        elif kind == "pkb":
            recs = pkb.pkb(src["files"], study="check", source="check", ycsb=src.get("ycsb"))
        else:
            recs = importers.record_files(src["files"], "check", "check", devices=devices, rename=src.get("rename"))
    except (BenchcastError, OSError):
        return None
    fio = (recs["benchmark"] == "fio").to_numpy()
    figures = {(w, int(bs), m) for w, bs, m in recs.loc[fio, ["workload", "block_size", "metric"]].itertuples(index=False)}
    return figures, set(recs.loc[~fio, ["benchmark", "engine", "workload", "op"]].itertuples(index=False, name=None))


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
