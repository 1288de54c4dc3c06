"""The machine measurements run on: hostname, kernel, CPU model (provenance), and the CPUs' wake-up
latency limit a measuring job holds. Light: no pandas."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import struct
import subprocess

from . import BenchcastError

#: The kernel's PM QoS file: a limit written to it holds while the file stays open.
PM_QOS = "/dev/cpu_dma_latency"


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


@contextlib.contextmanager
def cpu_latency(limit_us: int | None, where: str = "cpu_latency_us"):
    """Hold the CPUs' wake-up latency limit (PM QoS, :data:`PM_QOS`) at ``limit_us`` microseconds
    while the block runs: idle CPUs then use only idle states they leave within that time (0: they
    poll). A client and a database server that wait for a device wake each other several times per
    device request; from a deep idle state (a virtual machine's halt) every wake-up costs tens of
    microseconds, which fio's one thread pays once per request and the application several times
    (docs/archive/ablation-2026-11.md, session 13). The limit is released when the file closes,
    also when the process is killed: nothing is left to restore. None: nothing is held. A limit
    that cannot be held is an error naming ``where``."""
    if limit_us is None:
        yield None
        return
    try:
        fd = os.open(PM_QOS, os.O_RDWR)
    except OSError as exc:
        raise BenchcastError(f"{where}: cannot hold the CPU wake-up latency limit ({PM_QOS}: "
                             f"{exc.strerror}); null measures without one") from None
    try:
        os.write(fd, struct.pack("i", int(limit_us)))
        yield int(limit_us)
    finally:
        os.close(fd)


def measured_settings(settings: dict) -> dict:
    """``settings`` as a measuring job's params record them: a null ``cpu_latency_us`` (no limit
    held) is left out, so that results measured before the setting existed keep their params and
    are not measured again."""
    return {k: v for k, v in settings.items() if not (k == "cpu_latency_us" and v is None)}


def cpu_latency_now() -> int | None:
    """The CPU wake-up latency limit in force now (microseconds; the kernel's 2000000000 when nobody
    holds one), None when it cannot be read."""
    try:
        fd = os.open(PM_QOS, os.O_RDONLY)
    except OSError:
        return None
    try:
        return struct.unpack("i", os.read(fd, 4))[0]
    finally:
        os.close(fd)
