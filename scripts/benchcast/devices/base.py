"""What every device module needs: its errors (:class:`UnavailableError`, :class:`RootRequiredError`)
and running a system command (:func:`run`, the one place device modules run one: tests stand in for
it to feed recorded tool output)."""

from __future__ import annotations

import json
import os
import subprocess

from .. import BenchcastError


class UnavailableError(BenchcastError):
    """The device kind cannot be had on this machine (no pmem, no zram module, not root ...).

    A device marked ``optional: true`` is skipped on this error; any other error always fails.
    """


class RootRequiredError(UnavailableError):
    """The kind needs root and this process is not root. Planning on a machine where the jobs will
    not run (a dry run, a cluster's login node) does not hold this against a device."""


def run(cmd, what: str, check: bool = True, input: str | None = None, timeout: float = 120):
    """Run ``cmd`` (a list); on failure raise BenchcastError '<what>: <cmd0> failed: <stderr line>'.

    Module-level so tests can replace it to feed recorded tool output (ndctl without pmem).
    """
    try:
        proc = subprocess.run(
            [str(c) for c in cmd], capture_output=True, text=True, input=input, timeout=timeout
        )
    except FileNotFoundError:
        raise UnavailableError(f"{what}: command {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise BenchcastError(f"{what}: {' '.join(map(str, cmd))} timed out after {timeout}s") from None
    if check and proc.returncode != 0:
        raise BenchcastError(f"{what}: {' '.join(map(str, cmd))} failed: {one_line(proc)}")
    return proc


def one_line(proc) -> str:
    """A command's error output as one line (all its non-blank lines, shortened)."""
    text = proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}"
    line = " | ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    return line if len(line) <= 400 else line[:397] + "..."


def run_json(cmd, what: str):
    """Run a command printing JSON; '' (as ``ndctl list`` prints when there is nothing) -> None."""
    out = run(cmd, what).stdout.strip()
    if not out:
        return None
    try:
        return json.loads(out)
    except json.JSONDecodeError as exc:
        raise BenchcastError(f"{what}: {cmd[0]} printed no JSON ({exc.msg})") from None


def is_root() -> bool:
    return os.geteuid() == 0


def ensure_root(device_id: str, kind: str) -> None:
    if not is_root():
        raise RootRequiredError(f"device {device_id}: kind {kind} needs root (running as uid {os.geteuid()})")
