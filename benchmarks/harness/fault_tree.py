"""The fault harness's scratch trees (benchmarks/faults.py): a copy of the workflow with its own
results file system, runs of the README's command in it, its processes, and the jobs a clean run ran
(from Snakemake's metadata), in the order it ran them."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from benchcast.sources import plan as bc_plan  # noqa: E402
from .scratch import copy_workflow, edit_config  # noqa: E402

STUDY = "local"
#: A run that has not ended this long after its fault has hung.
HANG_S = 600
#: Size of the results file system (the study writes about 135 MB: the YCSB jar and its JVM cache).
RESULTS_SIZE = "224M"
JAR = ROOT / "ycsb" / "target" / "benchcast-ycsb.jar"


# --------------------------------------------------------------------------- processes


def _read(path: str, binary: bool = False):
    try:
        with open(path, "rb" if binary else "r") as fh:
            return fh.read()
    except OSError:
        return None


def _stat(pid: int) -> tuple[str, int] | None:
    """(command name, parent pid) of a live process, or None (gone, or a zombie)."""
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return None
    rest = text[text.rindex(")") + 2:].split()
    return None if rest[0] in ("Z", "X") else (text[text.index("(") + 1:text.rindex(")")], int(rest[1]))


def _argv(pid: int) -> list[str]:
    raw = _read(f"/proc/{pid}/cmdline", binary=True) or b""
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _mine() -> set[int]:
    """This process and its ancestors: never a victim."""
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        st = _stat(pid)
        pid = st[1] if st else 0
    return out


def _children(pid: int) -> list[int]:
    """The children of ``pid``, from its threads' lists (fast: no scan of /proc)."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        text = _read(f"/proc/{pid}/task/{tid}/children") or ""
        out += [int(c) for c in text.split()]
    return out


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid``."""
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            if _stat(child):
                out.append(child)
                todo.append(child)
    return out


def tree_processes(tree: Path) -> dict[int, str]:
    """Every live process of the tree (but this one and its ancestors): its working directory, a
    file it runs or a path on its command line under the tree. pid -> command line."""
    root = str(tree)
    mine, out = _mine(), {}
    for pid in _pids():
        if pid in mine or not _stat(pid):
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        argv = _argv(pid)
        if cwd == root or cwd.startswith(root + "/") or any(root in a for a in argv):
            out[pid] = " ".join(argv)
    return out


#: The out-of-core program the study runs (as the workflow builds it).
OOC_PROGRAM = "results/ooc/bin/stream"


def bench_kind(pid: int) -> str | None:
    """Which victim a process of a benchmark job is: fio's job process, the YCSB JVM, the MariaDB
    server, the out-of-core program; None for the job's own processes."""
    comm, ppid = _stat(pid) or ("", 0)
    if comm == "fio":
        return "fio_worker" if (_stat(ppid) or ("",))[0] == "fio" else None
    if comm in ("java", "mariadbd"):
        return {"java": "ycsb_jvm", "mariadbd": "mariadbd"}[comm]
    return "ooc_program" if (_argv(pid) or [""])[0].endswith(OOC_PROGRAM) else None


def victim_windows(tree: Path, windows: dict) -> None:
    """One look at the running jobs: for each (job log, victim kind, and "bench": any of them) the
    first and last time it was seen, so that a fault's point falls within its victim's life."""
    now = time.monotonic()
    for pid in tree_processes(tree):
        argv = _argv(pid)
        if "--log" not in argv[:-1]:
            continue
        log = argv[argv.index("--log") + 1]
        for kind in {bench_kind(d) for d in descendants(pid)} - {None}:
            for key in ((log, kind), (log, "bench")):
                first, _last = windows.get(key, (now, now))
                windows[key] = (first, now)


def kill_all(pids, sig=signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def power_cut(tree: Path, extra=()) -> int:
    """Every process of the tree stopped (until no new one appears), then all killed at once."""
    stopped: set[int] = set()
    for _ in range(20):
        found = (set(tree_processes(tree)) | {p for e in extra for p in [e, *descendants(e)]}) - stopped
        if not found:
            break
        kill_all(found, signal.SIGSTOP)
        stopped |= found
    kill_all(stopped, signal.SIGKILL)
    return len(stopped)


# --------------------------------------------------------------------------- a scratch tree


#: The longest a tool the harness runs may take (umount, losetup, cp): past it, it is killed and its
#: result is a failure, so that no wait of the harness lasts for ever.
SH_S = 120


def _sh(*cmd, check=False) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=check, timeout=SH_S)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -9, "", f"{cmd[0]}: killed after {SH_S} s")


def mounts_under(path: Path) -> list[str]:
    root, out = str(path), []
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        target = line.split()[4].replace("\\040", " ")
        if target == root or target.startswith(root + "/"):
            out.append(target)
    return out


@dataclasses.dataclass
class Run:
    """One run of the command: its output, exit code and seconds."""

    number: int
    output: str
    code: int | None
    seconds: float


class Tree:
    """A scratch copy of the workflow, its config edited by ``mutate`` (and its files by ``patch``),
    with results/ on a tmpfs of its own; ``args``: what its runs give after ``run`` (Snakemake's
    targets, as the README says: the tests' runs stop at the aggregate)."""

    def __init__(self, path: Path, mutate, patch=None, args=()):
        self.path = Path(path).resolve()
        self.args = [str(a) for a in args]
        self.runs: list[Run] = []
        self.seen: dict[str, set] = defaultdict(set)  # what state records ever listed as created
        self.zram_sizes: dict[str, str] = {}  # zram device -> its disksize when it was ours
        if self.path.exists():
            raise SystemExit(f"faults: {self.path} exists; remove it or give another --work")
        copy_workflow(self.path)
        for part in ("benchcast.sh", "requirements.txt"):
            shutil.copy2(ROOT / part, self.path / part)
        (self.path / ".venv").symlink_to(Path(sys.prefix))
        edit_config(self.path, mutate)
        if patch is not None:
            patch(self.path)
        results = self.path / "results"
        results.mkdir()
        _sh("mount", "-t", "tmpfs", "-o", f"size={RESULTS_SIZE},mode=0755", "benchcast-faults", results, check=True)
        jar = results / "ycsb" / JAR.name
        jar.parent.mkdir(parents=True)
        shutil.copy2(JAR, jar)
        os.utime(jar)  # newer than its sources: reused, not built

    @property
    def results(self) -> Path:
        return self.path / "results"

    def env(self) -> dict:
        """The runs' environment: this one's, but a fixed hash seed, so that Snakemake picks among
        jobs of equal priority in the same order every time (a seed replays the same jobs)."""
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        return {**env, "PYTHONHASHSEED": "0"}

    def start(self) -> tuple[subprocess.Popen, Path]:
        """./benchcast.sh run (and ``args``) in a session of its own; output to runs/N.out."""
        self.windows: dict = {}
        out = self.path / "runs" / f"{len(self.runs) + 1}.out"
        out.parent.mkdir(exist_ok=True)
        fh = open(out, "w")
        proc = subprocess.Popen(["bash", "./benchcast.sh", "run", *self.args], cwd=self.path, env=self.env(), stdout=fh,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        fh.close()
        return proc, out

    def note_state(self) -> None:
        """What the state records list as created, remembered for the leftover check; and when the
        victims of the running jobs are seen (``windows``, this run's)."""
        victim_windows(self.path, self.windows)
        for path in (self.results / STUDY / "devices" / "state").glob("*.json"):
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            for part in (state, state.get("backing") or {}):
                for key, val in (part.get("created") or {}).items():
                    self.seen[key].add(str(val))
                    if key == "zram" and str(val) not in self.zram_sizes:
                        size = (_read(f"/sys/block/{Path(val).name}/disksize") or "").strip()
                        if size not in ("", "0"):
                            self.zram_sizes[str(val)] = size

    def finish(self, proc: subprocess.Popen, out: Path, t0: float, timeout=HANG_S) -> Run:
        """Wait for the run to end (noting what its state records make); a run that has not ended
        ``timeout`` s after it started (``t0``) has hung: it is cut (its output says so)."""
        deadline = t0 + timeout
        while proc.poll() is None:
            self.note_state()
            if time.monotonic() > deadline:
                power_cut(self.path, [proc.pid])
                proc.wait(timeout=SH_S)
                with open(out, "a") as fh:
                    fh.write(f"\nfaults: HUNG: killed after {timeout} s\n")
                break
            time.sleep(0.2)
        run = Run(len(self.runs) + 1, out.read_text(errors="replace"), proc.returncode, time.monotonic() - t0)
        self.runs.append(run)
        return run

    def run(self, timeout=HANG_S) -> Run:
        t0 = time.monotonic()
        proc, out = self.start()
        return self.finish(proc, out, t0, timeout=timeout)

    def dispose(self, keep: bool = False) -> list[str]:
        """Unmount results/ (first whatever the runs left: then named as what was left); remove the tree
        unless ``keep`` (then its results are kept in results.kept/). Returns what had to be cleaned
        by force."""
        forced = []
        left = tree_processes(self.path)
        if left:
            forced.append(f"{len(left)} process(es)")
            power_cut(self.path)
        if [m for m in mounts_under(self.path) if m != str(self.results)] or self.live_records():
            forced.append("devices (./benchcast.sh teardown)")
            with contextlib.suppress(subprocess.TimeoutExpired):  # its own waits are bounded; this too
                subprocess.run(["bash", "./benchcast.sh", "teardown"], cwd=self.path, env=self.env(),
                               capture_output=True, timeout=HANG_S)
        for m in sorted(mounts_under(self.path), key=len, reverse=True):
            if m != str(self.results):
                forced.append(f"mount {m}")
                _sh("umount", "-l", m)
        if keep:  # a copy on disk, for a look after the file system is gone
            _sh("cp", "-a", self.results, self.path / "results.kept")
        _sh("umount", self.results)
        if mounts_under(self.path):
            _sh("umount", "-l", self.results)
        if not keep:
            shutil.rmtree(self.path, ignore_errors=True)
        return forced

    def live_records(self) -> list[str]:
        out = []
        for path in (self.results / STUDY / "devices" / "state").glob("*.json"):
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if state.get("created") or (state.get("backing") or {}).get("created"):
                out.append(path.stem)
        return out


# --------------------------------------------------------------------------- the jobs of a clean run


@dataclasses.dataclass(frozen=True)
class Job:
    """One job of the clean run: its place in that run, rule, outputs, log and seconds; ``run``: the
    measured run it is (benchcast.sources.plan.Run) for a measuring job, ``device`` the device it is on."""

    place: int
    rule: str
    outputs: tuple[str, ...]
    log: str | None
    seconds: float
    run: bc_plan.Run | None
    device: str | None

    @property
    def name(self) -> str:
        return f"{self.rule} {self.outputs[0]}"


def _key(marker: Path, root: Path) -> str:
    """The path Snakemake keeps a metadata record under (urlsafe base64, long names split into
    folders whose names begin with '@')."""
    return base64.urlsafe_b64decode("".join(p.lstrip("@") for p in marker.relative_to(root).parts)).decode()


def catalogue(tree: Path) -> list[Job]:
    """Every job of the run Snakemake recorded, in the order it started them."""
    meta = tree / ".snakemake" / "metadata"
    jobs: dict[tuple, dict] = {}
    for marker in meta.rglob("*"):
        if not marker.is_file():
            continue
        try:
            rec = json.loads(marker.read_text())
        except ValueError:
            continue
        if rec.get("starttime") is None:
            continue
        j = jobs.setdefault((rec["rule"], rec.get("job_hash"), str(rec.get("log"))),
                            {"rule": rec["rule"], "outputs": [], "log": (rec.get("log") or [None])[0],
                             "start": rec["starttime"], "end": rec["endtime"]})
        j["outputs"].append(_key(marker, meta))
        j["start"], j["end"] = min(j["start"], rec["starttime"]), max(j["end"], rec["endtime"])
    out = []
    for place, j in enumerate(sorted(jobs.values(), key=lambda j: (j["start"], j["rule"]))):
        outputs = tuple(sorted(j["outputs"], key=lambda o: (bc_plan.parse(o) is None, o)))
        run = bc_plan.parse(outputs[0])
        dev = run.device if run else _device_of(j["rule"], outputs[0])
        out.append(Job(place, j["rule"], outputs, j["log"], max(0.1, j["end"] - j["start"]), run, dev))
    return out


def _device_of(rule: str, output: str) -> str | None:
    m = re.match(rf"results/{STUDY}/devices/([^/]+)/", output)
    return m.group(1) if m and rule in ("provision_device", "teardown_device") else None


def _done(tree: Tree, job: Job) -> bool:
    return all((tree.path / o).exists() for o in job.outputs)


MEASURING = ("fio_run", "ycsb_run", "ooc_run")
DEVICE_JOBS = (*MEASURING, "provision_device", "teardown_device")

#: Jobs whose faults a round can follow with later ones (they run until their outputs exist);
#: after a fault in any other job (the analysis) a round ends.
CHAINABLE = (*DEVICE_JOBS, "build_ooc", "build_ycsb")
