"""Measurements are precious: the raw output of a benchmark is never re-measured by accident.

Snakemake's ``protected()`` only makes a file read-only, which root ignores; and a re-measured file
is lost the moment its job starts. So before any job runs, the workflow asks :func:`refusal` about
every measuring job Snakemake plans: a job whose raw output already exists is re-measured only when
the user named it, with ``--config remeasure=[PATTERN, ...]`` (shell-style patterns on output paths,
e.g. ``results/local/fio/fio/disk/*``) or Snakemake's ``--forcerun RULE_OR_FILE``. Otherwise the run
stops with one line saying what would be lost, before anything is deleted.

Raw outputs are also written under a temporary name and renamed when complete (:func:`atomic_path`,
:func:`commit`), so a killed job leaves no partial file that could pass as a result.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

#: Suffix of a raw output while its job is still writing it.
PARTIAL = ".partial"


def named(path: str, rule: str, patterns, forcerun) -> bool:
    """Did the user ask for ``path`` (an output of ``rule``) to be measured again?"""
    if rule in forcerun or path in forcerun:
        return True
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p.rstrip("/") + "/*") for p in patterns)


def refusal(planned, patterns=(), forcerun=(), listing: str | None = None) -> str | None:
    """``planned``: (rule, [output paths]) of the measuring jobs Snakemake would run. Returns the
    one-line refusal when one of them would overwrite an existing raw output the user did not name,
    else None. With ``listing``, the full list of such outputs is written there."""
    lost = sorted(
        path
        for rule, outputs in planned
        for path in map(str, outputs)
        if os.path.lexists(path) and not named(path, rule, patterns, forcerun)
    )
    if not lost:
        return None
    shown = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
    where = ""
    if listing:
        Path(listing).parent.mkdir(parents=True, exist_ok=True)
        Path(listing).write_text("\n".join(lost) + "\n")
        where = f"; all of them in {listing}"
    return (
        f"benchcast: refusing to re-measure {len(lost)} existing raw result(s): {shown}{where}. "
        f"Nothing was run. To measure them again, name them: --config 'remeasure=[\"PATTERN\"]' "
        f"or --forcerun RULE"
    )


def atomic_path(path) -> Path:
    """Where a job writes ``path`` until it is complete (a sibling, so the rename is atomic)."""
    path = Path(path)
    return path.with_name(path.name + PARTIAL)


def clear_partial(path) -> None:
    """Remove what a killed job left under the temporary name of ``path``."""
    remove(atomic_path(path))


def commit(path) -> Path:
    """Rename the complete temporary output to ``path`` (atomically; fsync'd first)."""
    return commit_as(atomic_path(path), path)


def aside_path(path) -> Path:
    """Where an analysis job writes ``path`` until it is done: the same name (charts and tables
    choose their format by its suffix, and title a chart by its stem) in a hidden sibling folder of
    its own, ``.partial.<name>/<name>``; :func:`remove` its parent when done."""
    path = Path(path)
    return path.parent / f".partial.{path.name}" / path.name


def commit_as(tmp, path) -> Path:
    """Rename the complete file ``tmp`` to ``path`` (atomically; fsync'd first)."""
    if Path(tmp).is_file():
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    return Path(path)


def remove(path) -> None:
    """Remove a file or folder if it is there."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
