"""The fault harness's faults (benchmarks/faults.py): what each kind hits, what it kills or takes
away, and striking at a fault's point of its job."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .fault_tree import (MEASURING, OOC_PROGRAM, STUDY, Job, Tree, _argv, _done, _sh, _stat, bench_kind, descendants,
                        kill_all, mounts_under, power_cut, tree_processes)



@dataclasses.dataclass
class Fault:
    """Fault ``index`` (1-based) of the seed: its kind, k and fraction as drawn; then where it struck
    (round, job, run), what was done, and what the checks found."""

    index: int
    kind: str
    k: int
    fraction: float
    round: int = 0
    job: Job | None = None
    run: int = 0
    did: str = ""  # what was done ("" until injected)
    at: float = 0.0  # seconds into the job
    after_outputs: bool = False  # its job's outputs were all there when it struck (its work done)
    runs_needed: int | None = None
    violations: list[str] = dataclasses.field(default_factory=list)

    @property
    def injected(self) -> bool:
        return bool(self.did)

    def line(self) -> str:
        where = f"{self.job.name} at {self.fraction:.2f}" if self.job else "-"
        if not self.injected:
            return (f"fault {self.index:3d} {self.kind:12s} round {self.round} run {self.run}: {where}: missed "
                    f"(its job ended before its point, or its victim never came); not counted")
        after = " (its job's outputs were all there: the line asked of its run's failure)" if self.after_outputs else ""
        return (f"fault {self.index:3d} {self.kind:12s} round {self.round} run {self.run}: {where}: "
                f"{self.did}{after}; runs needed {self.runs_needed}; {'; '.join(self.violations) or 'ok'}")


class Strike:
    """What a kind needs while it waits to strike: the tree, the run's ./benchcast.sh, the job."""

    def __init__(self, tree: Tree, proc: subprocess.Popen, job: Job):
        self.tree, self.proc, self.job = tree, proc, job
        self.log = str(tree.path / job.log) if job.log else None
        self.pids: list[int] = []

    def job_pids(self) -> list[int]:
        """The job's own processes: those naming its log (measuring and device jobs: --log) or holding
        it open (script and shell jobs); once found, while they live, without looking again."""
        if self.pids and all(_stat(p) for p in self.pids):
            return self.pids
        self.pids = self._find()
        return self.pids

    def _find(self) -> list[int]:
        out = []
        rel = self.job.log
        for pid, cmd in tree_processes(self.tree.path).items():
            if rel and rel in cmd:
                out.append(pid)
                continue
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == self.log:
                        out.append(pid)
                        break
                except OSError:
                    pass
        return out

    def under_job(self, comm=None, argv0=None) -> list[int]:
        pids = self.job_pids()
        found = {d for p in pids for d in descendants(p)}
        out = []
        for pid in sorted(found):
            st = _stat(pid)
            if not st:
                continue
            if comm and st[0] == comm or argv0 and (_argv(pid) or [""])[0].endswith(argv0):
                out.append(pid)
        return out

    def state(self, device: str) -> dict:
        try:
            return json.loads((self.tree.results / STUDY / "devices" / "state" / f"{device}.json").read_text())
        except (OSError, ValueError):
            return {}


def _fio_workers(s: Strike) -> list[int]:
    fios = set(s.under_job(comm="fio"))
    return [p for p in fios if (_stat(p) or ("", 0))[1] in fios]


def _fuse_servers(s: Strike) -> list[int]:
    mnt = f"/mnt/{s.job.device}"
    return [p for p, cmd in tree_processes(s.tree.path).items()
            if (_stat(p) or ("",))[0].startswith("delayfs") and mnt in cmd]


def _snakemake(s: Strike) -> list[int]:
    """The run's Snakemake process (not the report's, and none of its jobs')."""
    return [p for p in descendants(s.proc.pid) if "snakemake" in [Path(a).name for a in _argv(p)[:2]]
            and "--report" not in _argv(p)]


def _sigkill(victims):
    def act(s: Strike) -> str | None:
        pids = victims(s)
        if not pids:
            return None
        names = ", ".join(f"{p} ({(_stat(p) or ('?',))[0]})" for p in pids)
        kill_all(pids)
        return f"SIGKILL {names}"
    return act


def _power_cut(s: Strike) -> str:
    return f"power cut: {power_cut(s.tree.path, [s.proc.pid])} process(es) stopped, then killed"


def _sigterm(s: Strike) -> str:
    os.kill(s.proc.pid, signal.SIGTERM)
    return f"SIGTERM to ./benchcast.sh ({s.proc.pid})"


FILL = ".faults-fill"


def _fill(s: Strike) -> str:
    """Fill the results file system until the kernel says it is full."""
    path, total = s.tree.results / FILL, 0
    chunk = b"\0" * (1 << 20)
    with open(path, "ab") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
                total += len(chunk)
        except OSError as exc:
            why = exc.strerror
    free = shutil.disk_usage(s.tree.results).free
    return f"results filled: {total >> 20} MiB written ({why}), {free} bytes free"


def _mount_of(s: Strike, backing: bool = False) -> str | None:
    state = s.state(s.job.device)
    part = (state.get("backing") or {}) if backing else state
    mnt = (part.get("created") or {}).get("mount")
    return mnt if mnt and mnt in mounts_under(s.tree.path) else None


def _tmpfs_gone(s: Strike) -> str | None:
    mnt = _mount_of(s)
    if not mnt:
        return None
    plain = _sh("umount", mnt)
    if plain.returncode == 0:
        return f"umount {mnt}"
    lazy = _sh("umount", "-l", mnt)
    return f"umount {mnt}: {plain.stderr.strip().split(': ')[-1]}; umount -l: {'done' if lazy.returncode == 0 else lazy.stderr.strip()}"


def _zram_reset(s: Strike) -> str | None:
    state = s.state(s.job.device)
    dev, mnt = (state.get("created") or {}).get("zram"), _mount_of(s)
    if not dev or not mnt:
        return None
    reset = Path(f"/sys/block/{Path(dev).name}/reset")
    try:
        reset.write_text("1")
        return f"reset {dev}"
    except OSError as exc:
        why = exc.strerror
    lazy = _sh("umount", "-l", mnt)
    for _ in range(200):  # the kernel lets it go once the job's files are closed
        try:
            reset.write_text("1")
            return f"reset {dev}: {why} (mounted); umount -l {mnt}; then reset"
        except OSError:
            if s.proc.poll() is not None:
                break
            time.sleep(0.1)
    return f"reset {dev}: {why} (mounted); umount -l {mnt}: {'done' if lazy.returncode == 0 else lazy.stderr.strip()}; reset still refused"


def _loop_detach(s: Strike) -> str | None:
    state = s.state(s.job.device)
    back = state.get("backing") or {}
    dev, mnt = (back.get("created") or {}).get("loop"), _mount_of(s, backing=True)
    if not dev or not mnt:
        return None
    det = _sh("losetup", "-d", dev)
    lazy = _sh("umount", "-l", mnt)
    return (f"losetup -d {dev}: {'done (deferred while mounted)' if det.returncode == 0 else det.stderr.strip()}; "
            f"umount -l {mnt}: {'done' if lazy.returncode == 0 else lazy.stderr.strip()}")


def _on(devices, rules=MEASURING, modes_not=("swap",)):
    def hits(job: Job) -> bool:
        return (job.rule in rules and job.device in devices
                and not (job.run and job.run.mode in modes_not))
    return hits


def _engine(engine):
    return lambda job: job.rule == "ycsb_run" and (engine is None or job.run.engine == engine)


@dataclasses.dataclass(frozen=True)
class Kind:
    """A fault kind: which jobs it hits; what it does (None back: not possible yet, try again); the
    processes it kills, whose coming starts its clock (None: a benchmark job's benchmark at work,
    any other job itself); whether the run it strikes can clean up after it (its one line then in
    that run's output; else in the next run's)."""

    hits: object
    act: object
    victims: object = None
    cleans: bool = True


KINDS = {
    "fio_worker": Kind(lambda j: j.rule == "fio_run", _sigkill(_fio_workers), _fio_workers),
    "ycsb_jvm": Kind(_engine(None), _sigkill(lambda s: s.under_job(comm="java")), lambda s: s.under_job(comm="java")),
    "mariadbd": Kind(_engine("mariadb"), _sigkill(lambda s: s.under_job(comm="mariadbd")),
                     lambda s: s.under_job(comm="mariadbd")),
    "ooc_program": Kind(lambda j: j.rule == "ooc_run", _sigkill(lambda s: s.under_job(argv0=OOC_PROGRAM)),
                        lambda s: s.under_job(argv0=OOC_PROGRAM)),
    "fuse_server": Kind(_on({"fz"}, modes_not=()), _sigkill(_fuse_servers)),
    "snakemake": Kind(lambda j: True, _sigkill(_snakemake), _snakemake, cleans=False),
    "power_cut": Kind(lambda j: True, _power_cut, cleans=False),
    "sigterm": Kind(lambda j: True, _sigterm),
    "results_full": Kind(lambda j: True, _fill),
    "tmpfs_gone": Kind(_on({"ram"}), _tmpfs_gone),
    "zram_reset": Kind(_on({"zr"}), _zram_reset),
    "loop_detach": Kind(_on({"slow"}), _loop_detach),
}


def _bench(s: "Strike") -> list[int]:
    """A benchmark job's benchmark processes (any victim kind): the job at work, past its waits."""
    return [p for p in {d for j in s.job_pids() for d in descendants(j)} if bench_kind(p)]


def strike(tree: Tree, proc: subprocess.Popen, fault: Fault, window: float, until: float) -> None:
    """Wait for the fault's job to start in this run and strike at its point: ``fault.fraction`` of
    ``window`` (what the clean run took of the job after its victim appeared) after the victim
    appears. The victim: the process the kind kills; for the other kinds, a benchmark job's
    benchmark at work (past its wait for the machine's benchmark lock, which the clean run's times
    of whole jobs include), any other job itself. Fills in what was done and when, or leaves it
    empty when the job or its victim never came (or the victim was gone and none came again before
    the job ended)."""
    s, kind = Strike(tree, proc, fault.job), KINDS[fault.kind]

    def waiting() -> bool:
        return proc.poll() is None and time.monotonic() < until

    while waiting() and not s.job_pids():
        tree.note_state()
        time.sleep(0.05)
    t_job = time.monotonic()
    victims = kind.victims or (_bench if fault.job.rule in MEASURING else lambda st: st.job_pids())
    while waiting() and not victims(s):
        if not s.job_pids():
            return  # the job ended before its victim came
        time.sleep(0.02)
    if not waiting():
        return
    point = time.monotonic() + fault.fraction * window
    while waiting() and time.monotonic() < point:
        time.sleep(0.02)
    while waiting():
        tree.note_state()
        if not s.job_pids():
            return  # the job ended before its point
        after = _done(tree, fault.job)
        did = kind.act(s)
        if did:
            fault.did, fault.at, fault.after_outputs = did, time.monotonic() - t_job, after
            return
        time.sleep(0.02)


def survived(tree: Tree, proc: subprocess.Popen, job: Job, until: float) -> bool:
    """After a fault: wait for its job to end, at most ``until`` (the run's deadline); whether the run
    goes on with the job done (it took the fault in its stride: a program run again, a job retried),
    so that another fault may strike it. A job still running at ``until`` did not survive: the run
    has hung in it (:meth:`fault_tree.Tree.finish` cuts it)."""
    s = Strike(tree, proc, job)
    while proc.poll() is None and s.job_pids() and time.monotonic() < until:
        tree.note_state()
        time.sleep(0.05)
    if time.monotonic() >= until:
        return False
    time.sleep(0.5)
    return proc.poll() is None and _done(tree, job)
