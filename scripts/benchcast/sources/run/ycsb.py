"""YCSB: workload properties out, YCSB measurement files in.

Workloads are the paper's four read/update mixes (``write-only`` 0/100, ``write-heavy`` 50/50,
``read-heavy`` 95/5, ``read-only`` 100/0, zipfian) and YCSB's core workloads ``a`` .. ``f``. A data
size in bytes becomes a record count: ``data_size // (fieldcount * fieldlength)`` (keys not counted).

The bindings are benchcast's own (``ycsb/``, built into one jar by :func:`build_jar` or
``scripts/build_ycsb.sh``): ``rocksdb`` (embedded RocksDB in a directory on the device under test)
and ``mariadb`` (a throwaway server, :mod:`benchcast.sources.run.mariadb`, with its datadir on the device).

YCSB writes its measurements (hdrhistogram, so percentiles are real) with the text exporter to a
file, which :mod:`benchcast.sources.parse.ycsbout` turns into records.

:func:`run_ycsb` loads once per repeat and runs the workloads in the given order on that data
(or reloads per workload); the choice is kept in the ``reload`` provenance column.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import platform
import subprocess
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ... import BenchcastError
from ...records import blockio
from . import deadline
from ... import records as rec
from .mariadb import die_with_parent
from ...config.settings import YcsbSettings
from ..parse.ycsbout import histogram_logs, parse  # noqa: F401  (re-exported: a phase's records)
from ...core.vocabulary import YCSB_ENGINES
from ...core.workloads import CORE_WORKLOADS, PAPER_WORKLOADS, WORKLOADS  # noqa: F401  (re-exported)

YCSB_VERSION = "0.17.0"
ROOT = Path(__file__).resolve().parents[4]
#: The Maven module of the bindings, and where a plain ``mvn package`` in it puts the jar.
MODULE = ROOT / "ycsb"
DEFAULT_JAR = MODULE / "target" / "benchcast-ycsb.jar"

ENGINES = YCSB_ENGINES

#: operationcount when only maxexecutiontime bounds a run (Java int range).
UNBOUNDED_OPS = 2_000_000_000

#: Properties common to every load and run.
BASE_PROPERTIES = {
    "workload": "site.ycsb.workloads.CoreWorkload",
    "readallfields": "true",
    "measurementtype": "hdrhistogram",
    "hdrhistogram.percentiles": "50,95,99,99.9",
    # one histogram log per operation beside the measurements (hdrhistogram.output.path per phase)
    "hdrhistogram.fileoutput": "true",
    "exporter": "site.ycsb.measurements.exporter.TextMeasurementsExporter",
}



# ----------------------------------------------------------------------------------------- properties

def workload_names() -> list[str]:
    return list(WORKLOADS)


def record_count(data_size, fieldcount: int, fieldlength: int) -> int:
    """Records needed for ``data_size`` bytes of field data (at least 1)."""
    nbytes = rec.parse_size(data_size, "ycsb data_size")
    if fieldcount < 1 or fieldlength < 1:
        raise BenchcastError(f"ycsb: fieldcount and fieldlength must be >= 1, not {fieldcount}, {fieldlength}")
    return max(1, nbytes // (fieldcount * fieldlength))


def workload_properties(workload: str, data_size, *, fieldcount: int, fieldlength: int,
                        operationcount: int | None = None, maxexecutiontime: float | None = None,
                        extra: dict | None = None) -> dict[str, str]:
    """YCSB properties of one workload at one data size.

    Give ``operationcount`` or ``maxexecutiontime`` (seconds) or both (YCSB stops at whichever comes
    first); with only a time, operationcount is :data:`UNBOUNDED_OPS` (YCSB 0.17.0 runs no client
    thread at all with operationcount=0). ``extra`` overrides anything.
    """
    if workload not in WORKLOADS:
        raise BenchcastError(f"ycsb: unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    if operationcount is None and maxexecutiontime is None:
        raise BenchcastError(f"ycsb workload {workload}: give operationcount or maxexecutiontime")
    props = dict(BASE_PROPERTIES)
    props.update(WORKLOADS[workload])
    props["recordcount"] = str(record_count(data_size, fieldcount, fieldlength))
    props["fieldcount"] = str(int(fieldcount))
    props["fieldlength"] = str(int(fieldlength))
    props["operationcount"] = str(int(operationcount) if operationcount is not None else UNBOUNDED_OPS)
    if maxexecutiontime is not None:
        props["maxexecutiontime"] = str(int(maxexecutiontime))
    for key, val in (extra or {}).items():
        props[str(key)] = str(val)
    return props


def properties_text(props: dict, comment: str = "") -> str:
    """A Java properties file (one ``key=value`` a line, sorted)."""
    lines = [f"# {line}" for line in comment.splitlines()]
    for key, val in sorted(props.items()):
        if "\n" in str(val) or "\n" in str(key):
            raise BenchcastError(f"ycsb property {key!r}: value contains a newline")
        lines.append(f"{key}={val}")
    return "\n".join(lines) + "\n"


def command(phase: str, *, jar, engine: str, props_file, threads: int, overrides: dict | None = None,
            java: str = "java", jvm_args=()) -> list[str]:
    """``java -cp JAR site.ycsb.Client -load|-t -db CLASS -P PROPS -p k=v ... -threads N -s``."""
    if phase not in ("load", "run"):
        raise BenchcastError(f"ycsb: phase must be load or run, not {phase!r}")
    if engine not in ENGINES:
        raise BenchcastError(f"ycsb: unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    cmd = [java, *jvm_args, "-cp", str(jar), "site.ycsb.Client", "-load" if phase == "load" else "-t",
           "-db", ENGINES[engine], "-P", str(props_file)]
    for key, val in (overrides or {}).items():
        cmd += ["-p", f"{key}={val}"]
    cmd += ["-threads", str(int(threads))]
    cmd.append("-s")  # status lines on stderr
    return cmd


# -------------------------------------------------------------------------------------------- parsing


# ------------------------------------------------------------------------------------------ execution

#: RocksDB's native library for this machine, as rocksdbjni names it inside its jar.
_ROCKSDB_LIBS = {"x86_64": "librocksdbjni-linux64.so", "aarch64": "librocksdbjni-linux-aarch64.so"}


def quick_start(jar, engine: str, *, write_archive: bool = False) -> list[str]:
    """JVM arguments that shorten a YCSB phase's start and leave what it measures alone.

    Kept beside the jar in ``<jar stem>.jvm/<size>-<mtime>/``, so a rebuilt jar gets its own:

    - RocksDB's native library, unpacked once and found on ``java.library.path`` (rocksdbjni
      otherwise unpacks its 17 MB into the temporary directory at every start);
    - the engine's classes in a class-data-sharing archive (``ENGINE.jsa``). With ``write_archive``
      and no archive yet, the JVM writes one as it exits, after YCSB has written its measurements:
      :func:`keep_archive` then puts it in place.

    A JVM that cannot use an archive (another Java) starts without it.
    """
    jar = Path(jar)
    st = jar.stat()
    cache = jar.parent / f"{jar.stem}.jvm" / f"{st.st_size}-{st.st_mtime_ns}"
    cache.mkdir(parents=True, exist_ok=True)
    args = []
    lib = _ROCKSDB_LIBS.get(platform.machine()) if engine == "rocksdb" and os.uname().sysname == "Linux" else None
    if lib and not (cache / lib).exists():
        with zipfile.ZipFile(jar) as z:
            if lib in z.namelist():
                part = cache / f"{lib}.{os.getpid()}.part"
                with z.open(lib) as src, open(part, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(part, cache / lib)
    if lib and (cache / lib).exists():
        args.append(f"-Djava.library.path={cache}")
    archive = cache / f"{engine}.jsa"
    if archive.exists():
        args.append(f"-XX:SharedArchiveFile={archive}")
    elif write_archive:
        # without its warnings about classes it leaves out (old class files)
        args += [f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}.part", "-Xlog:cds=off"]
    return args


def keep_archive(args: list[str], ok: bool) -> None:
    """Put the archive that a phase started with ``args`` (:func:`quick_start`) wrote in place, or
    remove it when the phase failed."""
    for arg in args:
        if arg.startswith("-XX:ArchiveClassesAtExit="):
            part = Path(arg.split("=", 1)[1])
            if ok and part.exists():
                os.replace(part, part.with_name(part.name.rsplit(".", 2)[0]))
            else:
                part.unlink(missing_ok=True)


def _mask(cmd: list[str]) -> str:
    return " ".join(re.sub(r"^(db\.passwd=).*", r"\1***", a) for a in cmd)


@dataclass(frozen=True)
class Phase:
    """One YCSB load or run phase: what it runs (``props`` in the properties file, ``overrides`` as
    ``-p``), with how many client threads, its files ``PREFIX.*``, the JVM's own arguments."""

    phase: str
    engine: str
    props: dict
    overrides: dict
    threads: int
    prefix: Path
    jvm_args: tuple = ()
    timeout: tuple[float, str] | None = None  # (seconds, how they were made); None: no deadline


def run_phase(p: Phase, jar, java: str = "java", columns: dict | None = None) -> pd.DataFrame:
    """Run one YCSB load or run phase and return its records.

    Writes ``PREFIX.properties``, ``PREFIX.cmd``, ``PREFIX.out`` (stdout), ``PREFIX.err`` (stderr,
    status lines) and ``PREFIX.txt`` (the measurements). Raises on a non-zero exit, a timeout (the JVM
    is killed) or failed operations; errors name the files.
    """
    prefix = Path(p.prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    props_file = prefix.with_name(prefix.name + ".properties")
    export = prefix.with_name(prefix.name + ".txt")
    export.unlink(missing_ok=True)
    props_file.write_text(properties_text(p.props, comment=f"benchcast ycsb {p.phase} ({p.engine})"))
    for old in histogram_logs(export):
        old.unlink()
    overrides = {**p.overrides, "exportfile": export, "hdrhistogram.output.path": f"{prefix}."}
    cmd = command(p.phase, jar=jar, engine=p.engine, props_file=props_file, overrides=overrides,
                  threads=p.threads, java=java, jvm_args=p.jvm_args)
    prefix.with_name(prefix.name + ".cmd").write_text(_mask(cmd) + "\n")
    err_path = prefix.with_name(prefix.name + ".err")
    started = time.monotonic()
    with open(prefix.with_name(prefix.name + ".out"), "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=die_with_parent(os.getpid(), signal.SIGKILL))
        try:
            rc = proc.wait(timeout=p.timeout[0] if p.timeout else None)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            what = deadline.expired(f"the YCSB client ({p.phase}, {p.engine})", *p.timeout)
            raise BenchcastError(f"{export}: {what} (see {err_path})") from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    elapsed = time.monotonic() - started
    if rc != 0:
        tail = " | ".join(err_path.read_text(errors="replace").strip().splitlines()[-5:])
        raise BenchcastError(f"{export}: YCSB {p.phase} ({p.engine}) exited with {rc}: {tail} (see {err_path})")
    try:
        df = parse(export, **(columns or {}))
    except BenchcastError as exc:
        # YCSB's client threads die with a Java exception but the process exits 0: name it
        lines = err_path.read_text(errors="replace").splitlines()
        cause = next((ln.strip() for ln in lines if "Exception" in ln or "Error:" in ln), "")
        raise BenchcastError(f"{exc}{'; ' + cause if cause else ''} (see {err_path})") from None
    df["phase"] = p.phase
    df["wall_s"] = round(elapsed, 3)
    df["raw"] = str(export)
    return df


@dataclass(frozen=True)
class Place:
    """Where and how one YCSB job runs, beside its settings (:class:`benchcast.config.settings.YcsbSettings`):
    the database goes under ``device_dir``, raw files under ``out_dir/r{run}/``, records are named
    ``study`` and ``device``. ``runs``: the run indices (one load each); ``io_counter``: a function
    returning the device's I/O counters (:func:`benchcast.devices.io_counters`), read before and
    after each workload run, the difference becoming op ``device`` records per operation
    (:mod:`benchcast.records.blockio`); ``run_properties``: properties of the run phases only, over everything
    (the record count too); ``load_threads``: the load's client threads (default the settings'
    threads); ``keep_data``: leave the database in place."""

    device_dir: Path
    jar: Path
    out_dir: Path
    study: str
    device: str
    runs: tuple[int, ...] = (0,)
    io_counter: Callable | None = None
    run_properties: dict = field(default_factory=dict)
    load_threads: int | None = None
    java: str = "java"
    jvm_args: tuple = ()
    timeout: float | None = None
    keep_data: bool = False


def _provenance(engine: str, s: YcsbSettings) -> dict:
    """What every record of a job carries about how it was measured (the password left out)."""
    versions = binding_versions()
    return {
        "ycsb_version": YCSB_VERSION, "binding": ENGINES[engine],
        "binding_lib": (f"rocksdbjni {versions.get('rocksdbjni.version', '?')}" if engine == "rocksdb"
                        else f"mariadb-java-client {versions.get('mariadb.jdbc.version', '?')}"),
        "reload": "per-workload" if s.reload_per_workload else "once",
        "fieldcount": int(s.fieldcount), "fieldlength": int(s.fieldlength),
        "operationcount": int(s.operationcount or 0), "maxexecutiontime": float(s.maxexecutiontime or 0),
        "load_mode": "fast" if s.fast_load else "measured settings",
    }


def run_ycsb(engine: str, data_size, s: YcsbSettings, at: Place) -> pd.DataFrame:
    """Load and run the settings' YCSB workloads on one device with one engine at one data size;
    return records.

    For each run of ``at.runs`` the data is loaded into a fresh database under ``at.device_dir``
    (RocksDB directory, or MariaDB datadir of a fresh server, :func:`benchcast.sources.run.mariadb.server` with
    the settings' ``mariadb``), then the workloads run in the given order on that data; with
    ``reload_per_workload`` every workload gets a freshly loaded database instead. Records of the
    first load of a run are returned with workload ``load`` (op ``insert``). The database is removed
    afterwards unless ``at.keep_data``. A workload that inserts (d, e) grows the record count seen
    by the next workload on the same data. Every setting is kept as provenance.

    ``fast_load``: the load is not a measurement, so it runs without a sync per insert (RocksDB
    ``rocksdb.sync=false``; MariaDB ``innodb_flush_log_at_trx_commit=0`` and batched inserts, the
    server's own setting restored before the workloads run).
    """
    if engine not in ENGINES:
        raise BenchcastError(f"ycsb: unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if not Path(at.jar).is_file():
        raise BenchcastError(f"ycsb: jar {at.jar} not found (build it with scripts/build_ycsb.sh)")
    if not Path(at.device_dir).is_dir():
        raise BenchcastError(f"ycsb: device directory {at.device_dir} does not exist")
    nbytes = rec.parse_size(data_size, "ycsb data_size")
    provenance = _provenance(engine, s)
    for prefix, extra in (("prop", s.properties), ("runprop", at.run_properties)):
        for key, val in sorted(extra.items()):
            if key != "db.passwd":
                provenance[f"{prefix}_{key}"] = str(val)
    common = {"study": at.study, "device": at.device, "engine": engine, "threads": int(s.threads),
              "data_size": nbytes, **provenance}
    frames = []
    for run in at.runs:
        if s.reload_per_workload:
            units = [(f"{i:02d}-{w}-", [(i, w)]) for i, w in enumerate(s.workloads, start=1)]
        else:
            units = [("", list(enumerate(s.workloads, start=1)))]
        for u, (label, unit) in enumerate(units):
            data_dir = Path(at.device_dir) / f"benchcast-ycsb-{engine}-r{run}{'-' + label[:-1] if label else ''}"
            frames += _run_unit(_Unit(engine, nbytes, data_dir, Path(at.out_dir) / f"r{run}", label, tuple(unit),
                                      run, u == 0, common), s, at)
    out = pd.concat(frames, ignore_index=True)
    return rec.check(out, where=f"ycsb {engine} {at.device}")


@dataclass(frozen=True)
class _Unit:
    """One load and the workloads run on it: raw files ``run_dir/{label}load.*`` and
    ``run_dir/{order:02d}-{name}.*``; ``keep_load``: its load's records are returned."""

    engine: str
    nbytes: int
    data_dir: Path
    run_dir: Path
    label: str
    workloads: tuple  # (order, name) pairs
    run: int
    keep_load: bool
    common: dict


def _sizes(s: YcsbSettings) -> dict:
    return {"fieldcount": s.fieldcount, "fieldlength": s.fieldlength, "operationcount": s.operationcount,
            "maxexecutiontime": s.maxexecutiontime}


def _run_unit(u: _Unit, s: YcsbSettings, at: Place) -> list[pd.DataFrame]:
    """Load a fresh database in ``u.data_dir`` and run the unit's workloads on it."""
    from . import mariadb

    if u.data_dir.exists():
        shutil.rmtree(u.data_dir)
    u.data_dir.mkdir(parents=True)
    try:
        if u.engine == "mariadb":
            server_ctx = mariadb.server(u.data_dir / "data", u.run_dir / f"{u.label}mariadb", s.mariadb)
        else:
            server_ctx = _null_server()
        with server_ctx as srv:
            conn = {"rocksdb.dir": str(u.data_dir / "db")} if srv is None else srv.ycsb_properties()
            columns = {**u.common, **(srv.provenance() if srv is not None else {})}
            df, records_now = _load(u, s, at, srv, conn, columns)
            frames = [df] if u.keep_load else []
            run_jvm = (*at.jvm_args, *quick_start(at.jar, u.engine))
            for order, w in u.workloads:
                props = workload_properties(w, u.nbytes, **_sizes(s),
                                            extra={**s.properties, "recordcount": records_now, **at.run_properties})
                io_before = at.io_counter() if at.io_counter else None
                phase = Phase("run", u.engine, props, conn, s.threads, u.run_dir / f"{order:02d}-{w}", run_jvm,
                              deadline.ycsb_phase(at.timeout, seconds=s.maxexecutiontime,
                                                  operations=s.operationcount))
                df = run_phase(phase, at.jar, at.java, {**columns, "workload": w, "run": u.run,
                                                         "recordcount": records_now, "order": order})
                frames.append(df)
                if at.io_counter:
                    io = _device_io(df, io_before, at.io_counter())
                    if not io.empty:  # the device has no counters (a tmpfs)
                        frames.append(io)
                inserted = df.loc[(df["op"] == "insert") & (df["metric"] == "ops"), "value"]
                records_now += int(inserted.sum())
    finally:
        if not at.keep_data:
            shutil.rmtree(u.data_dir, ignore_errors=True)
    return frames


def _load(u: _Unit, s: YcsbSettings, at: Place, srv, conn: dict, columns: dict) -> tuple[pd.DataFrame, int]:
    """The unit's load (its records, and the record count it made): every record inserted however
    long it takes; with ``fast_load`` without a sync per insert, the server's setting restored and
    the data made durable before the workloads."""
    props = workload_properties(u.workloads[0][1], u.nbytes, **_sizes(s), extra=s.properties)
    records_now = int(props["recordcount"])
    load_over = {**conn, "db.droptable": "true"} if u.engine == "mariadb" else dict(conn)
    load_over["maxexecutiontime"] = "0"  # a load inserts every record, however long it takes
    restore = None
    if s.fast_load:  # loads are not measured: no sync per insert, batched inserts
        if srv is None:
            load_over["rocksdb.sync"] = "false"
        else:
            load_over["db.batchsize"] = "100"
            restore = srv.sql("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").strip()
            srv.sql("SET GLOBAL innodb_flush_log_at_trx_commit=0")
    load_jvm = quick_start(at.jar, u.engine, write_archive=True)
    phase = Phase("load", u.engine, props, load_over, at.load_threads or s.threads, u.run_dir / f"{u.label}load",
                  (*at.jvm_args, *load_jvm), deadline.ycsb_phase(at.timeout, operations=records_now))
    try:
        df = run_phase(phase, at.jar, at.java, {**columns, "workload": "load", "run": u.run,
                                                 "recordcount": records_now, "order": 0})
    except BaseException:
        keep_archive(load_jvm, ok=False)
        raise
    keep_archive(load_jvm, ok=True)
    if restore is not None:  # the measured settings again, the loaded data made durable first
        srv.sql(f"SET GLOBAL innodb_flush_log_at_trx_commit={int(restore)}")
        srv.sql("FLUSH TABLES")
    return df, records_now


def _device_io(df: pd.DataFrame, before, after) -> pd.DataFrame:
    """The device I/O per operation of one run phase, as records beside the phase's own."""
    ops = df.loc[(df["metric"] == "ops") & (df["op"] != "overall"), "value"].sum()
    rows = blockio.per_op(before, after, float(ops))
    meta = df.drop(columns=["op", "metric", "unit", "value"]).iloc[0].to_dict()
    return pd.DataFrame([{**meta, **r} for r in rows], columns=df.columns)


class _null_server:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------------------------------------- build

def binding_versions(module=MODULE) -> dict[str, str]:
    """The pinned versions in ``ycsb/pom.xml`` ({'ycsb.version': '0.17.0', 'rocksdbjni.version': ...})."""
    try:
        text = (Path(module) / "pom.xml").read_text()
    except FileNotFoundError:
        return {}
    return dict(re.findall(r"<([a-z.]+\.version)>([^<]+)</", text))


def _newest_source(module: Path) -> float:
    files = [module / "pom.xml", *(module / "src").rglob("*")]
    return max(f.stat().st_mtime for f in files if f.is_file())


def build_jar(out=DEFAULT_JAR, *, module=MODULE, force: bool = False, timeout: float = 1800) -> Path:
    """Build the bindings jar into ``out`` with ``scripts/build_ycsb.sh`` (needs java and mvn), unless
    ``out`` is newer than every source of the module. Returns ``out``."""
    out, module = Path(out), Path(module)
    if not force and out.is_file() and out.stat().st_mtime >= _newest_source(module):
        return out
    for prog in ("java", "mvn"):
        if not shutil.which(prog):
            raise BenchcastError(f"ycsb: cannot build {out}: {prog} not found on PATH (use envs/ycsb.yaml)")
    script = ROOT / "scripts" / "build_ycsb.sh"
    try:
        res = subprocess.run(["bash", str(script), str(out)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchcastError(f"ycsb: building {out} timed out after {timeout}s") from None
    if res.returncode != 0:
        tail = " | ".join(res.stderr.strip().splitlines()[-8:])
        raise BenchcastError(f"ycsb: building {out} failed: {tail}")
    return out


__all__ = [
    "WORKLOADS", "PAPER_WORKLOADS", "CORE_WORKLOADS", "ENGINES", "YCSB_VERSION", "DEFAULT_JAR",
    "record_count", "workload_properties", "properties_text", "command", "parse", "histogram_logs",
    "run_phase", "run_ycsb", "Phase", "Place", "build_jar", "workload_names", "binding_versions",
]
