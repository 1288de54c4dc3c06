"""Faults survived: a seeded fault-injection run of a small study (issue 52; a script that prints).

A scratch copy of the workflow measures a small study that still has every kind of job (fio, YCSB on
RocksDB and on MariaDB, out-of-core over swap and mmap, on a tmpfs, a zram, a delayed and a throttled
device, then the analysis and the report), with ``results/`` on a small tmpfs of its own. It is first
run clean (the reference: its cells and run counts, and every job's place in the run and its
duration). Then, round after round on fresh copies, the README's command ``./benchcast.sh run`` is
run again and again, each run struck by faults at seeded points of seeded jobs (one after another
while the run survives them), until the study finishes (at most :data:`MAX_RUNS` runs after the last
fault); nothing but that command runs between faults (never ``teardown``). The faults (:data:`KINDS`):

    fio_worker   SIGKILL of fio's job process (the worker fio forks)
    ycsb_jvm     SIGKILL of the YCSB client's JVM
    mariadbd     SIGKILL of the MariaDB server of a YCSB job
    ooc_program  SIGKILL of an out-of-core program
    fuse_server  SIGKILL of the delayed device's FUSE server, under any job on that device
    snakemake    SIGKILL of the Snakemake process alone (its jobs run on, orphaned)
    power_cut    SIGKILL of every process of the run at once (stopped first, then killed: the power
                 cut of one machine; its mounts and devices stay, as a reboot would not)
    sigterm      SIGTERM to ./benchcast.sh
    results_full the results file system filled during a job (freed after the run, as a user would)
    tmpfs_gone   the tmpfs device unmounted under a job (lazily: the kernel refuses a plain umount
                 of a busy file system)
    zram_reset   the zram device reset under a job (the kernel refuses while it is mounted: then its
                 file system is unmounted lazily and the reset tried until the device is free)
    loop_detach  the throttled device's loop device detached under a job (the kernel defers that
                 while it is mounted: then its file system is unmounted lazily too)

A *point* is deterministic: the job (by its outputs: fault i hits the k-th job, k seeded in 1-3, that
its kind can hit after the previous fault's job, in the order the clean run ran them, within
:data:`SPAN` jobs of it; a fault whose kind has no such job waits for the next round, where the
waiting ones go first, in the order drawn) and a fraction f of that job (seeded): the fault strikes f of the way through what the clean
run took of that job after its victim (the process the kind kills, the job itself for the others)
first appeared (a fault whose job ends before its point, or whose victim never comes, is missed, and
said so). A fault in a device's job (a benchmark, a provisioning, a teardown) can be followed by
later ones in the same round; one in the analysis ends it. The same seed injects the same faults at
the same points of the same jobs. The modules of harness/ beside this one hold the scratch trees
(``fault_tree``), the kinds (``fault_kinds``) and the checks (``fault_checks``).

Invariants, from the files alone: every raw output complete before a run is byte-identical after it
(lost measurements); every record comes from a complete raw output, no run counted twice; the records
and the aggregate have the clean run's cells and run counts; nothing is left after a run that could
clean up (mounts, loop and zram devices, swap, cgroups, servers, FUSE daemons; and scratch files at a
round's end); every fault produced one line naming its job and cause, and no run printed a traceback.

    sudo .venv/bin/python benchmarks/faults.py --seed 1 --faults 60 [--work /var/tmp/faults] [--keep]
    sudo .venv/bin/python benchmarks/faults.py --replay seed1.txt [--round 5]   # strike them again

``--replay`` reads the fault lines an earlier run printed and strikes the same kinds at the same
points of the same jobs (by name), round by round on fresh copies (``--round``: only those rounds),
whatever the timing of this run: a fault the draws would have moved elsewhere after a miss stays
on its job. A fault whose job is done before its turn is missed, and said so.

No wait of the harness lasts for ever: a run has :data:`HANG_S` (or twice the clean run, the longer)
from its start to end, the harness's waits for a fault's job and victim end with it, and a run that
has not ended by then is cut (a power cut of its tree) and counted as lost: a ``hang`` violation
naming the job its fault struck; the next round goes on. Its tools (umount, losetup) have
:data:`fault_tree.SH_S` each.

Prints one line per fault, then the table: fault kind, injections, runs needed (the most after one
fault until its job was done), invariant violations, hangs among them; then the totals. Exit 1 on
any violation.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.fault_checks import (TRACEBACK, check_records, compare_layout, layout, leftovers, lost,  # noqa: E402
                                  names_job, raw_outputs, reasons)
from harness.fault_kinds import FILL, KINDS, Fault, strike, survived  # noqa: E402
from harness.fault_tree import (CHAINABLE, HANG_S, JAR, MEASURING, STUDY, Job, Run, Tree, _done,  # noqa: E402,F401
                                catalogue)

from benchcast import BenchcastError  # noqa: E402 (fault_tree puts the package on the path)
from benchcast.sources.run.ycsb import build_jar  # noqa: E402

#: Runs of the command after a fault (or at a round's end) before the study must have finished.
MAX_RUNS = 3
#: k of "the k-th job its kind can hit after the last fault's job".
MAX_K = 3
#: Where a planned fault (the tests') strikes its job: early, so that it meets its victim alive.
PLAN_FRACTION = 0.3
#: The kinds after which a run goes down even with --keep-going (it is stopped, or every job
#: after the fault fails on the full results file system until the space is freed, after the run).
ENDS_RUN = ("snakemake", "power_cut", "sigterm", "results_full")
#: How far after the last fault's job (places in the clean run's order) the next may strike in the
#: same round; a fault with no job so near waits for the next round (more faults per round).
SPAN = 4


# --------------------------------------------------------------------------- the study


def small_study(cfg: dict) -> None:
    """Every kind of job, as small as each can be: a tmpfs, a zram, a delayed (FUSE over tmpfs) and a
    throttled (loop) device; fio 1 cell x 2 repeats; YCSB RocksDB on four devices and MariaDB on
    three, 2 MB, two workloads of 1000 operations; STREAM in memory, over swap and mmap at 24 MB against 16 MB;
    the analysis and the report of all of it."""
    local = cfg["studies"][STUDY]
    local["devices"] = {
        "ram": {"kind": "tmpfs", "size": "256M"},
        "zr": {"kind": "zram", "disksize": "256M", "fstype": "ext4"},
        "fz": {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "256M"}, "read_delay_us": 50,
               "write_delay_us": 20, "sync_delay_us": 50},
        "slow": {"kind": "throttled", "backing": {"kind": "loop", "size": "256M", "backing_dir": ".",
                                                  "fstype": "ext4"},
                 "read_iops": 4000, "write_iops": 4000, "read_bps": "100M", "write_bps": "100M"},
    }
    ycsb = {"type": "ycsb", "workloads": ["write-only", "read-only"], "data_sizes": ["2MB"],
            "operationcount": 1000, "threads": 1, "repeats": 1}
    local["sources"] = {
        "fio": {"type": "fio", "rw": ["randread"], "block_sizes": ["4K"], "repeats": 2, "ioengine": "psync",
                "size": "8M", "runtime": 1, "ramp_time": 0, "direct": False},
        "ycsb": {**ycsb, "engines": ["rocksdb"]},
        "maria": {**ycsb, "engines": ["mariadb"], "mariadb": {"buffer_pool_size": "8M"},
                  "devices": ["ram", "fz", "slow"]},
        "ooc": {"type": "ooc", "programs": ["stream"], "working_sets": ["24M"], "memory_limit": "16M",
                "passes": 1, "repeats": 1, "devices": ["zr", "fz", "slow"]},
    }
    local["features"] = {"workloads": ["randread"], "block_sizes": ["4K"], "metrics": ["lat_mean"]}
    local.pop("pairing", None)
    local["targets"] = {"T": {"figures": [
        {"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": "20 us"}]}}
    local.pop("report", None)
    local["extrapolate"] = {"data_sizes": ["4MB"]}
    cfg["studies"] = {STUDY: local}
    # no run is spoiled by what else the shared machine does: the records of every run are the same
    cfg["run"] = {"interference": {"other_cpu": None, "steal": None}}


class Campaign:
    """The seed's faults over rounds of fresh trees (see the module doc)."""

    def __init__(self, seed: int, wanted: int, work: Path, kinds=tuple(KINDS), mutate=small_study,
                 keep: bool = False, say=print, plan: list[str] | None = None, patch=None, args=(),
                 script: dict[int, list[Scripted]] | None = None):
        """``plan``: the kinds to inject, each once, instead of the seed's draws (the tests);
        ``patch(path)``: what to change in each scratch copy of the workflow (the tests); ``args``:
        what each run gives after ``run`` (Snakemake targets: the tests stop at the aggregate);
        ``script``: the faults of an earlier campaign to strike again, round by round
        (:func:`read_script`): the same kinds at the same points of the same jobs."""
        self.seed, self.wanted, self.work, self.kinds = seed, wanted, Path(work), list(kinds)
        self.mutate, self.keep, self.say, self.patch, self.args = mutate, keep, say, patch, tuple(args)
        self.plan = list(plan) if plan is not None else None
        self.script = script
        self.queue: list[tuple[Fault, Job]] = []
        self.tries: Counter = Counter()
        self.fastest: dict[str, float] = {}  # job log -> its shortest time so far
        self.rng = random.Random(seed)
        self.faults: list[Fault] = []
        self.waiting: list[Fault] = []  # drawn, no job left in their round: the next round's first
        self.drawn = 0
        self.rounds = 0
        self.clean_s = 0.0  # the clean run's seconds, once it ran (until then a run has HANG_S)
        self.other: list[str] = []  # violations no fault is to blame for (the clean run's)

    # -- the reference
    def clean(self) -> None:
        tree = Tree(self.work / "clean", self.mutate, self.patch, self.args)
        try:
            t0 = time.monotonic()
            proc, out = tree.start()
            run = tree.finish(proc, out, t0, timeout=self.hang_s)
            if run.code != 0:
                raise SystemExit(f"faults: the clean run failed ({run.code}); see {out}:\n{run.output[-3000:]}")
            self.jobs = catalogue(tree.path)
            self.note_times(tree)
            used = self.plan if self.plan is not None else self.kinds
            none = [k for k in used if not any(KINDS[k].hits(j) for j in self.jobs)]
            if none:
                raise SystemExit(f"faults: no job of the study takes {', '.join(none)}")
            self.ref = layout(tree.path)
            self.windows: dict = {}
            self.note_windows(tree, [])
            self.clean_s = run.seconds
            left = leftovers(tree, scratch=True) + check_records(tree)
            self.other += [f"clean run: {x}" for x in left]
        finally:
            tree.dispose(self.keep)
        self.say(f"clean run: {run.seconds:.0f} s, {len(self.jobs)} jobs"
                 f"{'; ' + '; '.join(left) if left else ''}")

    # -- drawing faults and their jobs
    def draw(self) -> Fault:
        """The seed's next fault: a kind, k and a fraction."""
        self.drawn += 1
        kind = self.rng.choice(self.kinds)
        return Fault(self.drawn, kind, self.rng.randint(1, MAX_K), round(self.rng.uniform(0.05, 0.95), 2))

    def target(self, fault: Fault, tree: Tree, after: int) -> Job | None:
        """The fault's job: the k-th its kind can hit after the job at place ``after`` (the last
        there is, when fewer), not yet done; within :data:`SPAN` places of it, but at a round's start."""
        hits = [j for j in self.jobs if j.place > after and KINDS[fault.kind].hits(j) and not _done(tree, j)]
        job = hits[min(fault.k, len(hits)) - 1] if hits else None
        return job if job is not None and (after < 0 or job.place <= after + SPAN) else None

    def next_fault(self, tree: Tree, after: int) -> tuple[Fault, Job] | None:
        """The next fault and its job, after the job at place ``after``; None: the round is over (a
        drawn fault no job of it can take waits for the next round)."""
        if self.script is not None:  # the script's next fault; one whose job is done is missed
            while self.queue and _done(tree, self.queue[0][1]):
                fault, job = self.queue.pop(0)
                fault.job, fault.round, fault.run = job, self.number, len(tree.runs) + 1
                self.faults.append(fault)
                self.missed.append(fault)
            return self.queue.pop(0) if self.queue else None
        if self.plan is not None:
            while self.queue and _done(tree, self.queue[0][1]):
                self.plan.append(self.queue.pop(0)[0].kind)  # its job done unstruck: the next round's
            return self.queue.pop(0) if self.queue else None
        # the faults drawn before that had no job left in their round come first, in the order drawn;
        # a drawn fault without a job left waits for the next round (at most a few: then the round
        # is over)
        for i, fault in enumerate(self.waiting):
            job = self.target(fault, tree, after)
            if job is not None:
                return self.waiting.pop(i), job
        while len(self.waiting) < 2 * len(self.kinds):
            fault = self.draw()
            job = self.target(fault, tree, after)
            if job is not None:
                return fault, job
            self.waiting.append(fault)
        return None

    def assign(self, tree: Tree) -> None:
        """An explicit plan (tests): each of its kinds gets its own job of the round, the most
        particular kinds first, each its earliest job not taken (a benchmark where there is one, else
        a device's provisioning or a build: jobs a run after the last fault's reaches), then struck
        in the round's order."""
        taken, queue, left = set(), [], []
        # benchmarks first; no teardown (after a job a fault broke, a run with --keep-going never
        # comes to its device's teardown: a fault waiting for it would let the others pass by)
        order = sorted((j for j in self.jobs if j.rule in CHAINABLE and j.rule != "teardown_device"),
                       key=lambda j: (j.rule not in MEASURING, j.place))
        for kind in sorted(self.plan, key=lambda k: sum(KINDS[k].hits(j) for j in self.jobs)):
            job = next((j for j in order if KINDS[kind].hits(j)
                        and j.place not in taken and not _done(tree, j)), None)
            if job is None:
                left.append(kind)
                continue
            taken.add(job.place)
            # a provisioning or a build lasts a second or two: struck as soon as it is seen
            at = PLAN_FRACTION if job.rule in MEASURING else 0.0
            queue.append((Fault(len(self.faults) + len(queue) + 1, kind, 1, at), job))
        queue.sort(key=lambda fj: fj[1].place)
        last = max((f.index for f in self.faults), default=0)  # some of a round are struck in the next
        for i, (f, _j) in enumerate(queue):
            f.index = last + i + 1
        self.plan, self.queue = left, queue

    def seconds_of(self, fault: Fault) -> float:
        """What the clean run took of the fault's job after its victim appeared: the victim's life
        for the kinds that kill one, a benchmark's time at work for the others on a benchmark job (the
        delayed device's server too), the whole job for any other job."""
        if KINDS[fault.kind].victims is not None:
            return self.windows.get((fault.job.log, fault.kind), 0.3)
        if fault.job.rule in MEASURING:
            return self.windows.get((fault.job.log, "bench"), fault.job.seconds)
        return self.fastest.get(fault.job.log, fault.job.seconds)

    def note_windows(self, tree: Tree, struck: list) -> None:
        """The shortest life of each job's victims in any run that finished the job unharmed (a
        victim of a busy machine's run lives longer than on a quiet one's)."""
        hit = {f.job.log for f in struck}
        done = {j.log for j in self.jobs if _done(tree, j)}
        for (log, kind), (a, b) in tree.windows.items():
            if log in done and log not in hit:
                self.windows[(log, kind)] = max(0.2, min(b - a, self.windows.get((log, kind), b - a)))

    def note_times(self, tree: Tree) -> None:
        """The shortest time each job has taken in any run so far (a job the clean run ran on a busy
        machine takes less on a quiet one, and a fault's point must fall within it)."""
        for job in catalogue(tree.path):
            if job.log:
                self.fastest[job.log] = min(job.seconds, self.fastest.get(job.log, job.seconds))

    # -- a round
    def round(self) -> None:
        self.rounds += 1
        tree = Tree(self.work / f"round{self.rounds}", self.mutate, self.patch, self.args)
        mine: list[Fault] = []
        self.missed: list[Fault] = []
        if self.plan is not None:
            self.assign(tree)
        self.number = self.rounds  # the round's number in the lines
        if self.script is not None:  # the scripted round's faults, under its own number
            jobs = {j.name: j for j in self.jobs}
            self.number = sorted(self.script)[self.rounds - 1]
            self.queue = [(Fault(x.index, x.kind, 1, x.fraction), jobs[x.job]) for x in self.script[self.number]]
        try:
            self._rounds(tree, mine)
            self.check_round(tree, mine)
            if self.plan is not None:  # a planned fault that missed its job: once more, next round
                again = [f.kind for f in mine if not f.injected and self.tries[f.kind] < 2]
                self.plan += again + [f.kind for f, _ in self.queue]
                self.queue = []
                for kind in again:
                    self.tries[kind] += 1
        finally:
            forced = tree.dispose(self.keep)
            if forced:
                (mine[-1].violations if mine else self.other).append(f"leftover: cleaned by force: {', '.join(forced)}")
        for f in sorted(mine + self.missed, key=self.faults.index):
            self.say(f.line())

    def _rounds(self, tree: Tree, mine: list) -> None:
        after, closing, idle, retry = -1, False, 0, []
        while True:
            self.queue[:0], retry = retry, []
            before = raw_outputs(tree)
            t0 = time.monotonic()
            until = t0 + self.hang_s
            proc, out = tree.start()
            struck: list[Fault] = []
            while not closing and proc.poll() is None and self.injected < self.wanted:
                picked = self.next_fault(tree, after)
                if picked is None:
                    closing = True
                    break
                fault, job = picked
                fault.job, fault.round, fault.run = job, self.number, len(tree.runs) + 1
                strike(tree, proc, fault, self.seconds_of(fault), until)
                if not fault.injected and self.plan is not None and not _done(tree, job):
                    retry.append((fault, job))  # its job did not come, or ended early: the next run's
                    continue
                self.faults.append(fault)
                mine.append(fault)
                after = job.place
                if fault.injected:
                    struck.append(fault)
                    if job.rule not in CHAINABLE:
                        closing = True
                    elif not survived(tree, proc, job, until) and (not self.keep_going or fault.kind in ENDS_RUN):
                        break  # the run goes down: the next fault strikes the next run
            run = tree.finish(proc, out, t0, timeout=self.hang_s)
            (tree.results / FILL).unlink(missing_ok=True)  # a user frees the space, then runs again
            self.note_times(tree)
            self.note_windows(tree, struck)
            self.check_run(tree, run, struck, mine, before)
            idle = 0 if struck else idle + 1
            if self.injected >= self.wanted:
                closing = True
            if run.code == 0:  # the study is done
                break
            if idle > MAX_RUNS:
                blame = (mine[-1].violations if mine else self.other)
                blame.append(f"not finished: {idle} runs after the last fault")
                break
        self.queue[:0] = retry

    @property
    def keep_going(self) -> bool:
        """Whether the runs go on after a failed job (Snakemake's --keep-going among ``args``): then
        the next fault may strike the same run after one its job did not survive."""
        return any(a in ("--keep-going", "-k") for a in self.args)

    @property
    def hang_s(self) -> float:
        """How long a run may take before it has hung: :data:`HANG_S`, or twice the clean run where
        that is longer (a run struck by faults redoes at most the clean run's work)."""
        return max(HANG_S, 2 * (self.clean_s or 0))

    @property
    def injected(self) -> int:
        return sum(f.injected for f in self.faults)

    # -- checks
    def check_run(self, tree: Tree, run: Run, struck: list[Fault], mine: list[Fault], before: dict) -> None:
        blame = struck[-1] if struck else (next((f for f in reversed(mine) if f.injected), None))
        found = lost(before, raw_outputs(tree))
        if TRACEBACK in run.output:
            found.append(f"traceback: in run {run.number}'s output")
        if "faults: HUNG" in run.output:  # a run that needed a hand to end: lost, and said where
            where = f" (struck in {blame.job.name})" if blame else ""
            found.append(f"hang: run {run.number} did not end within {self.hang_s:.0f} s{where}")
        if all(KINDS[f.kind].cleans for f in struck):
            found += [f"leftover: after run {run.number}: {x}" for x in leftovers(tree, scratch=False)]
        found += [f"records: {x}" for x in check_records(tree)]
        (blame.violations if blame else self.other).extend(found)
        for f in mine:
            if not f.injected:
                continue
            # its one line: in the run it struck, or for a run that could not clean up, the next one
            if f.run == run.number and KINDS[f.kind].cleans or f.run == run.number - 1 and not KINDS[f.kind].cleans:
                if f.after_outputs and f.run == run.number:  # its job had done its work: what failed
                    if run.code != 0 and not reasons(run.output):  # after it says why instead
                        f.violations.append(f"line: run {run.number} failed and no line of it says why")
                elif not names_job(run.output, f.job):
                    f.violations.append(f"line: no line of run {run.number} names {f.job.name}")
            if f.runs_needed is None and run.number >= f.run:
                chained = f.job.rule in CHAINABLE
                if (chained and _done(tree, f.job)) or run.code == 0:
                    f.runs_needed = run.number - f.run

    def check_round(self, tree: Tree, mine: list[Fault]) -> None:
        last = next((f for f in reversed(mine) if f.injected), None)
        found = [f"leftover: at the round's end: {x}" for x in leftovers(tree, scratch=True)]
        if tree.runs and tree.runs[-1].code == 0:
            found += [f"layout: {x}" for x in compare_layout(self.ref, layout(tree.path))]
        (last.violations if last else self.other).extend(found)
        for f in mine:
            if f.injected and f.runs_needed is None:
                f.violations.append("not finished: its job was never done")

    def reuse(self, other: "Campaign") -> None:
        """Another campaign's clean run of the same study as this one's reference (its jobs, cells,
        times and victims' lives) instead of a clean run of its own (the tests: one clean run)."""
        self.jobs, self.ref, self.clean_s = other.jobs, other.ref, other.clean_s
        self.windows, self.fastest = dict(other.windows), dict(other.fastest)

    def go(self, reference: "Campaign | None" = None) -> None:
        if reference is None:
            self.clean()
        else:
            self.reuse(reference)
        if self.script is not None:
            names = {j.name for j in self.jobs}
            gone = [x.job for faults in self.script.values() for x in faults if x.job not in names]
            if gone:
                raise SystemExit(f"faults: the study has no job {gone[0]!r} to strike again")
            for _ in self.script:
                self.round()
            return
        while self.injected < self.wanted:
            before = self.injected
            self.round()
            if self.plan is not None:
                if self.injected == before or not self.plan:  # the plan's kinds that no job took
                    self.other += [f"never injected: {kind}" for kind in self.plan]
                    break
                continue
            if self.injected == before:
                self.other.append("a round without a fault struck: the study's jobs take none of the kinds")
                break


@dataclasses.dataclass(frozen=True)
class Scripted:
    """One fault of an earlier campaign, as its line printed it."""

    index: int
    kind: str
    fraction: float
    job: str  # the job's name: its rule and first output


#: A fault's line (:meth:`Fault.line`), struck or missed.
LINE = re.compile(r"^fault\s+(\d+) (\S+)\s+round (\d+) run \d+: (\S+ \S+) at ([\d.]+):")


def read_script(text: str, rounds: set[int] | None = None) -> dict[int, list[Scripted]]:
    """The faults an earlier campaign printed, by round (only ``rounds`` when given), in the order
    they came: struck and missed alike, as the campaign met them."""
    script: dict[int, list[Scripted]] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m and (rounds is None or int(m.group(3)) in rounds):
            script.setdefault(int(m.group(3)), []).append(
                Scripted(int(m.group(1)), m.group(2), float(m.group(5)), m.group(4)))
    return script


def table(faults: list[Fault], other: list[str]) -> str:
    rows = []
    for kind in KINDS:
        mine = [f for f in faults if f.kind == kind and f.injected]
        if not mine:
            continue
        needed = [f.runs_needed for f in mine if f.runs_needed is not None]
        hangs = sum(v.startswith("hang") for f in mine for v in f.violations)
        rows.append((kind, len(mine), max(needed) if needed else "-", sum(len(f.violations) for f in mine), hangs))
    width = max([len(r[0]) for r in rows] + [10])
    lines = [f"{'fault kind':{width}s}  injections  runs needed  invariant violations  hangs"]
    lines += [f"{k:{width}s}  {n:10d}  {str(r):>11s}  {v:20d}  {h:5d}" for k, n, r, v, h in rows]
    allv = [v for f in faults for v in f.violations] + other
    count = Counter(v.split(":", 1)[0] for v in allv)
    lines.append(f"{'all':{width}s}  {sum(r[1] for r in rows):10d}  "
                 f"{str(max([r[2] for r in rows if r[2] != '-'] or ['-'])):>11s}  {len(allv):20d}  "
                 f"{count['hang']:5d}")
    lines.append(f"kinds: {len(rows)}; lost measurements: {count['lost measurement']}; records from partial "
                 f"outputs: {count['records']}; layouts unlike the clean run: {count['layout']}; leftovers: "
                 f"{count['leftover']}; tracebacks: {count['traceback']}; faults without their line: "
                 f"{count['line']}; not finished: {count['not finished']}; hangs: {count['hang']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, help="the seed of the faults' draws (required unless --replay)")
    p.add_argument("--replay", type=Path, metavar="OUTPUT",
                   help="strike again the faults an earlier run of this script printed (its output, saved)")
    p.add_argument("--round", type=int, action="append", metavar="N",
                   help="with --replay: only this round (again for more); a round starts on a fresh copy")
    p.add_argument("--faults", type=int, default=60, help="faults to inject (default 60)")
    p.add_argument("--work", type=Path, help="folder for the scratch trees (default /var/tmp/benchcast-faults-SEED)")
    p.add_argument("--kinds", help=f"comma-separated fault kinds (default all: {','.join(KINDS)})")
    p.add_argument("--keep", action="store_true", help="keep the scratch trees (their results in results.kept/)")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("faults: needs root (its study provisions zram, loop, tmpfs and FUSE devices)")
    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise SystemExit(f"faults: unknown kind(s) {', '.join(unknown)} (known: {', '.join(KINDS)})")
    script, what = None, f"seed {args.seed}"
    if args.replay:
        try:
            script = read_script(args.replay.read_text(), set(args.round) if args.round else None)
        except OSError as exc:
            raise SystemExit(f"faults: --replay: {exc.filename}: {exc.strerror}")
        if not script:
            raise SystemExit(f"faults: --replay: {args.replay}: no fault line"
                             f"{' of round ' + ', '.join(map(str, args.round)) if args.round else ''}")
        what = f"replay of {args.replay} (round {', '.join(map(str, script))})"
    elif args.seed is None:
        raise SystemExit("faults: give --seed S (or --replay OUTPUT)")
    elif args.round:
        raise SystemExit("faults: --round goes with --replay")
    try:  # the bindings every scratch tree copies (built once here, as the tests' fixture does)
        build_jar(JAR)
    except BenchcastError as exc:
        raise SystemExit(f"faults: {exc}")
    work = args.work or Path(f"/var/tmp/benchcast-faults-{'replay' if script else args.seed}")
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    wanted = sum(map(len, script.values())) if script else args.faults
    c = Campaign(args.seed or 0, wanted, work, kinds, keep=args.keep, say=lambda s: print(s, flush=True),
                 script=script)
    c.go()
    print(f"\n{what}: {c.injected} faults over {c.rounds} round(s) in {(time.monotonic() - t0) / 60:.1f} min "
          f"(a clean run: {c.clean_s:.0f} s)")
    for v in c.other:
        print(f"  {v}")
    print(table(c.faults, c.other))
    return 1 if any(f.violations for f in c.faults) or c.other else 0


if __name__ == "__main__":
    sys.exit(main())
