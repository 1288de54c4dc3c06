"""fio: the grid of cells out of a study's ``fio`` source, one job file per (device, cell, repeat)
out, one cell's run as a workflow job; fio's JSON output in as records is :mod:`benchcast.sources.parse.fiojson`.

Options of a cell, from lowest to highest precedence: the source's own (the schema gives their
defaults), the source's ``per_kind`` entry for the device's kind (the schema's defaults: tmpfs
direct false, fsdax ioengine libpmem), the source's ``per_device`` entry for that device.

A cell id is ``<rw>-<bs label>[-r<rwmixread>]-<hash>``, e.g. ``randread-4K-3f9a1c``, where the hash
covers every option that shapes the measurement (engine, depth, jobs, direct, size, runtime,
ramp time, extra fio options) but not the repeat count; so changing one device's options changes
only that device's cell ids. Runs write ``--output-format=json``.
"""

from __future__ import annotations

if __name__ == "__main__":  # a measuring job: its start-up, imports included, is its first look
    from benchcast.sources.run import quality as _quality  # (the standard library only)

    _quality.start_look()

import contextlib
import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from ... import BenchcastError
from ...core import protect
from ...config import settings
from . import deadline
from ..parse.fiojson import load, option_on, parse  # noqa: F401  (parse: re-exported, a run's records)
from ...config.settings import FIO_OPTIONS
from ...core.units import parse_size, size_label

#: The mixed rw values, which take rwmixread.
MIXED = ("rw", "readwrite", "randrw")


# --------------------------------------------------------------------------- grid


def _err(source_name: str, key: str, msg: str) -> BenchcastError:
    return BenchcastError(f"source {source_name}: {key}: {msg}")


def _normalise(opts: dict, source_name: str, where: str) -> dict:
    """A device's options as cells take them: grid axes as lists, the size in bytes, extra options
    as sorted strings (the schema checked their types)."""
    out = dict(opts)
    listed = lambda v: v if isinstance(v, list) else [v]  # noqa: E731  (grid axes: one value or a list)
    out["ioengine"] = [str(e) for e in listed(out["ioengine"])]
    out["iodepth"] = listed(out["iodepth"])
    out["numjobs"] = listed(out["numjobs"])
    out["size"] = parse_size(out["size"], what=f"source {source_name}: {where}size")
    if out["size"] < 4096:
        raise _err(source_name, f"{where}size", f"{out['size']} bytes is too small")
    out["extra"] = {str(a): (str(b).lower() if isinstance(b, bool) else str(b))
                    for a, b in sorted(out["extra"].items())}
    out["rwmixread"] = listed(out["rwmixread"])
    return out


def device_options(fs: settings.FioSettings, devices: dict) -> dict[str, dict]:
    """Resolved options per measured device (see the module doc for the precedence)."""
    from ..plan import measured_devices

    ids = measured_devices(fs, devices, fs.name)
    for dev in fs.per_device:
        if dev not in ids:
            raise _err(fs.name, f"per_device.{dev}", "not a device this source measures")
    out = {}
    for dev in ids:
        over = fs.per_device.get(dev, {})
        opts = {**fs.options, **fs.per_kind.get(devices[dev].get("kind"), {}), **over}
        out[dev] = _normalise(opts, fs.name, f"per_device.{dev}." if over else "")
    return out


def option_hash(opts: dict) -> str:
    keyed = {k: opts[k] for k in FIO_OPTIONS}
    return hashlib.sha1(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:6]


def cell_id(rw: str, bs: int, opts: dict, rwmixread: int | None = None) -> str:
    mix = f"-r{rwmixread}" if rw in MIXED else ""
    return f"{rw}-{size_label(bs)}{mix}-{option_hash(opts)}"


def excluded(fs: settings.FioSettings) -> set[tuple[str, int]]:
    """The (rw, block size in bytes) pairs the source's ``exclude`` leaves out of its grid; an entry
    that names no pair of the grid is refused (a misspelt entry would silently measure it)."""
    out = set()
    for i, e in enumerate(fs.exclude):
        where = f"exclude[{i}]"
        pair = (e["rw"], parse_size(e["block_size"], what=f"source {fs.name}: {where}.block_size"))
        if pair[0] not in fs.rw or pair[1] not in fs.block_sizes:
            raise _err(fs.name, where, f"{e['rw']} at {e['block_size']} is not a cell of the grid "
                       f"(rw {', '.join(fs.rw)}; block_sizes {', '.join(size_label(b) for b in fs.block_sizes)})")
        out.add(pair)
    return out


def expand_grid(source: dict, devices: dict, source_name: str = "fio") -> list[dict]:
    """All cells of a fio source: one dict per (device, rw, block size[, rwmixread]), less the
    (rw, block size) pairs of its ``exclude`` list.

    Each cell: device, cell (id), rw, bs (bytes), rwmixread (None unless mixed), ioengine, iodepth,
    numjobs, direct, size (bytes), runtime, ramp_time (s), extra (fio options), repeats.
    """
    fs = settings.fio(source, source_name)
    skip = excluded(fs)
    cells = []
    for dev, opts in device_options(fs, devices).items():
        axes = list(itertools.product(dict.fromkeys(opts["ioengine"]), dict.fromkeys(opts["iodepth"]),
                                      dict.fromkeys(opts["numjobs"])))
        for rw, bs in itertools.product(dict.fromkeys(fs.rw), dict.fromkeys(fs.block_sizes)):
            if (rw, bs) in skip:
                continue
            for mix in (opts["rwmixread"] if rw in MIXED else [None]):
                for engine, depth, jobs in axes:
                    base = {k: opts[k] for k in FIO_OPTIONS} | {"ioengine": engine, "iodepth": depth, "numjobs": jobs}
                    cells.append({"device": dev, "cell": cell_id(rw, bs, base, mix), "rw": rw, "bs": bs,
                                  "rwmixread": mix, **base, "repeats": fs.repeats})
    seen = set()
    for c in cells:
        key = (c["device"], c["cell"])
        if key in seen:
            raise _err(fs.name, "block_sizes", f"duplicate cell {c['cell']} on device {c['device']}")
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

    from ...core.stop import alive, descendants

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


def run(cell: dict, state: dict, repeat: int, jobfile, output, timeout: float | None = None) -> Path:
    """Write the job file, run fio on the provisioned device (inside its cgroup when throttled),
    check the JSON it wrote; return the output path. Failures raise BenchcastError naming the
    device, cell and repeat. fio is stopped, with every process it started, past ``timeout`` s
    (None: its deadline, :func:`benchcast.sources.run.deadline.fio_seconds`)."""
    from ... import devices

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
    if timeout is None:  # every fio has a deadline: what it was asked to do, with the run's margin
        timeout, how = deadline.fio_seconds(cell, deadline.policy())
    else:
        how = "given"
    try:
        proc = run_fio(cmd, timeout)
    except subprocess.TimeoutExpired:
        raise BenchcastError(f"{where}: {deadline.expired('fio', timeout, how)}") from None
    if proc.returncode == -signal.SIGKILL:
        raise BenchcastError(f"{where}: fio was killed (out of memory?)")
    if proc.returncode != 0:
        from ...devices.base import one_line

        raise BenchcastError(f"{where}: fio exit {proc.returncode}: {one_line(proc)}")
    why = cut_short(load(part_out), cell)
    if why:
        raise BenchcastError(f"{where}: fio's run was cut short: {why}; nothing of this run is kept")
    from ...devices import presence

    presence.check(state)  # measured on the device it provisioned, not on what was left of it
    protect.commit(jobfile)
    return protect.commit(output)



def cut_short(data: dict, cell: dict) -> str | None:
    """Why a run fio reported as done did not run its whole time, or None: fio writes its JSON and
    exits 0 when a job's process is killed (it then reports the job with the time it had run, from
    0 ms), so a job whose runtime (``job_runtime``, in ms, after the ramp) is below the cell's
    ``runtime`` (its runs are time based unless its ``extra`` says ``time_based: 0``) was cut short -
    unless it moved its whole ``size`` per job and either appends (``file_append``: it ends when its
    file is full) or is not time based (one pass over its file: the first read of a mapped file)."""
    want = float(cell["runtime"]) * 1000
    extra = cell.get("extra") or {}
    once = "file_append" in extra or not option_on(extra, "time_based", True)
    whole = float(cell["size"]) * int(cell["numjobs"]) if once else float("inf")
    for k, job in enumerate(data.get("jobs") or []):
        ran = job.get("job_runtime")
        moved = sum(float((job.get(d) or {}).get("io_bytes", 0)) for d in ("read", "write", "trim"))
        if isinstance(ran, (int, float)) and ran < 0.9 * want and moved < whole:
            return f"jobs[{k}] ({job.get('jobname', '')}) ran {ran:g} ms of its {want:g} ms (its process killed?)"
    return None


def run_and_parse(cell: dict, state: dict, repeat: int, jobfile, output, study: str,
                  source: str = "fio", timeout: float | None = None) -> "pd.DataFrame":
    """:func:`run` then :func:`parse` with the device's provenance."""
    from ... import devices

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

    from ... import devices
    from . import quality

    why = stable_already(cell)
    if why:
        return _skip(cell, why, jobfile, output)
    with devices.on_device(device_id, spec, state_path, shield=quality.guard()["shield"]) as state:
        why = unaligned(cell, state)
        if why:
            return _skip(cell, why, jobfile, output)
        t0 = time.perf_counter()
        with quality.sample(output, state["created"].get("cpucg"),
                            {"benchmark": "fio", "device": device_id, "cell": cell["cell"], "run": repeat}, state):
            run(cell, state, repeat, jobfile, output)
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

    from ...core.cli import run_logged

    return run_logged(cell, args.log, f"fio: device {args.device}, cell {json.loads(args.cell)['cell']}, "
                                      f"repeat {args.repeat}")


if __name__ == "__main__":
    sys.exit(main())
