"""A throwaway MariaDB server for one benchmark: fresh datadir on the device under test, own socket
and loopback port, always shut down again.

    with mariadb.server(datadir, run_dir, {"buffer_pool_size": "16M"}) as srv:
        ... srv.ycsb_properties() ...   # db.url, db.user, db.passwd for benchcast.ycsb.JdbcClient

``datadir`` (on the device under test) is a copy of a datadir ``mariadb-install-db`` made (:func:`install_db`); ``run_dir`` (under the
results) holds the pid file, the error log and, when the path is short enough, the socket.
:func:`teardown_all` kills servers whose pid files lie under a directory (after a killed run).
The server also gets SIGTERM when the Python process that started it dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ... import BenchcastError
from ...core import host, stop
from ...records import parse_size

PID_FILE = "mariadbd.pid"
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")


def find_program(name: str) -> str:
    """Path of a MariaDB program (``mariadbd`` lives in /usr/sbin, often not on PATH)."""
    path = shutil.which(name) or shutil.which(name, path=os.pathsep.join(_SBIN))
    if not path:
        raise BenchcastError(f"mariadb: program {name} not found (install mariadb-server)")
    return path


def available() -> str | None:
    """None when the MariaDB server programs are installed, else the reason they are not usable."""
    try:
        for name in ("mariadbd", "mariadb-install-db", "mariadb-admin", "mariadb"):
            find_program(name)
    except BenchcastError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=None)
def version() -> str:
    """The server version, e.g. '10.11.19-MariaDB-0+deb12u1'."""
    out = subprocess.run([find_program("mariadbd"), "--version"], capture_output=True, text=True, timeout=30)
    words = out.stdout.split()
    return words[words.index("Ver") + 1] if "Ver" in words[:-1] else out.stdout.strip()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    """True when ``pid`` runs (and is not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except (FileNotFoundError, ProcessLookupError):
        return []


def die_with_parent(parent: int, sig=signal.SIGTERM):
    """A Popen ``preexec_fn``: new session, and ``sig`` when the process ``parent`` (this one) dies."""
    def preexec():
        os.setsid()
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, int(sig))  # PR_SET_PDEATHSIG
        except OSError:
            pass
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return "(no error log)"
    return " | ".join(text[-lines:])


@dataclass
class MariaDBServer:
    """A running server started by :func:`start`. Stop it with :meth:`stop` (idempotent)."""

    datadir: Path
    run_dir: Path
    socket: Path
    port: int
    pid: int
    database: str
    user: str
    password: str
    options: dict = field(default_factory=dict)
    version: str = ""
    _proc: subprocess.Popen | None = field(default=None, repr=False)
    _socket_tmp: str | None = field(default=None, repr=False)
    _ended: bool = field(default=False, repr=False)

    @property
    def error_log(self) -> Path:
        return self.run_dir / "mariadbd.err"

    def jdbc_url(self) -> str:
        return f"jdbc:mariadb://127.0.0.1:{self.port}/{self.database}"

    def ycsb_properties(self) -> dict[str, str]:
        """The connection properties of benchcast.ycsb.JdbcClient."""
        return {"db.url": self.jdbc_url(), "db.user": self.user, "db.passwd": self.password}

    def provenance(self) -> dict:
        """Server settings to keep with the results (no password)."""
        out = {"mariadb_version": self.version}
        out.update({f"mariadb_{k.replace('-', '_')}": v for k, v in sorted(self.options.items())})
        return out

    def sql(self, statement: str, *, database: str | None = None, timeout: float = 60) -> str:
        """Run SQL as root over the socket with the ``mariadb`` client; return its tab-separated output."""
        cmd = [find_program("mariadb"), "--no-defaults", f"--socket={self.socket}", "-uroot", "--batch",
               "--skip-column-names", "-e", statement]
        if database:
            cmd.append(database)
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BenchcastError(f"mariadb {self.datadir}: SQL timed out after {timeout}s: {statement[:80]}") from None
        if out.returncode != 0:
            raise BenchcastError(f"mariadb {self.datadir}: SQL failed: {out.stderr.strip()}")
        return out.stdout

    def running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return _alive(self.pid)

    def stop(self, timeout: float = 60) -> str | None:
        """Shut down: SIGTERM (mariadbd's normal shutdown; ``mariadb-admin shutdown`` would add a
        second, as it polls the pid file once a second), then SIGKILL, each with a bounded wait.
        Returns how the server ended other than by that shutdown (it had exited, or a signal not ours
        ended it while it shut down), or None: a result measured beside such a server is not kept."""
        unexpected = None
        try:
            if self.running():
                self._signal(signal.SIGTERM)
                if not self._wait(timeout):
                    self._signal(signal.SIGKILL)
                    if not self._wait(10):
                        raise BenchcastError(f"mariadb {self.datadir}: pid {self.pid} survived SIGKILL")
                elif self._proc is not None and self._proc.returncode not in (0, -signal.SIGTERM):
                    unexpected = f"ended with code {self._proc.returncode} during its shutdown"
            elif self._proc is not None and not self._ended:
                unexpected = f"had ended (code {self._proc.returncode}) before its shutdown"
        finally:
            self._ended = True
            if not self.running():
                (self.run_dir / PID_FILE).unlink(missing_ok=True)
                if self._socket_tmp:
                    shutil.rmtree(self._socket_tmp, ignore_errors=True)
                    self._socket_tmp = None
        return unexpected

    def _signal(self, sig) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def _wait(self, timeout: float) -> bool:
        if self._proc is not None:
            try:
                self._proc.wait(timeout=timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(self.pid):
                return True
            time.sleep(0.1)
        return not _alive(self.pid)


def config_defaults() -> dict:
    """The server settings' defaults: config/schema.yaml ``$defs/mariadb`` (the only place they live)."""
    from ... import config

    return config.defaults("mariadb")


def _default(key: str):
    return config_defaults()[key]


#: Where pristine datadirs are kept, one per server version, redo log size and user
#: (:func:`install_db`); ``BENCHCAST_MARIADB_TEMPLATES`` overrides it.
TEMPLATES = Path(os.environ.get("BENCHCAST_MARIADB_TEMPLATES") or host.cache_dir("mariadb"))


def install_db(datadir, log, *, log_file_size=None, timeout: float = 300) -> None:
    """Create a fresh MariaDB datadir (must not exist or be empty); ``log_file_size`` None: the
    schema's default. The datadir is a copy of a pristine one that ``mariadb-install-db`` made once
    for this server version, redo log size and user (:data:`TEMPLATES`): bootstrapping the system
    tables costs every job a third of a second of CPU, a copy writes the same files to the device."""
    log_file_size = parse_size(log_file_size or _default("log_file_size"), "innodb_log_file_size")
    datadir = Path(datadir)
    if datadir.exists() and any(datadir.iterdir()):
        raise BenchcastError(f"mariadb: datadir {datadir} exists and is not empty")
    template = _template(log_file_size, timeout)
    shutil.copytree(template, datadir, symlinks=True, dirs_exist_ok=True)
    Path(log).write_text(f"copied from {template} (made by mariadb-install-db, its log {template}.log)\n")


def _template(log_file_size: int, timeout: float) -> Path:
    """The pristine datadir for ``log_file_size`` (made on first use; a concurrent maker's copy wins)."""
    key = hashlib.sha1(json.dumps([version(), log_file_size, os.geteuid()]).encode()).hexdigest()[:12]
    final = TEMPLATES / key
    if (final / "mysql").is_dir():
        return final
    TEMPLATES.mkdir(parents=True, exist_ok=True)
    part = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=TEMPLATES))
    try:
        log = part / "install-db.log"
        cmd = [find_program("mariadb-install-db"), "--no-defaults", f"--datadir={part / 'data'}",
               "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
               f"--innodb-log-file-size={log_file_size}"]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        with open(log, "w") as f:
            try:
                out = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise BenchcastError(f"mariadb: mariadb-install-db timed out after {timeout}s (log {log})") from None
        if out.returncode != 0:
            raise BenchcastError(f"mariadb: mariadb-install-db failed: {_tail(log)}")
        os.replace(log, final.with_name(key + ".log"))
        try:
            os.rename(part / "data", final)
        except OSError:  # another job made it meanwhile
            if not (final / "mysql").is_dir():
                raise
    finally:
        shutil.rmtree(part, ignore_errors=True)
    return final


@dataclass(frozen=True)
class Account:
    """The database YCSB works in and the user it connects as (:func:`start` creates both)."""

    database: str = "ycsb"
    user: str = "ycsb"


def start(datadir, run_dir, settings: dict | None = None, *, account: Account = Account(),
          start_timeout: float = 120, install: bool = True) -> MariaDBServer:
    """Install (unless ``install=False``) and start a server; return once it accepts connections and
    ``account``'s database and user exist. Stops the server again if any of that fails.

    ``settings``: a source's ``mariadb`` mapping (``$defs/mariadb`` of the schema: buffer_pool_size,
    log_file_size, lru_scan_depth, and ``options``, further ``mariadbd`` options such as
    {"innodb-flush-method": "fsync"}, kept in provenance); what it leaves out is the schema's default.
    """
    settings = {**config_defaults(), **(settings or {})}
    buffer_pool_size, log_file_size = settings["buffer_pool_size"], settings["log_file_size"]
    lru_scan_depth, options = settings["lru_scan_depth"], settings.get("options")
    if err := available():
        raise BenchcastError(err)
    datadir, run_dir = Path(datadir).absolute(), Path(run_dir).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    if install:
        install_db(datadir, run_dir / "install-db.log", log_file_size=log_file_size)
    opts = {
        "innodb-buffer-pool-size": parse_size(buffer_pool_size, "innodb_buffer_pool_size"),
        "innodb-log-file-size": parse_size(log_file_size, "innodb_log_file_size"),
        "innodb-lru-scan-depth": int(lru_scan_depth),
    }
    opts.update({k.replace("_", "-"): v for k, v in (options or {}).items()})
    sock_tmp = None
    sock = run_dir / "mariadbd.sock"
    if len(str(sock).encode()) > 100:  # sun_path holds 108 bytes
        sock_tmp = tempfile.mkdtemp(prefix="bcmdb-")
        sock = Path(sock_tmp) / "mariadbd.sock"
    ver = version()
    last_error = ""
    for _attempt in range(3):
        port = free_port()
        cmd = [find_program("mariadbd"), "--no-defaults", f"--datadir={datadir}", f"--socket={sock}",
               f"--port={port}", "--bind-address=127.0.0.1", f"--pid-file={run_dir / PID_FILE}",
               f"--log-error={run_dir / 'mariadbd.err'}", "--skip-name-resolve", "--skip-log-bin"]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        cmd += [f"--{k}={v}" for k, v in opts.items()]
        (run_dir / "mariadbd.cmd").write_text(" ".join(cmd) + "\n")
        with open(run_dir / "mariadbd.out", "a") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=die_with_parent(os.getpid()))
        (run_dir / PID_FILE).write_text(f"{proc.pid}\n")
        (run_dir / "mariadbd.json").write_text(json.dumps({"pid": proc.pid, "datadir": str(datadir),
                                                            "port": port, "socket": str(sock)}) + "\n")
        srv = MariaDBServer(datadir=datadir, run_dir=run_dir, socket=sock, port=port, pid=proc.pid,
                            database=account.database, user=account.user, password=secrets.token_hex(12), options=opts,
                            version=ver, _proc=proc, _socket_tmp=sock_tmp)
        try:
            if _wait_ready(srv, start_timeout):
                _create_database(srv)
                return srv
            last_error = _tail(srv.error_log)
        except BaseException:
            srv.stop()
            raise
        srv.stop()
        if "Address already in use" not in last_error and "Bind on TCP/IP port" not in last_error:
            break
    if sock_tmp:
        shutil.rmtree(sock_tmp, ignore_errors=True)
    raise BenchcastError(f"mariadb: server on {datadir} did not start: {last_error}")


def _wait_ready(srv: MariaDBServer, timeout: float) -> bool:
    admin = find_program("mariadb-admin")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not srv.running():
            return False
        if not srv.socket.exists():  # a look at the file system: often (a start takes about 0.2 s)
            time.sleep(0.02)
            continue
        ping = subprocess.run([admin, "--no-defaults", f"--socket={srv.socket}", "-uroot",
                               "--connect-timeout=2", "ping"], capture_output=True, timeout=30)
        if ping.returncode == 0:
            return True
        time.sleep(0.1)
    raise BenchcastError(f"mariadb: server on {srv.datadir} not ready after {timeout}s: {_tail(srv.error_log)}")


def _create_database(srv: MariaDBServer) -> None:
    srv.sql(
        f"CREATE DATABASE IF NOT EXISTS `{srv.database}`; "
        f"CREATE USER IF NOT EXISTS '{srv.user}'@'127.0.0.1' IDENTIFIED BY '{srv.password}'; "
        f"GRANT ALL PRIVILEGES ON `{srv.database}`.* TO '{srv.user}'@'127.0.0.1'; FLUSH PRIVILEGES;"
    )


@contextlib.contextmanager
def server(datadir, run_dir, settings: dict | None = None, *, stop_timeout: float = 60, **kwargs):
    """Context manager over :func:`start`: yields the running :class:`MariaDBServer` and shuts it down
    on exit, also when the body raised. While it runs, SIGTERM to this (main-thread) process raises
    SystemExit so that the server is shut down before the process ends."""
    srv = start(datadir, run_dir, settings, **kwargs)
    old = None
    try:
        with contextlib.suppress(ValueError):  # not in the main thread
            old = signal.signal(signal.SIGTERM, _raise_exit)
        yield srv
    except BaseException:
        srv.stop(timeout=stop_timeout)
        raise
    else:
        unexpected = srv.stop(timeout=stop_timeout)
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    if unexpected:
        raise BenchcastError(f"mariadb {srv.datadir}: the server {unexpected}; what was measured beside it "
                             "is not kept")


def _raise_exit(signum, frame):
    raise SystemExit(128 + signum)


def teardown_all(directory, timeout: float = 30) -> list[int]:
    """Kill the MariaDB servers whose pid files (``mariadbd.pid``) lie under ``directory``: SIGTERM, then
    SIGKILL after ``timeout`` s. Only processes that are mariadbd are signalled. Returns their pids."""
    directory = Path(directory)
    if not directory.exists():
        return []
    victims = []
    for pid_file in stop.files_named(directory, PID_FILE):
        try:
            pid = int(pid_file.read_text().split()[0])
        except (ValueError, IndexError, OSError):
            continue
        cmd = _cmdline(pid)
        if _alive(pid) and cmd and Path(cmd[0]).name.startswith("mariadbd"):
            victims.append((pid, pid_file))
        else:
            pid_file.unlink(missing_ok=True)
    for pid, _ in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(p) for p, _ in victims):
        time.sleep(0.1)
    for pid, _ in victims:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p, _ in victims):
        time.sleep(0.1)
    still = [p for p, _ in victims if _alive(p)]
    if still:
        raise BenchcastError(f"mariadb: teardown_all {directory}: pid(s) {still} survived SIGKILL")
    for _, pid_file in victims:
        pid_file.unlink(missing_ok=True)
    return [p for p, _ in victims]


def main(argv=None) -> int:
    """python -m benchcast.mariadb teardown-all DIR: stop the servers a killed run left under DIR."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m benchcast.mariadb")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("teardown-all", help="stop every MariaDB server whose pid file lies under DIR")
    s.add_argument("directory")
    args = p.parse_args(argv)
    try:
        pids = teardown_all(args.directory)
    except BenchcastError as exc:
        print(f"benchcast: {exc}", file=sys.stderr)
        return 1
    for pid in pids:
        print(f"stopped MariaDB server {pid} under {args.directory}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
