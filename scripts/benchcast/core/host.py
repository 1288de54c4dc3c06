"""The machine measurements run on: hostname, kernel, CPU model, fio version (provenance), and where
it keeps what the package makes once and reuses (:func:`cache_dir`). Light: no pandas."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path


def cache_dir(name: str) -> Path:
    """``$XDG_CACHE_HOME/benchcast/<name>`` (``~/.cache`` without it): what is made once per machine
    and user and reused by every run and tree (MariaDB's pristine datadirs, the charts' JavaScript).
    Not created here."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchcast" / name


def machine() -> dict:
    """hostname, kernel and cpu_model of this machine."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"hostname": platform.node(), "kernel": platform.release(), "cpu_model": cpu or platform.processor()}


def fio_version() -> str:
    """``fio --version`` of the fio on PATH, "" if there is none."""
    if not shutil.which("fio"):
        return ""
    return subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
