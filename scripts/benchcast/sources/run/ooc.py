"""Out-of-core programs (seed 003, Midorikawa and Tan): STREAM's four kernels, a 2-D stencil and the
Himeno benchmark's 3-D Poisson kernel on working sets larger than the memory they may use, in one of
three modes:

* ``memory``: arrays malloc'd, no memory limit: the in-memory baseline;
* ``swap``: arrays malloc'd under a memory limit, with swap on the device under test;
* ``mmap``: arrays a shared mapping of a file on the device under test, under a memory limit (the
  dirty pages are written to the file, and ``msync(MS_SYNC)`` at the end, the paper's M_SYNC).

The programs are benchcast's own C sources (``ooc/*.c``, built by :func:`build` with the system
compiler, ``-O3``); each prints one JSON line. :func:`parse` turns it into records: benchmark
``ooc``, engine = mode, workload = kernel (``copy``, ``scale``, ``add``, ``triad``, ``stencil5``,
``himeno``),
data size = the working set asked for, op ``pass``; metrics ``lat_mean`` (mean seconds of one pass of
the kernel over the working set, in us), ``lat_min`` (the best pass) and ``bw`` (bytes a pass moves
over its mean time, B/s); and per program op ``run``, metric ``runtime`` (ms, the whole program:
initialisation, passes and the final sync).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ... import BenchcastError
from ...records import blockio
from . import deadline, paging
from ...core import cli, units
from ...core.vocabulary import (OOC_BENCHMARK, OOC_MMAP_KINDS, OOC_MODE_KINDS, OOC_MODES, OOC_PROGRAMS,
                                OOC_REFERENCE_MODE, OOC_SWAP_KINDS)
from ... import records as rec
from ...devices import memlimit

ROOT = Path(__file__).resolve().parents[4]
SOURCES = ROOT / "ooc"
PROGRAMS = OOC_PROGRAMS
MODES = OOC_MODES
SWAP_KINDS, MMAP_KINDS, MODE_KINDS = OOC_SWAP_KINDS, OOC_MMAP_KINDS, OOC_MODE_KINDS
BENCHMARK = OOC_BENCHMARK
REFERENCE_MODE = OOC_REFERENCE_MODE
CFLAGS = ["-O3", "-Wall", "-Wextra"]
#: A program the kernel kills for want of memory runs again, up to this many more times, after
#: :data:`KILL_PAUSE_S` seconds. At a working set as large as the memory limit, over swap on a
#: rate-capped device, the memory cgroup now and then kills a program while swap readahead charges
#: pages faster than the capped device lets reclaim write others out (kernel 6.18: twice in a row in
#: one default run of session 19, once in session 13's; the same job ran through minutes later).
#: A killed run leaves no result; only a run that ends is recorded.
KILL_RETRIES = 2
KILL_PAUSE_S = 5.0


class ProgramKilled(BenchcastError):
    """The kernel killed the program (SIGKILL: out of memory under its cgroup's limit)."""


def build(program: str, out, cc: str = "cc") -> Path:
    """Compile ``ooc/<program>.c`` into ``out`` (written under a temporary name, then renamed)."""
    if program not in PROGRAMS:
        raise BenchcastError(f"ooc: unknown program {program!r} (known: {', '.join(PROGRAMS)})")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    cmd = [cc, *CFLAGS, "-o", str(tmp), str(SOURCES / f"{program}.c"), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BenchcastError(f"ooc: building {program} failed: {(proc.stderr.strip().splitlines() or ['?'])[0]}")
    tmp.replace(out)
    return out


def command(binary, working_set: int, reps: int, mmap_file=None) -> list[str]:
    cmd = [str(binary), "--bytes", str(int(working_set)), "--reps", str(int(reps))]
    if mmap_file is not None:
        cmd += ["--mmap", str(mmap_file)]
    return cmd


def parse(text: str, where: str, **columns) -> pd.DataFrame:
    """Records of one program's JSON line; ``columns`` go on every row (device, engine = mode,
    data_size, run, provenance ...)."""
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("{")]
    if len(lines) != 1:
        raise BenchcastError(f"{where}: expected one JSON result line, found {len(lines)}")
    try:
        out = json.loads(lines[0])
        kernels = out["kernels"]
        rows = [{"op": "run", "workload": out["program"], "metric": "runtime", "unit": "ms",
                 "value": units.convert(float(out["total_seconds"]), "s", "ms")}]
        for name, k in kernels.items():
            mean = float(k["mean"])
            rows += [
                {"op": "pass", "workload": name, "metric": "lat_mean", "unit": "us", "value": units.convert(mean, "s", "us")},
                {"op": "pass", "workload": name, "metric": "lat_min", "unit": "us", "value": units.convert(float(k["best"]), "s", "us")},
                {"op": "pass", "workload": name, "metric": "bw", "unit": "B/s",
                 "value": float(k["pass_bytes"]) / mean if mean > 0 else 0.0},
            ]
        extra = {"ooc_bytes": int(out["bytes"]), "ooc_reps": int(out["reps"]),
                 "sync_s": float(out["sync_seconds"]), "init_s": float(out["init_seconds"])}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise BenchcastError(f"{where}: not an ooc result line ({type(exc).__name__}: {exc})") from None
    base = {"study": "", "device": "", "source": BENCHMARK, "benchmark": BENCHMARK, "engine": "", "block_size": 0,
            "threads": 1, "data_size": 0, "run": 0}
    base.update(extra)
    base.update(columns)
    return rec.make(rows, **base)


@dataclass(frozen=True)
class Place:
    """Where and how one out-of-core job runs: the built ``binaries`` (program -> path), mmap files
    in ``device_dir``, raw outputs in ``out_dir``, records named ``study``, ``device`` and ``run``
    with ``provenance`` on every row; each program inside the memory cgroup ``cgroup`` (made by the
    caller with the swap file: :func:`benchcast.devices.on_device`) for at most ``timeout`` s; a
    program the kernel kills runs again after ``kill_pause`` seconds, up to ``kill_retries`` times;
    with ``counters`` (a function returning the counters of memory and the device: groups
    ``device``, :func:`benchcast.devices.io_counters`, ``memcg`` and ``vmstat``, :mod:`benchcast.sources.run.paging`),
    read at each edge of a program's phases."""

    binaries: dict
    device_dir: Path
    out_dir: Path
    study: str
    device: str
    run: int = 0
    cgroup: Path | None = None
    timeout: float | None = None
    provenance: dict = field(default_factory=dict)
    kill_retries: int = 0
    kill_pause: float = 0.0
    counters: Callable[[], dict] | None = None


def run_program(binary, working_set: int, reps: int, *, prefix, at: Place, mmap_file=None,
                columns: dict | None = None) -> pd.DataFrame:
    """Run one program once, inside the memory cgroup ``at.cgroup`` if given (the program alone: the
    limit is its own), for at most ``at.timeout`` s; ``PREFIX.out`` / ``.err`` / ``.cmd`` keep what it
    printed. With ``at.counters``, the program stops at the edges of its phases (``--marks``) while
    the counters are read, and its records include what each pass and the whole run did to memory
    and the device (:func:`io_records`; every reading in ``PREFIX.marks.json``). A program killed by
    the kernel (out of memory: a limit below the working set and no swap) or ending non-zero raises,
    naming the files."""
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    cmd = command(binary, working_set, reps, mmap_file) + (["--marks"] if at.counters else [])
    prefix.with_name(prefix.name + ".cmd").write_text(" ".join(cmd) + "\n")
    out_path, err_path = (prefix.with_name(prefix.name + s) for s in (".out", ".err"))
    started = time.monotonic()
    marks: list[dict] = []
    ooms = memlimit.oom_kills(at.cgroup) if at.cgroup else None
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if at.counters else out, stderr=err, text=True,
                                stdin=subprocess.PIPE if at.counters else subprocess.DEVNULL,
                                preexec_fn=memlimit.joiner(at.cgroup) if at.cgroup else None)
        failed: list[BaseException] = []
        follower = threading.Thread(target=_follow, args=(proc, out, at.counters, marks, failed), daemon=True)
        if at.counters:
            follower.start()
        try:
            rc = proc.wait(timeout=at.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            why = deadline.expired(Path(cmd[0]).name, at.timeout, "the source's timeout")
            raise BenchcastError(f"{out_path}: {why}") from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            if at.counters:
                follower.join()
                proc.stdin.close()
    if rc == -signal.SIGKILL:
        raise ProgramKilled(f"{out_path}: {Path(cmd[0]).name} was killed: {_kill_cause(at.cgroup, ooms)}")
    if rc != 0:
        tail = " | ".join(err_path.read_text(errors="replace").strip().splitlines()[-3:])
        raise BenchcastError(f"{out_path}: {Path(cmd[0]).name} exited with {rc}: {tail}")
    if failed:
        raise BenchcastError(f"{out_path}: reading the counters at a mark: {failed[0]}")
    df = parse(out_path.read_text(), str(out_path), **(columns or {}))
    if at.counters:
        prefix.with_name(prefix.name + ".marks.json").write_text(json.dumps(marks) + "\n")
        df = pd.concat([df, io_records(df, marks, str(out_path))], ignore_index=True)
    df["wall_s"] = round(time.monotonic() - started, 3)
    df["raw"] = str(out_path)
    return df


def _kill_cause(cgroup, before: int | None) -> str:
    """Why a program died of SIGKILL: its memory cgroup's OOM killer (its count went up), or not."""
    after = memlimit.oom_kills(cgroup) if cgroup else None
    if before is None or after is None:
        return ("SIGKILL (out of memory? the working set exceeds the memory limit and there is no swap "
                "for it)")
    if after > before:
        return "its memory cgroup's OOM killer (the working set exceeds the memory limit and there is no swap for it)"
    return "SIGKILL from outside (not its memory cgroup's OOM killer)"


#: What a program prints at each edge of a phase when run with ``--marks``: ``#mark PHASE EDGE``.
MARK = "#mark "
#: The phases of a run that are not a kernel's pass: initialising the arrays, the final msync.
SETUP_PHASES = ("init", "sync")


def _follow(proc, out, counters, marks: list, failed: list) -> None:
    """Copy the program's output to ``out``; at each of its marks (:data:`MARK`) read ``counters()``
    into ``marks`` and let the program go on (a line on its stdin)."""
    for line in proc.stdout:
        out.write(line)
        if not line.startswith(MARK):
            continue
        try:
            snap = counters()
        except Exception as exc:  # noqa: BLE001 - raised after the run: the program must not wait forever
            failed.append(exc)
            snap = None
        _, phase, edge = line.split()
        marks.append({"phase": phase, "edge": edge, "counters": snap})
        try:
            proc.stdin.write("\n")
            proc.stdin.flush()
        except OSError:  # the program is gone
            pass


def io_records(result: pd.DataFrame, marks: list[dict], where: str) -> pd.DataFrame:
    """What a run did to memory and the device, from the counters read at its marks: per kernel, per
    pass (the increases of its passes summed, over their number), and for the whole run (workload =
    the program, per run, from its first mark to its last), as ``device`` records
    (:func:`benchcast.records.blockio.per_op`) and ``paging`` records (:func:`benchcast.sources.run.paging.per_op`),
    with the columns of ``result`` (the run's own records)."""
    begun: dict[str, dict] = {}
    totals: dict[str, tuple[int, dict | None]] = {}
    for m in marks:
        if m["edge"] == "begin":
            begun[m["phase"]] = m["counters"]
        elif m["phase"] in begun:
            n, total = totals.get(m["phase"], (0, {}))
            d = paging.delta(begun.pop(m["phase"]), m["counters"])
            totals[m["phase"]] = (n + 1, d if n == 0 else paging.add(total, d))
    runs = result[result["op"] == "run"]
    if len(marks) < 2 or runs.empty:
        raise BenchcastError(f"{where}: the run's marks are missing or incomplete ({len(marks)} read)")
    per = {k: v for k, v in totals.items() if k not in SETUP_PHASES}
    per[runs["workload"].iloc[0]] = (1, paging.delta(marks[0]["counters"], marks[-1]["counters"]))
    rows = []
    for workload, (n, d) in per.items():
        dev = (d or {}).get("device")
        rows += [{"workload": workload, **r} for r in
                 blockio.per_op(dict.fromkeys(dev, 0) if dev else None, dev, n) + paging.per_op(d, n)]
    meta = result.drop(columns=["op", "metric", "unit", "value", "workload"]).iloc[0].to_dict()
    return rec.check(pd.DataFrame([{**meta, **r} for r in rows], columns=list(result.columns)), where=where)


def run_ooc(programs, working_sets, mode: str, reps: int, at: Place) -> pd.DataFrame:
    """Every program at every working set (``reps`` passes each), in one mode, on one device (see
    :class:`Place`); mmap files are removed after each program. Each attempt of a killed program
    replaces the last one's output; the last kill is raised, saying how many times. Records of all
    runs."""
    if mode not in MODES:
        raise BenchcastError(f"ooc: unknown mode {mode!r} (known: {', '.join(MODES)})")
    frames = []
    for program in programs:
        for ws in working_sets:
            mapped = Path(at.device_dir) / f"benchcast-ooc-{program}-{os.getpid()}.dat" if mode == "mmap" else None
            for attempt in range(at.kill_retries + 1):
                try:
                    frames.append(run_program(
                        at.binaries[program], int(ws), reps, prefix=Path(at.out_dir) / f"{program}-{int(ws)}",
                        mmap_file=mapped, at=at,
                        columns={"study": at.study, "device": at.device, "engine": mode, "data_size": int(ws),
                                 "run": at.run, **at.provenance}))
                    break
                except ProgramKilled as exc:
                    if attempt == at.kill_retries:
                        raise ProgramKilled(f"{exc} ({attempt + 1} times)" if attempt else str(exc)) from None
                    cli.say(f"benchcast: ooc: device {at.device}, mode {mode}, repeat {at.run}: {exc}; "
                            f"again in {at.kill_pause:g} s")
                    time.sleep(at.kill_pause)
                finally:
                    if mapped is not None:
                        mapped.unlink(missing_ok=True)
    return rec.check(pd.concat(frames, ignore_index=True), where=f"ooc {at.device} {mode}")


def main(argv=None) -> int:
    """``python -m benchcast.ooc build PROGRAM OUT``: compile one program (the build rule)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchcast.ooc")
    p.add_argument("action", choices=["build"])
    p.add_argument("program", choices=sorted(PROGRAMS))
    p.add_argument("out")
    args = p.parse_args(argv)
    try:
        print(build(args.program, args.out))
    except BenchcastError as exc:
        print(f"benchcast: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
