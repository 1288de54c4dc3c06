"""The machine measurements run on: hostname, kernel, CPU model, fio version (provenance). Light: no
pandas."""

from __future__ import annotations

import platform
import shutil
import subprocess


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
