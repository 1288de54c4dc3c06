"""A throwaway single-node Slurm cluster on this machine, for tests of the Slurm executor.

Installs nothing (.ci/install-slurm.sh does the apt install). `single_node_cluster(tmpdir)` writes
its own slurm.conf under tmpdir, starts munged, slurmctld and slurmd in the foreground as children
of this process (so their PIDs are ours), waits until the node is idle, yields the environment
that clients (sbatch, squeue, snakemake) need, and on exit cancels every job and stops exactly the
daemons it started, even when the body failed.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from workflow_util import terminate

BINARIES = ["munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel", "scontrol"]
MUNGE_KEY = Path("/etc/munge/munge.key")


def skip_reason() -> str | None:
    """Why a real Slurm cluster cannot be started here, or None."""
    if os.geteuid() != 0:
        return "needs root: slurmd and munged are started as root (SlurmUser=root)"
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        return f"slurm/munge not installed (missing {', '.join(missing)}); run .ci/install-slurm.sh"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_line(mem_reserve_mb: int = 2048) -> str:
    """The NodeName line of `slurmd -C`, RealMemory trimmed so the OS keeps some memory."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("NodeName="))
    fields = dict(f.split("=", 1) for f in line.split())
    mem = int(fields["RealMemory"])
    fields["RealMemory"] = str(max(512, min(int(mem * 0.9), mem - mem_reserve_mb)))
    fields["NodeAddr"] = "127.0.0.1"
    return " ".join(f"{k}={v}" for k, v in fields.items()) + " State=UNKNOWN"


def write_conf(root: Path, munge_socket: Path) -> Path:
    node = node_line()
    host = node.split()[0].split("=", 1)[1]
    conf = f"""\
# Written by tests/slurm_util.py: a single-node test cluster, no accounting.
ClusterName=benchcast-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
{node}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    path = root / "slurm.conf"
    path.write_text(conf)
    return path


def ensure_munge_key() -> None:
    """/etc/munge/munge.key: created (1024 random bits, 0400, owned by munge if that user exists) if missing."""
    if MUNGE_KEY.exists():
        return
    MUNGE_KEY.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(MUNGE_KEY, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(128))
    with contextlib.suppress(KeyError, LookupError):
        shutil.chown(MUNGE_KEY, "munge", "munge")
        shutil.chown(MUNGE_KEY.parent, "munge", "munge")


def slurmstepd_pids() -> set[int]:
    pids = set()
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            with contextlib.suppress(OSError):
                if (p / "comm").read_text().strip() == "slurmstepd":
                    pids.add(int(p.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie child counts as gone
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


class Cluster:
    def __init__(self, root: Path):
        self.root = root
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env: dict[str, str] = {}
        self.steps_before: set[int] = set()

    @property
    def pids(self) -> list[int]:
        return [p.pid for _, p in self.procs]

    def run(self, *cmd, check=True, timeout=30) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, check=check, timeout=timeout)

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")
        proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self.procs.append((name, proc))

    def _wait(self, what: str, pred, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}) while waiting for {what}:\n{self.logs()}")
            if pred():
                return
            time.sleep(0.3)
        raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.logs()}")

    def logs(self) -> str:
        out = []
        for f in sorted((self.root / "log").glob("*")):
            out.append(f"--- {f.name}\n{f.read_text(errors='replace')[-3000:]}")
        return "\n".join(out)

    def start(self, timeout: float = 60) -> None:
        for d in ("state", "spool", "log", "munge"):
            (self.root / d).mkdir(mode=0o755, exist_ok=True)
        munge_socket = self.root / "munge" / "munge.socket"
        conf = write_conf(self.root, munge_socket)
        self.env = {**os.environ, "SLURM_CONF": str(conf)}
        self._srun_shim(conf)
        self.steps_before = slurmstepd_pids()
        ensure_munge_key()
        # --force: as root, munged otherwise refuses a key owned by the munge user.
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={munge_socket}",
                               f"--key-file={MUNGE_KEY}", f"--pid-file={self.root}/munge/munged.pid",
                               f"--log-file={self.root}/log/munged.log",
                               f"--seed-file={self.root}/munge/munged.seed"])
        self._wait("munged", lambda: munge_socket.exists(), 15)
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(conf)])
        self._wait("slurmctld", lambda: self.run("scontrol", "ping", check=False).stdout.count("UP") >= 1, 30)
        self._spawn("slurmd", ["slurmd", "-D", "-f", str(conf)])
        self._wait("the node to be idle", lambda: self.node_state() == "idle", timeout)

    def _srun_shim(self, conf: Path) -> None:
        """An `srun` first on PATH that restores SLURM_CONF. snakemake-executor-plugin-slurm-jobstep
        (0.6.1) drops every SLURM_* variable but the job ids before the srun inside a job, so srun
        would look for /etc/slurm/slurm.conf (or DNS SRV records) and fail with "Could not
        establish a configuration source". Only needed because this cluster's slurm.conf is not
        at the default path; sbatch passes PATH on (--export=ALL)."""
        bindir = self.root / "bin"
        bindir.mkdir(exist_ok=True)
        shim = bindir / "srun"
        shim.write_text(f'#!/bin/sh\nSLURM_CONF={conf}\nexport SLURM_CONF\nexec {shutil.which("srun")} "$@"\n')
        shim.chmod(0o755)
        self.env["PATH"] = f"{bindir}:{self.env.get('PATH', '')}"

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-N", "-o", "%t", check=False).stdout.strip()

    def stop(self) -> None:
        """Cancel every job, then stop the daemons this cluster started (its own PIDs only), newest first."""
        if any(name == "slurmctld" and proc.poll() is None for name, proc in self.procs):
            with contextlib.suppress(Exception):
                self.run("scancel", "--full", "--user", "root", check=False)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    q = self.run("squeue", "-h", "-o", "%i", check=False)
                    if q.returncode != 0 or not q.stdout.strip():
                        break
                    time.sleep(0.5)
        for _name, proc in reversed(self.procs):
            terminate(proc, 20)
        # job steps started by our slurmd are daemonised; wait for them to end after the cancel
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.leftover_steps():
            time.sleep(0.5)

    def leftover_steps(self) -> set[int]:
        return {p for p in slurmstepd_pids() - self.steps_before if _alive(p)}

    def leftovers(self) -> list[int]:
        """PIDs of started daemons or job steps still alive (should be empty after stop)."""
        return [p for p in self.pids if _alive(p)] + sorted(self.leftover_steps())


@contextlib.contextmanager
def single_node_cluster(root: Path, timeout: float = 60):
    cluster = Cluster(Path(root))
    try:
        cluster.start(timeout=timeout)
        yield cluster
    finally:
        cluster.stop()
