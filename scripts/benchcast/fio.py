"""fio: the grid of cells out of a study's ``fio`` source, one job file per (device, cell, repeat)
out, fio's JSON output in as records.

Options of a cell, from lowest to highest precedence: :data:`DEFAULTS`, the source's own keys, the
device kind's defaults (:data:`KIND_DEFAULTS`, e.g. ioengine libpmem on fsdax; a source's
``per_kind`` replaces them key by key), the source's ``per_device`` entry for that device.

A cell id is ``<rw>-<bs label>[-r<rwmixread>]-<hash>``, e.g. ``randread-4K-3f9a1c``, where the hash
covers every option that shapes the measurement (engine, depth, jobs, direct, size, runtime,
ramp time, extra fio options) but not the repeat count; so changing one device's options changes
only that device's cell ids.

fio's text output is never parsed: runs write ``--output-format=json``; records take latencies
(``lat_ns``, ``clat_ns`` and its percentiles) in us, ``bw_bytes`` in B/s and ``iops`` in ops/s, for
each operation (read, write, trim) that did I/O; a job that syncs (``fdatasync=1``: a log commit)
also gets op ``sync`` with the sync calls' latency (``jobs[].sync.lat_ns``). Sequential writes past
the end of the file (``rw=write`` with ``file_append=1``) are recorded as workload ``append``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from . import BenchcastError, host, protect
from .units import parse_size, size_label
from .workloads import APPEND

#: fio rw values a grid may use; the mixed ones take rwmixread.
RW = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
MIXED = ("rw", "readwrite", "randrw")

#: Options of a cell when nothing else says (sizes in bytes, times in seconds).
DEFAULTS = {
    "ioengine": "libaio",
    "iodepth": 1,
    "numjobs": 1,
    "direct": True,
    "size": "1G",
    "runtime": 30,
    "ramp_time": 5,
    "rwmixread": 50,
    "extra": {},
}
#: Defaults by device kind. tmpfs: page cache is the device (and older kernels refuse O_DIRECT
#: there); fsdax: load/store access through libpmem.
KIND_DEFAULTS = {
    "tmpfs": {"direct": False},
    "fsdax": {"ioengine": "libpmem"},
}
OPTION_KEYS = ("ioengine", "iodepth", "numjobs", "direct", "size", "runtime", "ramp_time", "extra")
SOURCE_KEYS = {"type", "rw", "block_sizes", "exclude", "rwmixread", "repeats", "max_repeats", "stable_cv",
               "devices", "per_device", "per_kind", "memory_limit", "cpu_latency_us", *OPTION_KEYS}
OVERRIDE_KEYS = set(OPTION_KEYS) | {"rwmixread"}
DEFAULT_REPEATS = 5
METRICS = ("lat_mean", "clat_mean", "clat_p50", "clat_p99", "clat_p99.9", "bw", "iops")
PERCENTILES = {"clat_p50": "50.000000", "clat_p99": "99.000000", "clat_p99.9": "99.900000"}
#: Percentiles of the sync calls (op ``sync``; fio keeps only their total latency).
SYNC_PERCENTILES = {"lat_p50": "50.000000", "lat_p99": "99.000000", "lat_p99.9": "99.900000"}


# --------------------------------------------------------------------------- grid


def _err(source_name: str, key: str, msg: str) -> BenchcastError:
    return BenchcastError(f"source {source_name}: {key}: {msg}")


def _int(source_name, key, val, minimum=0) -> int:
    if isinstance(val, bool) or not isinstance(val, int) or val < minimum:
        raise _err(source_name, key, f"must be an integer >= {minimum}, not {val!r}")
    return val


def _seconds(source_name, key, val) -> int:
    if isinstance(val, str) and val.endswith("s") and val[:-1].isdigit():
        val = int(val[:-1])
    return _int(source_name, key, val)


def _normalise(opts: dict, source_name: str, where: str) -> dict:
    out = dict(opts)
    k = lambda key: f"{where}{key}"  # noqa: E731
    listed = lambda v: v if isinstance(v, list) else [v]  # noqa: E731  (grid axes: one value or a list)
    out["ioengine"] = [str(e) for e in listed(out["ioengine"])]
    out["iodepth"] = [_int(source_name, k("iodepth"), d, 1) for d in listed(out["iodepth"])]
    out["numjobs"] = [_int(source_name, k("numjobs"), j, 1) for j in listed(out["numjobs"])]
    if not isinstance(out["direct"], bool):
        if out["direct"] in (0, 1):
            out["direct"] = bool(out["direct"])
        else:
            raise _err(source_name, k("direct"), f"must be true or false, not {out['direct']!r}")
    out["size"] = parse_size(out["size"], what=f"source {source_name}: {k('size')}")
    if out["size"] < 4096:
        raise _err(source_name, k("size"), f"{out['size']} bytes is too small")
    out["runtime"] = _seconds(source_name, k("runtime"), out["runtime"])
    out["ramp_time"] = _seconds(source_name, k("ramp_time"), out["ramp_time"])
    if not isinstance(out.get("extra", {}), dict):
        raise _err(source_name, k("extra"), "must be a mapping of fio option -> value")
    out["extra"] = {str(a): (str(b).lower() if isinstance(b, bool) else str(b))
                    for a, b in sorted(out.get("extra", {}).items())}
    mixes = out["rwmixread"] if isinstance(out["rwmixread"], list) else [out["rwmixread"]]
    for m in mixes:
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= 100:
            raise _err(source_name, k("rwmixread"), f"must be 0..100, not {m!r}")
    out["rwmixread"] = mixes
    return out


def device_options(source: dict, devices: dict, source_name: str = "fio") -> dict[str, dict]:
    """Resolved options per measured device (see the module doc for the precedence)."""
    for key in source:
        if key not in SOURCE_KEYS:
            raise _err(source_name, key, f"unknown key (allowed: {', '.join(sorted(SOURCE_KEYS))})")
    per_kind = {k: dict(v) for k, v in KIND_DEFAULTS.items()}
    for kind, over in (source.get("per_kind") or {}).items():
        if not isinstance(over, dict):
            raise _err(source_name, f"per_kind.{kind}", "must be a mapping")
        for key in over:
            if key not in OVERRIDE_KEYS:
                raise _err(source_name, f"per_kind.{kind}.{key}", "not an option that can be set per kind")
        per_kind.setdefault(kind, {}).update(over)
    from .plan import measured_devices

    per_device = source.get("per_device") or {}
    ids = measured_devices(source, devices, source_name)
    for dev in per_device:
        if dev not in ids:
            raise _err(source_name, f"per_device.{dev}", "not a device this source measures")
    out = {}
    for dev in ids:
        opts = dict(DEFAULTS)
        opts.update({k: source[k] for k in OVERRIDE_KEYS if k in source})
        opts.update(per_kind.get(devices[dev].get("kind"), {}))
        over = per_device.get(dev) or {}
        if not isinstance(over, dict):
            raise _err(source_name, f"per_device.{dev}", "must be a mapping")
        for key in over:
            if key not in OVERRIDE_KEYS:
                raise _err(source_name, f"per_device.{dev}.{key}", "not an option that can be set per device")
        opts.update(over)
        where = f"per_device.{dev}." if over else ""
        out[dev] = _normalise(opts, source_name, where)
    return out


def option_hash(opts: dict) -> str:
    keyed = {k: opts[k] for k in OPTION_KEYS}
    if opts.get("memory_limit"):  # only when set: the cells without one keep their ids
        keyed["memory_limit"] = opts["memory_limit"]
    return hashlib.sha1(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:6]


def cell_id(rw: str, bs: int, opts: dict, rwmixread: int | None = None) -> str:
    mix = f"-r{rwmixread}" if rw in MIXED else ""
    return f"{rw}-{size_label(bs)}{mix}-{option_hash(opts)}"


def excluded(source: dict, rws: list[str], bss: list[int], source_name: str = "fio") -> set[tuple[str, int]]:
    """The (rw, block size in bytes) pairs the source's ``exclude`` leaves out of its grid; an entry
    that names no pair of the grid is refused (a misspelt entry would silently measure it)."""
    out = set()
    entries = source.get("exclude") or []
    if not isinstance(entries, list):
        raise _err(source_name, "exclude", "must be a list of {rw, block_size}")
    for i, e in enumerate(entries):
        where = f"exclude[{i}]"
        if not isinstance(e, dict) or set(e) != {"rw", "block_size"}:
            raise _err(source_name, where, "must be a mapping with exactly rw and block_size")
        pair = (e["rw"], parse_size(e["block_size"], what=f"source {source_name}: {where}.block_size"))
        if pair[0] not in rws or pair[1] not in bss:
            raise _err(source_name, where, f"{e['rw']} at {e['block_size']} is not a cell of the grid "
                       f"(rw {', '.join(rws)}; block_sizes {', '.join(size_label(b) for b in bss)})")
        out.add(pair)
    return out


def expand_grid(source: dict, devices: dict, source_name: str = "fio") -> list[dict]:
    """All cells of a fio source: one dict per (device, rw, block size[, rwmixread]), less the
    (rw, block size) pairs of its ``exclude`` list.

    Each cell: device, cell (id), rw, bs (bytes), rwmixread (None unless mixed), ioengine, iodepth,
    numjobs, direct, size (bytes), runtime, ramp_time (s), extra (fio options), repeats.
    """
    rws = source.get("rw")
    if not isinstance(rws, list) or not rws:
        raise _err(source_name, "rw", "must be a non-empty list of fio rw values")
    for rw in rws:
        if rw not in RW:
            raise _err(source_name, "rw", f"{rw!r} is not one of {', '.join(RW)}")
    sizes = source.get("block_sizes")
    if not isinstance(sizes, list) or not sizes:
        raise _err(source_name, "block_sizes", "must be a non-empty list of sizes")
    bss = [parse_size(b, what=f"source {source_name}: block_sizes") for b in sizes]
    if any(b <= 0 for b in bss):
        raise _err(source_name, "block_sizes", "sizes must be positive")
    skip = excluded(source, rws, bss, source_name)
    repeats = _int(source_name, "repeats", source.get("repeats", DEFAULT_REPEATS), 1)
    limit = parse_size(source["memory_limit"], what=f"source {source_name}: memory_limit") \
        if source.get("memory_limit") else None
    # a condition of the measurement, not of the cell: in the job's params, not in its id
    latency = host.measured_settings({"cpu_latency_us": source.get("cpu_latency_us")})
    cells = []
    for dev, opts in device_options(source, devices, source_name).items():
        axes = list(itertools.product(dict.fromkeys(opts["ioengine"]), dict.fromkeys(opts["iodepth"]),
                                      dict.fromkeys(opts["numjobs"])))
        for rw in dict.fromkeys(rws):
            for bs in dict.fromkeys(bss):
                if (rw, bs) in skip:
                    continue
                for mix in (opts["rwmixread"] if rw in MIXED else [None]):
                    for engine, depth, jobs in axes:
                        one = {**opts, "ioengine": engine, "iodepth": depth, "numjobs": jobs}
                        base = {k: one[k] for k in OPTION_KEYS}
                        if limit:
                            one["memory_limit"] = base["memory_limit"] = limit
                        cells.append({"device": dev, "cell": cell_id(rw, bs, one, mix), "rw": rw, "bs": bs,
                                      "rwmixread": mix, **base, "repeats": repeats, **latency})
    seen = set()
    for c in cells:
        key = (c["device"], c["cell"])
        if key in seen:
            raise _err(source_name, "block_sizes", f"duplicate cell {c['cell']} on device {c['device']}")
        seen.add(key)
    return cells


# --------------------------------------------------------------------------- job files and runs


def job_text(cell: dict, directory, repeat: int = 0) -> str:
    """The fio job file of one cell and repeat, writing its files into ``directory``."""
    lines = [
        f"; benchcast: device {cell['device']}, cell {cell['cell']}, repeat {repeat}",
        f"[{cell['cell']}]",
        f"directory={directory}",
        f"rw={cell['rw']}",
    ]
    if cell["rw"] in MIXED:
        lines.append(f"rwmixread={cell['rwmixread']}")
    lines += [
        f"bs={size_label(cell['bs'])}",
        f"ioengine={cell['ioengine']}",
        f"iodepth={cell['iodepth']}",
        f"numjobs={cell['numjobs']}",
        f"direct={int(cell['direct'])}",
        f"size={size_label(cell['size'])}",
        "time_based=1",
        f"runtime={cell['runtime']}",
        f"ramp_time={cell['ramp_time']}",
        "group_reporting=1",
        "unlink=1",
    ]
    for key, val in (cell.get("extra") or {}).items():
        lines.append(f"{key}={val}" if val != "" else key)
    return "\n".join(lines) + "\n"


def command(jobfile, output) -> list[str]:
    return ["fio", "--output-format=json", f"--output={output}", str(jobfile)]


def run_fio(cmd: list[str], timeout: float | None, preexec_fn=None) -> subprocess.CompletedProcess:
    """Run fio, its output captured. fio runs each job in a process it forks into a session of its
    own: when this job stops (a timeout, SIGTERM's SystemExit, SIGINT), fio and every process it
    started are stopped and gone before the device is torn down, else a worker left running keeps
    the mount busy."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        stop_tree(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def stop_tree(proc: subprocess.Popen, grace: float = 5, wait: float = 10) -> None:
    """SIGTERM ``proc`` (fio then ends its workers); after ``grace`` s SIGKILL it and every process
    under it; return once none of them is left (or after ``wait`` s more)."""
    import time

    from .stop import alive, descendants

    tree = [proc.pid, *descendants(proc.pid)]
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        for pid in [*descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + wait
    while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.05)


def run(cell: dict, state: dict, repeat: int, jobfile, output, timeout: float | None = None,
        cgroup=None) -> Path:
    """Write the job file, run fio on the provisioned device (inside its cgroup when throttled, and
    inside the memory cgroup ``cgroup``, fio alone, when given), check the JSON it wrote; return the
    output path. Failures raise BenchcastError naming the device, cell and repeat."""
    from .devices import memlimit
    from . import devices

    where = f"fio: device {cell['device']}, cell {cell['cell']}, repeat {repeat}"
    directory = devices.target(state)
    if cell["direct"] and state.get("direct_ok") is False:
        raise BenchcastError(f"{where}: direct: O_DIRECT does not work on {directory} (probed at provisioning); "
                             f"set direct: false for this device in per_device")
    jobfile, output = Path(jobfile), Path(output)
    jobfile.parent.mkdir(parents=True, exist_ok=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    # written under temporary names, renamed when fio finished and its JSON is whole: a killed run
    # leaves no file that could pass as a result
    part_job, part_out = protect.atomic_path(jobfile), protect.atomic_path(output)
    protect.clear_partial(output)
    part_job.write_text(job_text(cell, directory, repeat))
    cmd = devices.command_prefix(state) + command(part_job, part_out)
    try:
        proc = run_fio(cmd, timeout, preexec_fn=memlimit.joiner(cgroup) if cgroup else None)
    except subprocess.TimeoutExpired:
        raise BenchcastError(f"{where}: fio timed out after {timeout}s") from None
    if proc.returncode == -signal.SIGKILL:
        raise BenchcastError(f"{where}: fio was killed (out of memory? a memory limit below what the job "
                             f"keeps in memory, e.g. a mapped file on a tmpfs)")
    if proc.returncode != 0:
        from .devices.base import one_line

        raise BenchcastError(f"{where}: fio exit {proc.returncode}: {one_line(proc)}")
    load(part_out)
    protect.commit(jobfile)
    return protect.commit(output)


# --------------------------------------------------------------------------- JSON in


def load(path) -> dict:
    """Read a fio JSON output file. Any text fio printed before the JSON object is skipped."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no fio output file") from None
    except UnicodeDecodeError:
        raise BenchcastError(f"{path}: fio output is not text") from None
    start = text.find("\n{") + 1 if not text.startswith("{") else 0
    if not text.strip() or (start == 0 and not text.startswith("{")):
        raise BenchcastError(f"{path}: not fio JSON output (no JSON object found)")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise BenchcastError(f"{path}: fio JSON is truncated or malformed ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict) and data.get("benchcast_skipped"):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list) or not data["jobs"]:
        raise BenchcastError(f"{path}: fio JSON has no jobs")
    return data


def job_rows(job: dict, where) -> list[dict]:
    """Record rows (op, metric, unit, value) of one job of a fio JSON output: latencies in us from
    fio 3's ``lat_ns``/``clat_ns`` or older versions' ``lat``/``clat`` (already us), bandwidth in
    B/s (``bw_bytes``, else ``bw`` in KiB/s), IOPS, for each operation that did I/O, plus the sync
    calls of a syncing job (op ``sync``). ``where`` names the file in errors."""
    rows = []
    for op in ("read", "write", "trim"):
        st = job.get(op)
        if not isinstance(st, dict) or not (st.get("total_ios", 0) > 0 or st.get("io_bytes", 0) > 0):
            continue
        try:
            if "lat_ns" in st:
                lat, clat, scale = st["lat_ns"], st["clat_ns"], 1000.0
            else:  # fio 2.x: usec
                lat, clat, scale = st["lat"], st["clat"], 1.0
            vals = {"lat_mean": lat["mean"] / scale, "clat_mean": clat["mean"] / scale}
            vals.update((m, v / scale) for m, v in _percentiles(clat, PERCENTILES).items())
            vals["bw"] = float(st["bw_bytes"]) if "bw_bytes" in st else float(st["bw"]) * 1024.0
            vals["iops"] = float(st["iops"])
        except (KeyError, TypeError) as exc:
            raise BenchcastError(f"{where}: fio JSON {op} statistics lack {exc}") from None
        for metric, value in vals.items():
            unit = "B/s" if metric == "bw" else "ops/s" if metric == "iops" else "us"
            rows.append({"op": op, "metric": metric, "unit": unit, "value": value})
    return rows + _sync_rows(job.get("sync"))


def _percentiles(stat: dict, wanted: dict) -> dict:
    """metric -> value of the percentiles of ``wanted`` (metric -> fio key) that ``stat`` reports;
    keys compared as numbers, since fio versions print them as '99.000000' or '99.00'."""
    pct = stat.get("percentile") or {}
    have = {}
    for key, val in pct.items():
        try:
            have[round(float(key), 6)] = val
        except ValueError:
            continue
    return {m: have[round(float(k), 6)] for m, k in wanted.items() if round(float(k), 6) in have}


#: Job options that do not change what fio measures: names, paths, how long it runs and what it
#: reports. Every other option a job reports is part of its cell (:func:`cell_label`), so that runs
#: are repeats only where everything that shapes the measurement is the same. Options with ``log`` in
#: their name (write_lat_log, log_avg_msec ...) are left out too.
NOT_CELL_OPTIONS = frozenset({
    "name", "description", "filename", "directory", "filename_format", "output", "output-format",
    "runtime", "time_based", "group_reporting", "new_group", "stonewall", "wait_for", "unlink",
    "unlink_each_loop", "percentile_list", "clat_percentiles", "lat_percentiles", "slat_percentiles",
    "significant_figures", "kb_base", "unit_base", "status-interval", "eta", "eta-newline",
})
#: The options a cell label starts with, in this order (then the others, sorted).
CELL_FIRST = ("rw", "bs", "iodepth", "numjobs", "ioengine", "direct")


def cell_label(opts: dict) -> str:
    """The cell of a fio job, from the options it reports (global and job options merged): every
    option but those of :data:`NOT_CELL_OPTIONS` as ``key=value``, rw, bs, iodepth, numjobs, ioengine
    and direct first, e.g. ``rw=randread bs=4K iodepth=4 numjobs=2 ioengine=libaio direct=1 size=1G``."""
    opts = {str(k): str(v) for k, v in opts.items()
            if k not in NOT_CELL_OPTIONS and "log" not in str(k)}
    opts.setdefault("iodepth", "1")
    opts.setdefault("numjobs", "1")
    try:
        opts["bs"] = size_label(parse_size(opts.get("bs", "4K"), what="bs"))
    except BenchcastError:
        pass  # a split (bs=4k,64k) or range: kept as written
    first = [k for k in CELL_FIRST if k in opts]
    return " ".join(f"{k}={opts[k]}" for k in first + sorted(set(opts) - set(first)))


def job_keys(job: dict, global_options: dict | None, where) -> dict:
    """The record keys of one fio job from the options it reports (global, then its own): workload
    (rw; ``append`` for writes past the end of the file), block_size, iodepth, numjobs, threads
    (numjobs x iodepth), data_size (size; 0 when given as a percentage), engine (ioengine) and cell
    (:func:`cell_label`)."""
    opts = {**(global_options or {}), **(job.get("job options") or {})}
    try:
        rw = opts["rw"]
        bs = parse_size(opts.get("bs", "4K"), what=f"{where}: bs")
        depth, jobs = int(opts.get("iodepth", 1)), int(opts.get("numjobs", 1))
    except KeyError:
        raise BenchcastError(f"{where}: fio JSON lacks the job option rw") from None
    except ValueError:
        raise BenchcastError(f"{where}: iodepth {opts.get('iodepth')!r} or numjobs {opts.get('numjobs')!r} "
                             f"is not a whole number") from None
    if rw == "write" and str(opts.get("file_append", "0")).lower() in ("1", "true", "on", "yes"):
        rw = APPEND  # appends grow the file: a log's writes, not overwrites of a laid-out file
    size = opts.get("size", "0")
    return {"workload": rw, "block_size": bs, "threads": jobs * depth, "iodepth": depth, "numjobs": jobs,
            "data_size": 0 if str(size).endswith("%") else parse_size(size, what=f"{where}: size"),
            "engine": opts.get("ioengine", "psync"), "cell": cell_label(opts)}


# ---------------------------------------------------------------- jobs reported one by one


def _bin_percentiles(bins: dict, wanted: dict) -> dict:
    """The percentiles of ``wanted`` (metric -> fio's key, as :data:`PERCENTILES`), keyed as fio
    keys them ('99.000000'), of a latency histogram (json+ ``bins``: value in ns -> count), computed
    as fio does: the value of the first bin at which the running count reaches the percentile."""
    import numpy as np

    vals = np.array(sorted(int(k) for k in bins), dtype=np.int64)
    cum = np.cumsum([bins[str(v)] for v in vals])
    out = {}
    for key in wanted.values():
        i = int(np.searchsorted(cum, float(key) / 100.0 * cum[-1], side="left"))
        out[key] = float(vals[min(i, len(vals) - 1)])
    return out


def _merge_latency(parts: list[dict], weights: list[float], percentiles: dict) -> dict:
    """One latency statistic (fio's ``lat_ns``/``clat_ns`` shape) of several jobs: the mean weighted
    by each job's I/O count; percentiles only from the merged histograms (json+ ``bins``), else none."""
    total = sum(weights)
    out = {"N": total, "mean": sum(p["mean"] * w for p, w in zip(parts, weights)) / total}
    if all(isinstance(p.get("bins"), dict) and p["bins"] for p in parts):
        bins: dict = {}
        for p in parts:
            for k, v in p["bins"].items():
                bins[k] = bins.get(k, 0) + v
        out["percentile"] = _bin_percentiles(bins, percentiles)
    return out


def merge_jobs(jobs: list[dict]) -> dict:
    """The jobs of one cell that fio reported one by one (``numjobs`` > 1 without group_reporting)
    as one job, as group_reporting would report it: IOPS and bandwidth summed over the jobs,
    latency means weighted by each job's I/O count, percentiles read from the jobs' merged latency
    histograms where the output has them (json+), else left out (a mean of percentiles is none)."""
    out = {k: v for k, v in jobs[0].items() if k not in ("read", "write", "trim", "sync")}
    for op in ("read", "write", "trim"):
        stats = [j[op] for j in jobs if isinstance(j.get(op), dict)]
        if not stats or not any(st.get("total_ios", 0) > 0 or st.get("io_bytes", 0) > 0 for st in stats):
            continue
        lat, clat = ("lat_ns", "clat_ns") if "lat_ns" in stats[0] else ("lat", "clat")
        w = [float(st.get("total_ios") or st[clat].get("N", 0)) for st in stats]
        merged = {"total_ios": sum(w), "io_bytes": sum(st.get("io_bytes", 0) for st in stats),
                  "iops": sum(float(st["iops"]) for st in stats),
                  lat: _merge_latency([st[lat] for st in stats], w, PERCENTILES),
                  clat: _merge_latency([st[clat] for st in stats], w, PERCENTILES)}
        if all("bw_bytes" in st for st in stats):
            merged["bw_bytes"] = sum(float(st["bw_bytes"]) for st in stats)
        else:
            merged["bw"] = sum(float(st["bw"]) for st in stats)
        out[op] = merged
    syncs = [j["sync"]["lat_ns"] for j in jobs if isinstance((j.get("sync") or {}).get("lat_ns"), dict)
             and j["sync"]["lat_ns"].get("N")]
    if syncs:
        out["sync"] = {"lat_ns": _merge_latency(syncs, [float(s["N"]) for s in syncs], SYNC_PERCENTILES)}
    return out


def file_cells(data: dict, where) -> list[tuple[dict, dict]]:
    """(record keys, job) of each cell of one fio JSON output: its jobs, where the clones of a job
    with ``numjobs`` > 1 that fio reported one by one (no group_reporting) are merged into one
    (:func:`merge_jobs`). Two jobs of one cell that are not such clones stop it with one line."""
    cells: dict[str, list] = {}
    for k, job in enumerate(data["jobs"]):
        if job.get("error"):
            raise BenchcastError(f"{where}: fio job {job.get('jobname')} ended with error {job['error']}")
        keys = job_keys(job, data.get("global options"), where)
        cells.setdefault(keys["cell"], [keys, [], []])[1].append(job)
        cells[keys["cell"]][2].append(f"jobs[{k}] ({job.get('jobname', '')})")
    out = []
    for keys, jobs, names in cells.values():
        if len(jobs) > 1 and (len(jobs) != keys["numjobs"] or len({j.get("jobname") for j in jobs}) > 1):
            raise BenchcastError(f"{where}: {names[1]}: {len(jobs)} jobs of the same cell ({keys['cell']}), the "
                                 f"first {names[0]}: report them together (group_reporting) or as separate files")
        try:
            out.append((keys, jobs[0] if len(jobs) == 1 else merge_jobs(jobs)))
        except (KeyError, TypeError, ZeroDivisionError) as exc:
            raise BenchcastError(f"{where}: fio JSON statistics of the {len(jobs)} jobs of {keys['cell']} lack "
                                 f"{exc}") from None
    return out


def parse(path, study: str, device: str, run: int = 0, cell: str | None = None,
          source: str = "fio", provenance: dict | None = None) -> "pd.DataFrame":
    """Records from one fio JSON output (one job with group_reporting).

    Grid parameters are taken from the options fio reports back (global and job options), so the
    file describes itself; ``cell`` (a grid's cell id) replaces the cell read from the options
    (:func:`cell_label`). Jobs fio reported one by one (numjobs without group_reporting) are merged
    (:func:`merge_jobs`). Provenance columns: fio_version, kernel, cpu_model, device_model,
    mount_options, jobname (``provenance`` supplies or overrides them).
    """
    path = Path(path)
    data = load(path)
    if data.get("benchcast_skipped"):
        from . import records  # a cell the device cannot run: no records, said in the file

        return records.make([], study=study, source=source, device=device, benchmark="fio", workload="",
                            op="", metric="", unit="", value=0.0, run=int(run))
    cells = file_cells(data, path)
    if len(cells) != 1:
        raise BenchcastError(f"{path}: expected one job (group_reporting), found {len(data['jobs'])}")
    keys, job = cells[0]
    if cell is not None:
        keys["cell"] = cell
    rows = job_rows(job, path)
    if not rows:
        raise BenchcastError(f"{path}: fio job did no I/O")
    here = host.machine()
    prov = {"fio_version": data.get("fio version", ""), "kernel": here["kernel"], "cpu_model": here["cpu_model"],
            "device_model": "", "mount_options": "", "jobname": job.get("jobname", "")}
    prov.update(provenance or {})
    from . import records  # pandas: only where records are made, so fio runs start fast

    return records.make(rows, study=study, source=source, device=device, benchmark="fio", run=int(run),
                        **keys, **prov)


def _sync_rows(st) -> list[dict]:
    """Records of fio's ``sync`` section (jobs with ``fsync``/``fdatasync``: the latency of each sync
    call after writes), op ``sync``: lat_mean and the lat percentiles of :data:`SYNC_PERCENTILES` in
    us. fio leaves ``total_ios`` at 0 there; ``lat_ns.N`` counts the calls."""
    lat = (st or {}).get("lat_ns") if isinstance(st, dict) else None
    if not isinstance(lat, dict) or not lat.get("N"):
        return []
    vals = {"lat_mean": lat["mean"] / 1000.0}
    vals.update((m, v / 1000.0) for m, v in _percentiles(lat, SYNC_PERCENTILES).items())
    return [{"op": "sync", "metric": m, "unit": "us", "value": v} for m, v in vals.items()]


def run_and_parse(cell: dict, state: dict, repeat: int, jobfile, output, study: str,
                  source: str = "fio", timeout: float | None = None) -> "pd.DataFrame":
    """:func:`run` then :func:`parse` with the device's provenance."""
    from . import devices

    run(cell, state, repeat, jobfile, output, timeout=timeout)
    return parse(output, study=study, device=cell["device"], run=repeat, cell=cell["cell"], source=source,
                 provenance=devices.provenance(state))



# --------------------------------------------------------------------------- one cell, as a job


def logical_block_size(block_device: str) -> int | None:
    """The device's logical block size from sysfs (O_DIRECT I/O must be a multiple of it)."""

    name = os.path.basename(os.path.realpath(block_device))
    try:
        return int(Path(f"/sys/class/block/{name}/queue/logical_block_size").read_text())
    except (OSError, ValueError):
        return None


def unaligned(cell: dict, state: dict) -> str | None:
    """Why a direct-I/O cell cannot run on this device (block size not a multiple of the device's
    logical block size, e.g. 1K on zram's 4K), or None. Such a cell is recorded as skipped."""
    if not cell.get("direct") or not state.get("block_device"):
        return None
    lbs = logical_block_size(state["block_device"])
    if lbs and cell["bs"] % lbs:
        return (f"direct I/O of {size_label(cell['bs'])} blocks is impossible on {state['block_device']} "
                f"(logical block size {lbs})")
    return None


def _skip(cell: dict, why: str, jobfile, output) -> float:
    """Write the outputs of a run that is not made (a JSON saying why, no records) and commit them."""
    protect.atomic_path(output).write_text(json.dumps({"benchcast_skipped": why, "cell": cell}) + "\n")
    protect.atomic_path(jobfile).write_text(f"; not run: {why}\n")
    protect.commit(jobfile)
    protect.commit(output)
    return 0.0


def stable_already(cell: dict) -> str | None:
    """Repeat until stable: for a run beyond the cell's ``repeats``, the cell carries ``previous``
    (the earlier runs' JSON files) and ``stable_cv``; why this run is not needed, or None."""
    previous = cell.get("previous")
    if not previous:
        return None
    if "spoil" in cell:  # an extra run: needed when interference spoiled earlier runs
        from . import quality

        return quality.extra_run_not_needed(previous, cell["spoil"]["thresholds"], cell["spoil"]["extra"])
    from . import repeats

    runs = [None if load(path).get("benchcast_skipped") else parse(path, study="-", device="-", run=i)
            for i, path in enumerate(previous)]
    return repeats.not_needed(runs, cell["stable_cv"])


def run_cell(device_id: str, spec: dict, state_path, cell: dict, repeat: int, jobfile, output) -> float:
    """What one Snakemake fio job does: on the (ensured) device, run the cell's repeat and return
    fio's wall time; a failure tears the device down (:func:`benchcast.devices.on_device`). A run
    beyond ``repeats`` that the earlier runs make unnecessary (:func:`stable_already`) writes a
    skip note instead, without touching the device."""
    import time

    from . import devices, host, quality

    why = stable_already(cell)
    if why:
        return _skip(cell, why, jobfile, output)
    with host.cpu_latency(cell.get("cpu_latency_us")), \
            devices.on_device(device_id, spec, state_path, memory_limit=cell.get("memory_limit"),
                              enter_memory=False, shield=quality.guard()["shield"]) as state:
        why = unaligned(cell, state)
        if why:
            return _skip(cell, why, jobfile, output)
        t0 = time.perf_counter()
        with quality.sample(output, state["created"].get("cpucg"),
                            {"benchmark": "fio", "device": device_id, "cell": cell["cell"], "run": repeat}):
            run(cell, state, repeat, jobfile, output, cgroup=state["created"].get("memcg"))
        return time.perf_counter() - t0


def main(argv=None) -> int:
    """python -m benchcast.fio run-cell ...: one fio job of the workflow (a thin, fast entry)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchcast.fio")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("run-cell", help="ensure the device, run one cell's repeat, write fio JSON")
    s.add_argument("--device", required=True)
    s.add_argument("--spec", required=True, help="device spec (JSON)")
    s.add_argument("--state", required=True, help="device state record")
    s.add_argument("--cell", required=True, help="cell (JSON, from expand_grid)")
    s.add_argument("--repeat", type=int, required=True)
    s.add_argument("--jobfile", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--log", help="write all output here; a failure's one-line reason also goes to stderr")
    args = p.parse_args(argv)

    def cell():
        secs = run_cell(args.device, json.loads(args.spec), args.state, json.loads(args.cell), args.repeat,
                        args.jobfile, args.output)
        print(f"fio wall time {secs:.3f} s")

    from .cli import run_logged

    return run_logged(cell, args.log)


if __name__ == "__main__":
    sys.exit(main())
