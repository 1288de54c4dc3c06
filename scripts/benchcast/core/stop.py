"""Stopping a run: SIGTERM, SIGINT or SIGHUP to the Snakemake process end the run within a minute.

Snakemake's own SIGTERM handler takes the scheduler's lock (a plain, non-reentrant lock) inside the
signal handler. Python runs a signal handler in the main thread between two bytecodes, and the main
thread holds that lock while it post-processes finished jobs and selects the next ones: a SIGTERM
that lands there waits for a lock its own thread holds, for ever (a futex wait with no child; only a
SIGINT's KeyboardInterrupt breaks it). And where it works it only stops scheduling: the running job
measures to its end, minutes for a YCSB or out-of-core job.

:func:`watch` (``onstart``) replaces the handlers of these signals with ones that do nothing but
wake a thread (the interpreter's wake-up fd, written in C by whichever thread takes the signal, and
a byte from the handler itself). That thread, never the handler, then runs Snakemake's own SIGTERM
handling (stop scheduling, wait for the running jobs), sends SIGTERM to the running jobs' processes
so that each tears down its device and what it owns (:func:`benchcast.devices.on_device`), and
SIGKILLs what is still running after :data:`GRACE_S`; the ``onerror`` hook then tears down every
other device of the run. A second signal while stopping is ignored: it would only cut the teardown
short.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: seconds a signalled job has to tear down its device before it is killed (a MariaDB server's
#: shutdown and a FUSE unmount take a few seconds; the run's own teardown follows)
GRACE_S = 40.0
#: a job's command runs under a shell unless the shell exec'd it: signal what the shell runs
SHELLS = {"bash", "sh", "dash"}


@dataclass
class Stop:
    """What a stop request did: the signal's name (None until one came), what was up then, the job
    processes signalled (pid, name) and those killed after the grace time; ``done`` once they are
    over."""

    signal: str | None = None
    live: dict[str, list[str]] = field(default_factory=dict)  # devices up then -> what they held
    servers: int = 0  # MariaDB servers running then
    jobs: list[tuple[int, str]] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def _stat(pid: int) -> tuple[str, int] | None:
    """(command name, parent pid) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
    return None if rest[0] in ("Z", "X") else (name, int(rest[1]))


def parent(pid: int) -> int:
    """The parent of a live process (0 when it is gone)."""
    st = _stat(pid)
    return st[1] if st else 0


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    return _stat(pid) is not None


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st and st[1] == pid:
                out.append(int(entry))
    return sorted(out)


def job_name(pid: int, comm: str) -> str:
    """A job process's name: the module of ``python -m MODULE`` with the job's log where it names one
    (``--log``: the log's path names the job, its device and run), the rule of a Snakemake rule
    script (``rule NAME``), else the command's."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return comm
    log = f" {argv[argv.index('--log') + 1]}" if "--log" in argv[:-1] else ""
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1] + log
    script = Path(argv[1]).name.split(".") if len(argv) > 1 and ".snakemake/scripts/" in argv[1] else []
    return f"rule {script[1]}" if len(script) > 2 else comm


def job_processes(parent: int) -> list[tuple[int, str]]:
    """(pid, name) of the jobs ``parent`` runs: its children, looking through shells to the commands
    they run."""
    out = []
    for pid in children(parent):
        st = _stat(pid)
        if st is None:
            continue
        inner = job_processes(pid) if st[0] in SHELLS else []
        out += inner or [(pid, job_name(pid, st[0]))]
    return out


def descendants(pid: int) -> list[int]:
    out = []
    for child in children(pid):
        out += [child, *descendants(child)]
    return out


def send(pids, sig) -> list[int]:
    """Send ``sig`` to each of ``pids`` that is still there; returns those it reached."""
    sent = []
    for pid in pids:
        try:
            os.kill(pid, sig)
            sent.append(pid)
        except ProcessLookupError:
            pass
    return sent


def stop_jobs(stop: Stop, parent: int, grace: float = GRACE_S) -> None:
    """SIGTERM to each job process of ``parent``; SIGKILL to those (and what they started) still
    alive after ``grace`` seconds."""
    stop.jobs = job_processes(parent)
    send([pid for pid, _ in stop.jobs], signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = [pid for pid, _ in stop.jobs]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [pid for pid in left if alive(pid)]
    for pid in left:
        stop.killed += send([*descendants(pid), pid], signal.SIGKILL)


#: what a device's state record lists as created -> how the stop line names it
OWNED = {"memcg": "memory cgroup", "swapfile": "swap file", "cgroup": "blkio cgroup", "loop": "loop device",
         "zram": "zram device"}


def live_devices(state_dirs) -> dict[str, list[str]]:
    """State record -> what the device holds beyond its mount (a FUSE daemon, a loop or zram device,
    cgroups, a swap file), for every device up (``ready``) or holding something in the
    ``state_dirs`` given."""
    out = {}
    for d in map(Path, state_dirs):
        for path in sorted(d.glob("*.json")) if d.is_dir() else []:
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            created = {**((state.get("backing") or {}).get("created") or {}), **(state.get("created") or {})}
            if not created and state.get("status") != "ready":
                continue
            held = ["FUSE daemon"] if state.get("kind") == "delayed" else []
            held += [name for key, name in OWNED.items() if key in created]
            out[str(path)] = held
    return out


def files_named(root, name: str) -> list[Path]:
    """The files called ``name`` under ``root``, not looking into file systems mounted below it (a
    device's: a dead FUSE server's mount answers every look with an error) nor into what cannot be
    read."""
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(dirpath, d))]
        out += [Path(dirpath) / f for f in files if f == name]
    return sorted(out)


def servers(dirs) -> int:
    """How many MariaDB servers have pid files (``mariadbd.pid``) under ``dirs``."""
    return sum(len(files_named(d, "mariadbd.pid")) for d in dirs)


def watch(then: Callable[[int], None] | None = None, grace: float = GRACE_S, state_dirs=(),
          server_dirs=()) -> Stop:
    """Install the stop handlers (main thread only) and start the thread that acts on them: once,
    ``then(signum)`` (Snakemake's own SIGTERM handling), and :func:`stop_jobs` on this process's
    jobs. Returns the :class:`Stop` record, filled in when a signal comes (with the devices of
    ``state_dirs`` up and the MariaDB servers under ``server_dirs`` at that moment)."""
    stop = Stop()
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)

    def handler(signum, frame):  # nothing that could wait: the main thread may hold any lock
        try:
            os.write(wfd, bytes([signum]))
        except OSError:
            pass

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)
    signal.set_wakeup_fd(wfd, warn_on_full_buffer=False)
    wanted = {int(s) for s in STOP_SIGNALS}

    def loop():
        while True:
            data = os.read(rfd, 64)
            hits = [b for b in data if b in wanted]
            if hits:
                break
        stop.signal = signal.Signals(hits[0]).name
        stop.live, stop.servers = live_devices(state_dirs), servers(server_dirs)
        if then is not None:
            then(hits[0])
        stop_jobs(stop, os.getpid(), grace)
        stop.done.set()

    threading.Thread(target=loop, name="benchcast-stop", daemon=True).start()
    return stop


def summary(stop: Stop, left: list[str], killed_servers: int = 0) -> str:
    """The one line of a stopped run: the signal, the jobs stopped, the devices that were up and what
    they held (torn down unless named in ``left``), the MariaDB servers (those running at the signal,
    or more if the run's teardown stopped more)."""
    jobs = ", ".join(sorted({name for _, name in stop.jobs})) or "none running"
    down = [Path(p).stem + (" (" + ", ".join(held) + ")" if held else "")
            for p, held in stop.live.items() if p not in left]
    line = (f"benchcast: run stopped by {stop.signal}: {len(stop.jobs)} job(s) stopped ({jobs})"
            f"{f', {len(stop.killed)} process(es) killed' if stop.killed else ''}; torn down: "
            f"{'; '.join(down) or 'no device was up'}")
    if max(stop.servers, killed_servers):
        line += f"; {max(stop.servers, killed_servers)} MariaDB server(s) stopped"
    if left:
        line += f"; NOT cleaned, run ./benchcast.sh teardown: {', '.join(Path(p).stem for p in left)}"
    return line
