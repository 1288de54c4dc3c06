"""YCSB: workload properties out, YCSB measurement files in.

Workloads are the paper's four read/update mixes (``write-only`` 0/100, ``write-heavy`` 50/50,
``read-heavy`` 95/5, ``read-only`` 100/0, zipfian) and YCSB's core workloads ``a`` .. ``f``. A data
size in bytes becomes a record count: ``data_size // (fieldcount * fieldlength)`` (keys not counted).

The bindings are benchcast's own (``ycsb/``, built into one jar by :func:`build_jar` or
``scripts/build_ycsb.sh``): ``rocksdb`` (embedded RocksDB in a directory on the device under test)
and ``mariadb`` (a throwaway server, :mod:`benchcast.mariadb`, with its datadir on the device).

YCSB writes its measurements (hdrhistogram, so percentiles are real) with the text exporter to a
file; :func:`parse` turns that file into records (benchmark ``ycsb``; op ``read``, ``update``,
``insert``, ``scan``, ``read-modify-write``, ``delete``, ``overall``; metric ``lat_mean``,
``lat_p50``, ``lat_p95``, ``lat_p99``, ``lat_p99.9`` in us, ``ops`` count, and for ``overall``
``throughput`` in ops/s and ``runtime`` in ms). Any Return code other than OK (or BATCHED_OK), or
any failed op, is an error. YCSB's histogram logs beside that file (``<stem>.<OP>.hdr``,
:func:`histogram_logs`) become one ``lat_hdr`` record per operation: value the operation count, the
whole run's histogram in the ``hdr`` column (:mod:`benchcast.hdr`), so that aggregation can merge
repeats into true percentiles.

:func:`run_ycsb` loads once per repeat and runs the workloads in the given order on that data
(or reloads per workload); the choice is kept in the ``reload`` provenance column.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import platform
import subprocess
import time
import zipfile
from pathlib import Path

import pandas as pd

from . import BenchcastError, blockio
from . import records as rec
from .mariadb import die_with_parent
from .workloads import CORE_WORKLOADS, PAPER_WORKLOADS, WORKLOADS  # noqa: F401  (re-exported)

YCSB_VERSION = "0.17.0"
ROOT = Path(__file__).resolve().parents[2]
#: The Maven module of the bindings, and where a plain ``mvn package`` in it puts the jar.
MODULE = ROOT / "ycsb"
DEFAULT_JAR = MODULE / "target" / "benchcast-ycsb.jar"

ENGINES = {
    "rocksdb": "benchcast.ycsb.RocksDBClient",
    "mariadb": "benchcast.ycsb.JdbcClient",
}

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

#: The operations YCSB reports (CLEANUP, the client's own, is skipped).
OPERATIONS = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "OVERALL"}
#: The return codes of a successful operation.
OK_CODES = {"OK", "BATCHED_OK"}
_METRICS = {
    "AverageLatency(us)": ("lat_mean", "us"),
    "50thPercentileLatency(us)": ("lat_p50", "us"),
    "95thPercentileLatency(us)": ("lat_p95", "us"),
    "99thPercentileLatency(us)": ("lat_p99", "us"),
    "99.9PercentileLatency(us)": ("lat_p99.9", "us"),
    "Operations": ("ops", "ops"),
}
_OVERALL = {"Throughput(ops/sec)": ("throughput", "ops/s"), "RunTime(ms)": ("runtime", "ms")}
_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?),\s*(\S+)\s*$")


# ----------------------------------------------------------------------------------------- properties

def workload_names() -> list[str]:
    return list(WORKLOADS)


def record_count(data_size, fieldcount: int = 10, fieldlength: int = 100) -> int:
    """Records needed for ``data_size`` bytes of field data (at least 1)."""
    nbytes = rec.parse_size(data_size, "ycsb data_size")
    if fieldcount < 1 or fieldlength < 1:
        raise BenchcastError(f"ycsb: fieldcount and fieldlength must be >= 1, not {fieldcount}, {fieldlength}")
    return max(1, nbytes // (fieldcount * fieldlength))


def workload_properties(workload: str, data_size, *, fieldcount: int = 10, fieldlength: int = 100,
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


def command(phase: str, *, jar, engine: str, props_file, overrides: dict | None = None, threads: int = 1,
            java: str = "java", jvm_args=(), status: bool = True) -> list[str]:
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
    if status:
        cmd.append("-s")
    return cmd


# -------------------------------------------------------------------------------------------- parsing

def _json_entries(text: str, where: str):
    """(name, key, value) of YCSB's JSON exporters: JSONArrayMeasurementsExporter (one array) or
    JSONMeasurementsExporter (objects one after another), each {"metric", "measurement", "value"}."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    text = text.strip()
    while pos < len(text):
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise BenchcastError(f"{where}: YCSB JSON output is malformed ({exc.msg} at line {exc.lineno})") from None
        for item in obj if isinstance(obj, list) else [obj]:
            if not isinstance(item, dict) or not {"metric", "measurement", "value"} <= set(item):
                raise BenchcastError(f"{where}: YCSB JSON entries need metric, measurement and value")
            out.append((str(item["metric"]), str(item["measurement"]), str(item["value"])))
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
    return out


def _text_entries(text: str):
    """(name, key, value) of the lines of YCSB's text exporter: ``[UPDATE], AverageLatency(us), 12.5``."""
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            yield m.group(1).strip(), m.group(2).strip(), m.group(3)


def parse_text(text: str, where: str) -> dict:
    """Parse YCSB output (the text exporter's lines or either JSON exporter's entries) into
    ``{"ops": {(op, metric): value}, "returns": {op: {code: n}}, "failed": {name: n}}``. Raises on
    output without any measurement."""
    values: dict[tuple[str, str], float] = {}
    returns: dict[str, dict[str, int]] = {}
    failed: dict[str, int] = {}
    head = text.lstrip()[:200]
    is_json = head.startswith("{") or (head.startswith("[") and head[1:].lstrip().startswith("{"))
    for name, key, raw in (_json_entries(text, where) if is_json else _text_entries(text)):
        if name.startswith("TOTAL_GC") or name == "CLEANUP":
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if name not in OPERATIONS:
            # READ-FAILED, or READ-NOT_FOUND when latency is tracked per error code
            failed[name] = failed.get(name, 0) + (int(value) if key == "Operations" else 0)
            continue
        if key.startswith("Return="):
            returns.setdefault(name.lower(), {})[key[len("Return="):]] = int(value)
            continue
        table = _OVERALL if name == "OVERALL" else _METRICS
        if key in table:
            values[(name.lower(), table[key][0])] = value
    if not values:
        raise BenchcastError(f"{where}: no YCSB measurements found")
    if ("overall", "throughput") not in values:
        raise BenchcastError(f"{where}: no [OVERALL] throughput line (YCSB did not finish?)")
    if not any(op != "overall" for op, _ in values) and not failed:
        raise BenchcastError(f"{where}: YCSB measured no operations (no client thread ran?)")
    return {"ops": values, "returns": returns, "failed": failed}


def check_ok(parsed: dict, where: str) -> None:
    """Raise when YCSB reported any return code other than OK or any failed operation."""
    bad = [f"{op} Return={code} x{n}" for op, codes in sorted(parsed["returns"].items())
           for code, n in sorted(codes.items()) if code not in OK_CODES and n]
    bad += [f"{name} x{n}" for name, n in sorted(parsed["failed"].items())]
    if bad:
        raise BenchcastError(f"{where}: YCSB reported failed operations: {', '.join(bad)}")


def histogram_logs(path) -> list[Path]:
    """YCSB's histogram logs of the measurement file ``path``: ``<stem>.<OP>.hdr`` beside it (YCSB
    run with ``hdrhistogram.output.path=<stem>.``)."""
    path = Path(path)
    return sorted(path.parent.glob(glob.escape(path.stem) + ".*.hdr"))


def parse(path, **columns) -> pd.DataFrame:
    """Records of one YCSB measurement file and its histogram logs (:func:`histogram_logs`);
    ``columns`` are added to every row (study, device, engine, workload, threads, data_size, run,
    provenance ...). Raises on failed operations."""
    from . import hdr

    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no such YCSB output file") from None
    parsed = parse_text(text, str(path))
    check_ok(parsed, str(path))
    rows = []
    for (op, metric), value in parsed["ops"].items():
        unit = (_OVERALL if op == "overall" else _METRICS)
        unit = next(u for m, u in unit.values() if m == metric)
        rows.append({"op": op, "metric": metric, "unit": unit, "value": value})
    measured = {op for op, _ in parsed["ops"]}
    for log in histogram_logs(path):
        name, hist = hdr.read_log(log)
        if name.lower() in measured and name != "OVERALL":
            rows.append({"op": name.lower(), "metric": "lat_hdr", "unit": "ops",
                         "value": float(hist.get_total_count()), "hdr": hdr.encode(hist)})
    base = {"study": "", "device": "", "source": "ycsb", "benchmark": "ycsb", "engine": "", "workload": "",
            "block_size": 0, "threads": 0, "data_size": 0, "run": 0}
    base.update(columns)
    return rec.make(rows, **base)


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


def run_phase(phase: str, *, engine: str, jar, props: dict, overrides: dict, threads: int, prefix,
              java: str = "java", jvm_args=(), timeout: float | None = None, columns: dict | None = None
              ) -> pd.DataFrame:
    """Run one YCSB load or run phase and return its records.

    Writes ``PREFIX.properties``, ``PREFIX.cmd``, ``PREFIX.out`` (stdout), ``PREFIX.err`` (stderr,
    status lines) and ``PREFIX.txt`` (the measurements). Raises on a non-zero exit, a timeout (the JVM
    is killed) or failed operations; errors name the files.
    """
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    props_file = prefix.with_name(prefix.name + ".properties")
    export = prefix.with_name(prefix.name + ".txt")
    export.unlink(missing_ok=True)
    props_file.write_text(properties_text(props, comment=f"benchcast ycsb {phase} ({engine})"))
    for old in histogram_logs(export):
        old.unlink()
    overrides = {**overrides, "exportfile": export, "hdrhistogram.output.path": f"{prefix}."}
    cmd = command(phase, jar=jar, engine=engine, props_file=props_file, overrides=overrides,
                  threads=threads, java=java, jvm_args=jvm_args)
    prefix.with_name(prefix.name + ".cmd").write_text(_mask(cmd) + "\n")
    out_path = prefix.with_name(prefix.name + ".out")
    err_path = prefix.with_name(prefix.name + ".err")
    started = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=die_with_parent(os.getpid(), signal.SIGKILL))
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise BenchcastError(f"{export}: YCSB {phase} ({engine}) killed after {timeout}s (see {err_path})") from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    elapsed = time.monotonic() - started
    if rc != 0:
        tail = " | ".join(err_path.read_text(errors="replace").strip().splitlines()[-5:])
        raise BenchcastError(f"{export}: YCSB {phase} ({engine}) exited with {rc}: {tail} (see {err_path})")
    try:
        df = parse(export, **(columns or {}))
    except BenchcastError as exc:
        # YCSB's client threads die with a Java exception but the process exits 0: name it
        lines = err_path.read_text(errors="replace").splitlines()
        cause = next((ln.strip() for ln in lines if "Exception" in ln or "Error:" in ln), "")
        raise BenchcastError(f"{exc}{'; ' + cause if cause else ''} (see {err_path})") from None
    df["phase"] = phase
    df["wall_s"] = round(elapsed, 3)
    df["raw"] = str(export)
    return df


def run_ycsb(engine: str, device_dir, workloads, data_size, threads: int, *, jar, out_dir, study: str,
             device: str, operationcount: int | None = None, maxexecutiontime: float | None = None,
             repeats=1, reload_per_workload: bool = False, fieldcount: int = 10, fieldlength: int = 100,
             properties: dict | None = None, run_properties: dict | None = None,
             load_threads: int | None = None, mariadb_options: dict | None = None, java: str = "java", jvm_args=(),
             timeout: float | None = None, keep_data: bool = False, fast_load: bool = False,
             io_counter=None) -> pd.DataFrame:
    """Load and run YCSB workloads on one device with one engine at one data size; return records.

    For each repeat (``repeats``: a count, or the run indices to use) the data is loaded into a fresh
    database under ``device_dir`` (RocksDB directory, or MariaDB datadir of a fresh server), then the
    ``workloads`` run in the given order on that data; with ``reload_per_workload`` every workload
    gets a freshly loaded database instead. Records of the first load of a repeat are returned with
    workload ``load`` (op ``insert``). Raw YCSB files go to ``out_dir/r{run}/``; the database is
    removed afterwards unless ``keep_data``. A workload that inserts (d, e) grows the record count
    seen by the next workload on the same data.

    ``properties`` are extra YCSB/binding properties for every phase (``rocksdb.sync``,
    ``db.batchsize`` ...), ``run_properties`` extra ones for the run phases only (they override
    everything, the record count too); ``mariadb_options`` are :func:`benchcast.mariadb.start` keyword arguments
    (``buffer_pool_size``, ``log_file_size``, ``options``). Every setting is kept as provenance.

    ``fast_load``: the load is not a measurement, so it runs without a sync per insert (RocksDB
    ``rocksdb.sync=false``; MariaDB ``innodb_flush_log_at_trx_commit=0`` and batched inserts, the
    server's own setting restored before the workloads run).

    ``io_counter``: a function returning the device's I/O counters (:func:`benchcast.devices.io_counters`);
    read before and after each workload run, the difference becomes op ``device`` records per
    operation (:mod:`benchcast.blockio`).
    """
    if engine not in ENGINES:
        raise BenchcastError(f"ycsb: unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    workloads = list(workloads)
    for w in workloads:
        if w not in WORKLOADS:
            raise BenchcastError(f"ycsb: unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
    if not workloads:
        raise BenchcastError("ycsb: no workloads to run")
    jar = Path(jar)
    if not jar.is_file():
        raise BenchcastError(f"ycsb: jar {jar} not found (build it with scripts/build_ycsb.sh)")
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    if not device_dir.is_dir():
        raise BenchcastError(f"ycsb: device directory {device_dir} does not exist")
    nbytes = rec.parse_size(data_size, "ycsb data_size")
    runs = list(range(repeats)) if isinstance(repeats, int) else [int(r) for r in repeats]
    if timeout is None and maxexecutiontime is not None:
        timeout = float(maxexecutiontime) + 600
    common = {"study": study, "device": device, "engine": engine, "threads": int(threads), "data_size": nbytes}
    versions = binding_versions()
    provenance = {
        "ycsb_version": YCSB_VERSION, "binding": ENGINES[engine],
        "binding_lib": (f"rocksdbjni {versions.get('rocksdbjni.version', '?')}" if engine == "rocksdb"
                        else f"mariadb-java-client {versions.get('mariadb.jdbc.version', '?')}"),
        "reload": "per-workload" if reload_per_workload else "once",
        "fieldcount": int(fieldcount), "fieldlength": int(fieldlength),
        "operationcount": int(operationcount or 0), "maxexecutiontime": float(maxexecutiontime or 0),
        "load_mode": "fast" if fast_load else "measured settings",
    }
    for prefix, extra in (("prop", properties), ("runprop", run_properties)):
        for key, val in sorted((extra or {}).items()):
            if key != "db.passwd":
                provenance[f"{prefix}_{key}"] = str(val)
    frames = []
    for run in runs:
        run_dir = out_dir / f"r{run}"
        if reload_per_workload:
            units = [(f"{i:02d}-{w}-", [(i, w)]) for i, w in enumerate(workloads, start=1)]
        else:
            units = [("", list(enumerate(workloads, start=1)))]
        for u, (label, unit) in enumerate(units):
            frames += _run_unit(
                engine, device_dir / f"benchcast-ycsb-{engine}-r{run}{'-' + label[:-1] if label else ''}",
                run_dir, label, unit, run, keep_load=(u == 0), nbytes=nbytes, threads=threads,
                load_threads=load_threads or threads, jar=jar, common=common, provenance=provenance,
                fieldcount=fieldcount, fieldlength=fieldlength, operationcount=operationcount,
                maxexecutiontime=maxexecutiontime, properties=properties or {},
                run_properties=run_properties or {}, mariadb_options=mariadb_options or {}, java=java,
                jvm_args=jvm_args, timeout=timeout, keep_data=keep_data, fast_load=fast_load,
                io_counter=io_counter)
    out = pd.concat(frames, ignore_index=True)
    return rec.check(out, where=f"ycsb {engine} {device}")


def _run_unit(engine, data_dir, run_dir, label, unit, run, *, keep_load, nbytes, threads, load_threads, jar,
              common, provenance, fieldcount, fieldlength, operationcount, maxexecutiontime, properties,
              run_properties, mariadb_options, java, jvm_args, timeout, keep_data,
              fast_load, io_counter=None) -> list[pd.DataFrame]:
    """Load a fresh database in ``data_dir`` and run the ``unit`` workloads ((order, name) pairs) on it;
    raw files are ``run_dir/{label}load.*`` and ``run_dir/{order:02d}-{name}.*``."""
    from . import mariadb

    if data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True)
    frames = []
    sizes = {"fieldcount": fieldcount, "fieldlength": fieldlength, "operationcount": operationcount,
             "maxexecutiontime": maxexecutiontime}
    try:
        if engine == "mariadb":
            server_ctx = mariadb.server(data_dir / "data", run_dir / f"{label}mariadb", **mariadb_options)
        else:
            server_ctx = _null_server()
        with server_ctx as srv:
            conn = {"rocksdb.dir": str(data_dir / "db")} if srv is None else srv.ycsb_properties()
            prov = dict(provenance)
            if srv is not None:
                prov.update(srv.provenance())
            props = workload_properties(unit[0][1], nbytes, **sizes, extra=properties)
            records_now = int(props["recordcount"])
            load_over = {**conn, "db.droptable": "true"} if engine == "mariadb" else dict(conn)
            load_over["maxexecutiontime"] = "0"  # a load inserts every record, however long it takes
            restore = None
            if fast_load:  # loads are not measured: no sync per insert, batched inserts
                if srv is None:
                    load_over["rocksdb.sync"] = "false"
                else:
                    load_over["db.batchsize"] = "100"
                    restore = srv.sql("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").strip()
                    srv.sql("SET GLOBAL innodb_flush_log_at_trx_commit=0")
            load_jvm = quick_start(jar, engine, write_archive=True)
            try:
                df = run_phase("load", engine=engine, jar=jar, props=props, overrides=load_over,
                               threads=load_threads, prefix=run_dir / f"{label}load", java=java,
                               jvm_args=[*jvm_args, *load_jvm],
                               columns={**common, **prov, "workload": "load", "run": run,
                                        "recordcount": records_now, "order": 0})
            except BaseException:
                keep_archive(load_jvm, ok=False)
                raise
            keep_archive(load_jvm, ok=True)
            run_jvm = [*jvm_args, *quick_start(jar, engine)]
            if restore is not None:  # the measured settings again, the loaded data made durable first
                srv.sql(f"SET GLOBAL innodb_flush_log_at_trx_commit={int(restore)}")
                srv.sql("FLUSH TABLES")
            if keep_load:
                frames.append(df)
            for order, w in unit:
                props = workload_properties(w, nbytes, **sizes,
                                            extra={**properties, "recordcount": records_now, **run_properties})
                io_before = io_counter() if io_counter else None
                df = run_phase("run", engine=engine, jar=jar, props=props, overrides=conn, threads=threads,
                               prefix=run_dir / f"{order:02d}-{w}", java=java, jvm_args=run_jvm,
                               timeout=timeout,
                               columns={**common, **prov, "workload": w, "run": run,
                                        "recordcount": records_now, "order": order})
                frames.append(df)
                if io_counter:
                    io = _device_io(df, io_before, io_counter())
                    if not io.empty:  # the device has no counters (a tmpfs)
                        frames.append(io)
                inserted = df.loc[(df["op"] == "insert") & (df["metric"] == "ops"), "value"]
                records_now += int(inserted.sum())
    finally:
        if not keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)
    return frames


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
    "record_count", "workload_properties", "properties_text", "command", "parse_text", "check_ok", "parse",
    "run_phase", "run_ycsb", "build_jar", "workload_names", "binding_versions",
]
