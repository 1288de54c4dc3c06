"""fio's JSON output in as records: latencies (``lat_ns``, ``clat_ns`` and its percentiles) in us,
``bw_bytes`` in B/s and ``iops`` in ops/s, for each operation (read, write, trim) that did I/O; a job
that syncs (``fdatasync=1``: a log commit) also gets op ``sync`` with the sync calls' latency
(``jobs[].sync.lat_ns``). Sequential writes past the end of the file (``rw=write`` with
``file_append=1``) are recorded as workload ``append``. The cell of a job is read from the options
fio reports back (:func:`cell_label`), so a file describes itself; fio's text output is never parsed.
Light until records are made: no pandas at import, so fio jobs start fast.
"""

from __future__ import annotations

import json
from pathlib import Path

from ... import BenchcastError, result_text
from ...core import host
from ...core import units
from ...core.units import parse_size, size_label
from ...core.workloads import APPEND

METRICS = ("lat_mean", "clat_mean", "clat_p50", "clat_p99", "clat_p99.9", "bw", "iops")
PERCENTILES = {"clat_p50": "50.000000", "clat_p99": "99.000000", "clat_p99.9": "99.900000"}
#: Percentiles of the total latency: of the sync calls (op ``sync``; fio keeps only their total
#: latency), and of reads and writes where fio reports them (``lat_percentiles=1``).
SYNC_PERCENTILES = {"lat_p50": "50.000000", "lat_p99": "99.000000", "lat_p99.9": "99.900000"}


def load(path) -> dict:
    """Read a fio JSON output file. Any text fio printed before the JSON object (warnings, the job
    lines of ``--output-format=json,normal``) and its text output after it are skipped; a second JSON
    object (two runs appended to one file) is an error naming its line."""
    path = Path(path)
    try:
        text = result_text(path)
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no fio output file") from None
    except UnicodeDecodeError:
        raise BenchcastError(f"{path}: fio output is not text") from None
    start = text.find("\n{") + 1 if not text.startswith("{") else 0
    if not text.strip() or (start == 0 and not text.startswith("{")):
        raise BenchcastError(f"{path}: not fio JSON output (no JSON object found)")
    try:  # fio's text output may follow too (--output-format=json,normal)
        data, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise BenchcastError(f"{path}: fio JSON is truncated or malformed ({exc.msg} at line {exc.lineno})") from None
    after = text[end:]
    if after.lstrip().startswith("{") or "\n{" in after:  # two outputs appended to one file (fio ... >> out)
        second = after.find("{") if after.lstrip().startswith("{") else after.find("\n{") + 1
        line = text.count("\n", 0, end + second) + 1
        raise BenchcastError(f"{path}: line {line}: a second fio JSON output after the first: one output per file")
    if isinstance(data, dict) and data.get("benchcast_skipped"):
        return data
    if isinstance(data, dict) and "jobs" not in data and isinstance(data.get("client_stats"), list):
        data["jobs"] = _client_jobs(data["client_stats"], path)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list) or not data["jobs"]:
        client = isinstance(data, dict) and "client_stats" in data  # fio --client: the servers' jobs
        raise BenchcastError(f"{path}: fio JSON has no jobs" + (" (an output of fio --client whose "
                             "client_stats hold no client's jobs)" if client else ""))
    for k, job in enumerate(data["jobs"]):
        if not isinstance(job, dict) or not isinstance(job.get("job options", {}), dict):
            raise BenchcastError(f"{path}: jobs[{k}]: not a fio job (an object with its options and statistics)")
        _unified(job, data.get("global options"), f"{path}: jobs[{k}] ({job.get('jobname', '')})")
    return data


def _client_jobs(stats: list, path) -> list:
    """The jobs of fio's client/server output (``client_stats``) of one client; the output of
    several clients (each its own host, and their sum "All clients") is refused, naming them."""
    jobs = [j for j in stats if isinstance(j, dict) and j.get("jobname") != "All clients"]
    hosts = sorted({str(j.get("hostname", "")) for j in jobs})
    if len(hosts) > 1:
        raise BenchcastError(f"{path}: fio client/server output of {len(hosts)} clients ({', '.join(hosts)}): "
                             f"each measured from its own host; import one client's output per device")
    return jobs


def _unified(job: dict, global_options, where) -> None:
    """A job run with ``unified_rw_reporting`` reports its I/O as ``mixed`` (reads and writes
    together): read as the op of a workload that does one (randread's reads); refused for a mixed
    workload, whose reads and writes it cannot tell apart."""
    mixed = job.get("mixed")
    if not isinstance(mixed, dict) or any(isinstance(job.get(op), dict) and _did_io(job[op])
                                          for op in ("read", "write", "trim")):
        return
    if not _did_io(mixed):
        return
    rw = str({**(global_options or {}), **(job.get("job options") or {})}.get("rw", "read"))
    op = {"randread": "read", "read": "read", "randwrite": "write", "write": "write",
          "randtrim": "trim", "trim": "trim"}.get(rw)
    if op is None:
        raise BenchcastError(f"{where}: rw={rw} reported with unified_rw_reporting (reads and writes together as "
                             f"'mixed'): benchcast records them apart; run it without unified_rw_reporting")
    job[op] = mixed


def _did_io(st: dict) -> bool:
    return isinstance(st, dict) and (st.get("total_ios", 0) > 0 or st.get("io_bytes", 0) > 0)


def job_rows(job: dict, where) -> list[dict]:
    """Record rows (op, metric, unit, value) of one job of a fio JSON output: latencies in us from
    fio 3's ``lat_ns``/``clat_ns`` or older versions' ``lat``/``clat`` (already us; percentiles of
    either as clat_p* and lat_p*, whichever fio reports), bandwidth in
    B/s (``bw_bytes``, else ``bw`` in KiB/s), IOPS, for each operation that did I/O, plus the sync
    calls of a syncing job (op ``sync``). ``where`` names the file in errors."""
    rows = []
    for op in ("read", "write", "trim"):
        st = job.get(op)
        if not isinstance(st, dict) or not (st.get("total_ios", 0) > 0 or st.get("io_bytes", 0) > 0):
            continue
        try:
            if "lat_ns" in st:
                lat, clat, unit = st["lat_ns"], st["clat_ns"], "ns"
            else:  # fio 2.x: usec
                lat, clat, unit = st["lat"], st["clat"], "us"
            vals = {"lat_mean": units.convert(lat["mean"], unit, "us"),
                    "clat_mean": units.convert(clat["mean"], unit, "us")}
            vals.update((m, units.convert(v, unit, "us")) for m, v in _percentiles(clat, PERCENTILES).items())
            # lat_percentiles=1: fio reports the percentiles of the total latency (lat_ns) too, or instead
            vals.update((m, units.convert(v, unit, "us")) for m, v in _percentiles(lat, SYNC_PERCENTILES).items())
            vals["bw"] = (float(st["bw_bytes"]) if "bw_bytes" in st  # else fio 2.x: KiB/s
                          else units.convert(float(st["bw"]), "KiB/s", "B/s"))
            vals["iops"] = float(st["iops"])
        except KeyError as exc:
            raise BenchcastError(f"{where}: fio JSON {op} statistics lack {exc}") from None
        except (TypeError, ValueError) as exc:  # a statistic of the wrong type: null, text, a number for a section
            raise BenchcastError(f"{where}: fio JSON {op} statistics are not numbers where fio writes them "
                                 f"({str(exc).splitlines()[0]})") from None
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


def option_on(opts: dict, key: str, default: bool) -> bool:
    """fio's boolean option ``key`` of ``opts``: on for 1/true/on/yes, off for 0/false/off/no,
    ``default`` where it is missing or says something else."""
    value = str(opts.get(key, "")).strip().lower()
    return True if value in ("1", "true", "on", "yes") else False if value in ("0", "false", "off", "no") else default


def workload(rw: str, opts: dict) -> str:
    """The workload a job's figures are recorded under: its rw, or ``append`` for rw=write with
    file_append (appends grow the file: a log's writes, not overwrites of a laid-out file)."""
    if rw == "write" and option_on(opts, "file_append", False):
        return APPEND
    return rw


def job_keys(job: dict, global_options: dict | None, where) -> dict:
    """The record keys of one fio job from the options it reports (global, then its own): workload
    (rw; ``append`` for writes past the end of the file), block_size, iodepth, numjobs, threads
    (numjobs x iodepth), data_size (size; 0 when given as a percentage), engine (ioengine) and cell
    (:func:`cell_label`)."""
    opts = {**(global_options or {}), **(job.get("job options") or {})}
    try:
        rw = opts["rw"]
        bs = parse_size(opts.get("bs", "4K"), what=f"{where}: bs")
        depth, jobs = int(opts.get("iodepth", 1)), int(opts.get("numjobs", 1))  # not a schema default: fio's
    except KeyError:
        raise BenchcastError(f"{where}: fio JSON lacks the job option rw") from None
    except ValueError:
        raise BenchcastError(f"{where}: iodepth {opts.get('iodepth')!r} or numjobs {opts.get('numjobs')!r} "
                             f"is not a whole number") from None
    size = opts.get("size", "0")
    return {"workload": workload(rw, opts), "block_size": bs, "threads": jobs * depth, "iodepth": depth, "numjobs": jobs,
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
        from ... import records  # a cell the device cannot run: no records, said in the file

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
            "device_model": "", "mount_options": "", "jobname": job.get("jobname", ""),
            "cpu_share": cpu_share(job)}
    prov.update(provenance or {})
    from ... import records  # pandas: only where records are made, so fio runs start fast

    return records.make(rows, study=study, source=source, device=device, benchmark="fio", run=int(run),
                        **keys, **prov)


def cpu_share(job: dict) -> float:
    """The share of the job's time its thread(s) spent on a CPU (fio's ``usr_cpu + sys_cpu``, per
    cent of the job's runtime), within [0, 1]; NaN where fio did not report it."""
    try:
        share = (float(job["usr_cpu"]) + float(job["sys_cpu"])) / 100
    except (KeyError, TypeError, ValueError):
        return float("nan")
    return min(max(share, 0.0), 1.0)


def _sync_rows(st) -> list[dict]:
    """Records of fio's ``sync`` section (jobs with ``fsync``/``fdatasync``: the latency of each sync
    call after writes), op ``sync``: lat_mean and the lat percentiles of :data:`SYNC_PERCENTILES` in
    us. fio leaves ``total_ios`` at 0 there; ``lat_ns.N`` counts the calls."""
    lat = (st or {}).get("lat_ns") if isinstance(st, dict) else None
    if not isinstance(lat, dict) or not lat.get("N"):
        return []
    vals = {"lat_mean": units.convert(lat["mean"], "ns", "us")}
    vals.update((m, units.convert(v, "ns", "us")) for m, v in _percentiles(lat, SYNC_PERCENTILES).items())
    return [{"op": "sync", "metric": m, "unit": "us", "value": v} for m, v in vals.items()]
