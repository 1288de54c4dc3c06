"""The one way the measuring entry points (``python -m benchcast.fio|ycsb_job|devices``) run: all
output of the process and its children goes to the job's log file, and a failure's one-line reason
(``benchcast: ...``) also reaches the original stderr, which is Snakemake's own output.
"""

from __future__ import annotations

import os
import signal
import sys

from .. import BenchcastError

#: While :func:`run_logged` sends a job's output to its log: the original stderr (Snakemake's own
#: output), for :func:`say`.
_STDERR: int | None = None


def say(line: str) -> None:
    """A line for the job's log and, while its output goes there (:func:`run_logged`), for Snakemake's
    own output too: what a job survived (a program killed and run again) is seen where failures are."""
    print(line, file=sys.stderr, flush=True)
    if _STDERR is not None:
        os.write(_STDERR, (line + "\n").encode())


def os_error(exc: OSError) -> str:
    """An error the operating system gave, as the end of one line: the file, what, and for a full
    file system what to do."""
    import errno

    where = f"{exc.filename}: " if exc.filename else ""
    text = f"{where}{exc.strerror or exc}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        text += " (the file system is full: free space, then run again)"
    return text


def run_logged(fn, log: str | None = None, name: str = "") -> int:
    """Call ``fn()``; return 0, or 1 after a :class:`BenchcastError` (its line in the log and on the
    original stderr). With ``log``, stdout and stderr (file descriptors 1 and 2, so children's
    output too) go to that file while ``fn`` runs. ``name`` (which job) begins the line of a job
    told to stop."""
    global _STDERR
    saved = None
    if log:
        sys.stdout.flush()
        sys.stderr.flush()
        fh = open(log, "w")
        saved = (os.dup(1), os.dup(2))
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        fh.close()
        _STDERR = saved[1]

    try:
        fn()
        return 0
    except BenchcastError as exc:
        say(f"benchcast: {exc}")
        return 1
    except OSError as exc:  # what the machine refused (a full file system, a device gone): one line
        say(f"benchcast: {name + ': ' if name else ''}{os_error(exc)}")
        return 1
    except (SystemExit, KeyboardInterrupt) as exc:  # told to stop: what was torn down has been by now
        code = exc.code if isinstance(exc, SystemExit) else 128 + signal.SIGINT
        if isinstance(code, int) and code > 128:
            say(f"benchcast: {name + ': ' if name else ''}stopped by {signal.Signals(code - 128).name}")
        raise
    finally:
        _STDERR = None
        if saved:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def job_main(prog: str, run_job, name, argv=None) -> int:
    """The command line of one measuring job (``python -m benchcast.ycsb_job --job JSON [--log F]``):
    ``run_job(job)``, with a failure's one line prefixed by ``name(job)`` (which device, which run)."""
    import argparse
    import json

    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--job", required=True, help="the job as JSON (device, spec, state, source, ...)")
    p.add_argument("--log", help="write all output here; a failure's one-line reason also goes to stderr")
    args = p.parse_args(argv)
    job = json.loads(args.job)

    def named():
        try:
            run_job(job)
        except BenchcastError as exc:
            raise BenchcastError(f"{name(job)}: {exc}") from None

    return run_logged(named, args.log, name(job))
