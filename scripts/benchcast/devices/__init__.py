"""Devices the workflow measures: provision, use, tear down, describe.

One module per kind (tmpfs, dir, zram, loop, blockdev, fsdax, throttled, delayed), each with ``check``
(spec keys), ``available`` (can this machine have it), ``provision(recorder, spec)``,
``teardown(recorder)``, ``alive(state)`` and ``model(state)``; a kind that runs a server of its own
(delayed: its FUSE server) also ``servers(state)``, the server's process ids. This module is the interface the
workflow's rules call:

    state = provision("zr", {"kind": "zram", "disksize": "256M"}, "results/devices/zr.json")
    target(state)            # directory fio writes into
    command_prefix(state)    # e.g. puts fio into a throttled device's cgroup
    teardown("results/devices/zr.json")
    teardown_all("results/devices")   # whatever an earlier, killed run left

Every step is written to the device's state record (see :mod:`.base`) before the next one, and only
what a state record names is ever torn down. Errors are :class:`benchcast.BenchcastError` with a
one-line message naming the device id and the spec key; a failed or interrupted provisioning
undoes what it did before raising.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path

from .. import BenchcastError
from ..core import host
from . import base, benchcg, blockdev, blockinfo, cgroups, delayed, fsdax, loop, memlimit, state_record, swap
from . import dir as dir_kind
from . import throttled, tmpfs, zram
from .base import UnavailableError
from .state_record import read_state

KINDS = {
    "tmpfs": tmpfs,
    "dir": dir_kind,
    "zram": zram,
    "loop": loop,
    "blockdev": blockdev,
    "fsdax": fsdax,
    "throttled": throttled,
    "delayed": delayed,
}
#: Kinds whose data comes from import sources; never provisioned.
PASSIVE_KINDS = {"imported"}

__all__ = [
    "KINDS", "UnavailableError", "check_spec", "check_available", "usable_devices", "provision",
    "ensure", "teardown", "teardown_all", "target", "describe", "provenance", "command_prefix",
    "run_in_cgroup", "on_device", "session", "signals_raise", "read_state", "io_counters",
]


def check_spec(device_id: str, spec: dict):
    """Check a device spec's keys and values; return the kind's module."""
    if not isinstance(spec, dict):
        raise BenchcastError(f"device {device_id}: spec must be a mapping")
    kind = spec.get("kind")
    if kind in PASSIVE_KINDS:
        raise BenchcastError(f"device {device_id}: kind: {kind} devices are not provisioned")
    if kind not in KINDS:
        raise BenchcastError(f"device {device_id}: kind: {kind!r} is not one of {', '.join(KINDS)}")
    mod = KINDS[kind]
    mod.check(device_id, spec)
    return mod


def check_available(device_id: str, spec: dict) -> None:
    """Raise :class:`UnavailableError` when this machine cannot have the device (no side effects)."""
    check_spec(device_id, spec).available(device_id, spec)


def usable_devices(devices: dict) -> dict[str, str | None]:
    """For a study's devices: {id: None} for those to measure, {id: reason} for optional ones that
    are skipped here. A non-optional device that cannot be had raises, so a study fails at start.
    Imported devices are left out.

    Planning probes nothing that needs root: a kind that needs root, planned by an ordinary user
    (a dry run, a cluster's login node), is planned when required and skipped when optional; the
    measuring job checks again where it runs (:func:`needs_root` says which). What planning can
    already refuse is refused (a blockdev that is not disposable, is mounted, is swap or holds the
    root file system)."""
    out = {}
    for dev_id, spec in devices.items():
        if (spec or {}).get("kind") in PASSIVE_KINDS:
            continue
        mod = check_spec(dev_id, spec)
        if mod is blockdev:
            why = blockdev.plan_refusal(dev_id, spec)
            if why:
                raise BenchcastError(f"device {dev_id}: path: {why}")
        try:
            mod.available(dev_id, spec)
            out[dev_id] = None
        except UnavailableError as exc:
            if spec.get("optional"):
                out[dev_id] = str(exc)
            elif isinstance(exc, base.RootRequiredError):
                out[dev_id] = None
            else:
                raise
    return out


def needs_root(device_id: str, spec: dict) -> str | None:
    """Why provisioning the device here needs root that this process does not have, or None."""
    try:
        check_spec(device_id, spec).available(device_id, spec)
    except base.RootRequiredError as exc:
        return str(exc)
    except UnavailableError:
        return None
    return None


@contextlib.contextmanager
def signals_raise():
    """Turn SIGTERM/SIGHUP into SystemExit (SIGINT is KeyboardInterrupt already) so that ``finally``
    and ``except BaseException`` blocks (teardown) run when the process is told to stop."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    # SIGINT too: a process started from a background shell inherits SIGINT as ignored, and Python
    # then installs no KeyboardInterrupt handler of its own
    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _live_created(state: dict) -> bool:
    return bool(state.get("created")) or bool((state.get("backing") or {}).get("created"))


def provision(device_id: str, spec: dict, state_path) -> dict:
    """Provision the device; write and return its state record.

    A device marked ``optional: true`` that this machine cannot have gets ``status: skipped`` (and
    a ``reason``); otherwise that is an error. On any failure or interruption, whatever was created
    is torn down before the error is raised.
    """
    mod = check_spec(device_id, spec)
    state_path = Path(state_path)
    if state_path.exists():
        old = read_state(state_path)
        if _live_created(old):
            raise BenchcastError(
                f"device {device_id}: state: {state_path} still records created resources "
                f"({', '.join(old['created']) or 'backing'}); tear it down first (or use ensure)"
            )
    state = {"device": device_id, "kind": spec["kind"], "spec": spec, "status": "provisioning",
             "created": {}, "notes": [], "pid": os.getpid()}
    rec = state_record.Recorder(state, state_path)
    try:
        mod.available(device_id, spec)
    except UnavailableError as exc:
        if spec.get("optional"):
            rec.update(status="skipped", reason=str(exc))
            return state
        raise
    rec.save()
    with signals_raise():
        try:
            mod.provision(rec, spec)
            if "read_ahead_kb" in spec:  # the window of the file system benchmarks use, ours to set
                blockinfo.set_read_ahead_kb(state["target"], spec["read_ahead_kb"], f"device {device_id}")
        except BaseException as exc:
            rec.update(status="failed", error=str(exc) or type(exc).__name__)
            errors = mod.teardown(rec)
            if not errors and not _live_created(state):
                rec.update(status="torn_down")
            if isinstance(exc, BenchcastError):
                raise
            if isinstance(exc, OSError):
                raise BenchcastError(f"device {device_id}: {spec['kind']}: {exc}") from exc
            raise
        rec.update(status="ready")
    return state


def ensure(device_id: str, spec: dict, state_path) -> dict:
    """Idempotent provisioning: return the state when it says ready and the device is really there;
    otherwise tear down any remains the record names and provision afresh."""
    state_path = Path(state_path)
    if state_path.exists():
        state = read_state(state_path)
        if state.get("spec") == spec:
            if state.get("status") == "ready" and KINDS[state["kind"]].alive(state):
                return state
            if state.get("status") == "skipped":
                return state
        if _live_created(state):
            teardown(state_path)
    return provision(device_id, spec, state_path)


def teardown(state_path) -> dict:
    """Undo everything the state record says this workflow created. Idempotent.

    Raises BenchcastError (naming the device) when something could not be undone; the record then
    keeps listing it, so teardown (or teardown_all) can be retried.
    """
    state = read_state(state_path)
    if state["kind"] in PASSIVE_KINDS or state["kind"] not in KINDS:
        raise BenchcastError(f"{state_path}: kind {state['kind']!r} has no teardown")
    if state.get("status") in ("skipped",) and not _live_created(state):
        return state
    rec = state_record.Recorder(state, state_path, lenient=True)
    rec.update(status="tearing_down")
    with signals_raise():
        errors: list[str] = []
        memlimit.remove(rec, errors)  # a benchmark's memory cgroup, when a killed job left it
        benchcg.remove(rec, errors)  # and its CPU cgroup
        swap.remove(rec, errors)  # an out-of-core job's swap file: off before the device goes
        if not errors:
            errors += KINDS[state["kind"]].teardown(rec)
    if errors or _live_created(state):
        rec.update(status="teardown_failed", error="; ".join(errors))
        raise BenchcastError(
            f"device {state['device']}: teardown: {errors[0] if errors else 'resources remain'}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        )
    rec.update(status="torn_down")
    if rec.unsaved:  # gone all the same; a later teardown finds nothing left of it
        print(f"benchcast: device {state['device']}: torn down; its state record {state_path} could not be "
              f"written ({rec.unsaved.strerror}) and still lists what is gone", file=sys.stderr)
    return state


def teardown_all(state_dir) -> dict[str, str]:
    """Tear down every device whose state record in ``state_dir`` (``*.json``) still lists created
    resources: the cleanup after a killed run. Returns {state file: "ok" | error}; raises
    BenchcastError after trying them all if any failed."""
    results = {}
    for path in sorted(Path(state_dir).glob("*.json")):
        try:
            state = read_state(path)
        except BenchcastError as exc:
            results[str(path)] = f"skipped: {exc}"
            continue
        if not _live_created(state) and state.get("status") in ("torn_down", "skipped"):
            continue
        try:
            teardown(path)
            results[str(path)] = "ok"
        except BenchcastError as exc:
            results[str(path)] = str(exc)
    failed = [v for v in results.values() if v not in ("ok",) and not v.startswith("skipped")]
    if failed:
        raise BenchcastError(f"teardown-all {state_dir}: {len(failed)} device(s) not cleaned: {failed[0]}")
    return results


def release(state_paths) -> dict[str, str]:
    """What a cluster job does on its way out, also when Slurm stops it (scancel or its time limit:
    SIGTERM): tear down the devices it used whose state records still list created resources, under
    the node's benchmark lock (after a benchmark that is tearing down on the same signal), so that the
    node is left as the job found it. The next job of a device provisions it again (:func:`ensure`).
    Returns {state file: "ok" | error} for the devices it tore down; never raises."""
    results = {}
    with benchmark_lock():
        for path in map(str, state_paths):
            try:
                if not Path(path).exists() or not _live_created(read_state(path)):
                    continue
                teardown(path)
                results[path] = "ok"
            except BenchcastError as exc:
                results[path] = str(exc)
    return results


def _state(state_or_path) -> dict:
    if isinstance(state_or_path, dict):
        return state_or_path
    return read_state(state_or_path)


def target(state_or_path) -> str:
    """The directory the benchmark writes into (the mount point, or the dir kind's subdirectory)."""
    state = _state(state_or_path)
    if state.get("status") != "ready" or not state.get("target"):
        raise BenchcastError(
            f"device {state.get('device')}: state: not provisioned (status {state.get('status')})"
        )
    return state["target"]


def command_prefix(state_or_path) -> list[str]:
    """What to put before the benchmark's command: [] for most kinds, a cgroup entry for throttled."""
    state = _state(state_or_path)
    if state.get("kind") == "throttled":
        return throttled.command_prefix(state)
    return []


def run_in_cgroup(state_or_path, cmd, **kwargs):
    """subprocess.run ``cmd`` inside the device's cgroup when it has one, plainly otherwise."""
    import subprocess

    state = _state(state_or_path)
    if state.get("kind") == "throttled":
        return throttled.run_in_cgroup(state, cmd, **kwargs)
    return subprocess.run(list(map(str, cmd)), **kwargs)


def io_counters(state_or_path) -> dict[str, int] | None:
    """What has reached the device so far, as counters (reads, read_bytes, writes, write_bytes,
    syncs): a block device's kernel counters (the backing one of a throttled device, the file
    system's device for a directory, shared with whatever else uses that disk), a delayed device's
    own request counts; None for a tmpfs, which has no device below it. A throttled device adds
    what its cap charged to its cgroup (charged_reads, charged_writes: :func:`throttled.charged`).
    Differences of two calls are the I/O of what ran between them."""
    state = _state(state_or_path)
    if state.get("kind") == "delayed":
        return delayed.counters(state)
    dev = blockinfo.device_of(state)
    counts = blockinfo.block_counters(dev) if dev else None
    if counts is not None and state.get("kind") == "throttled":
        counts.update(throttled.charged(state) or {})
    return counts


def _json_or_text(cmd) -> object:
    proc = base.run(cmd, cmd[0], check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return proc.stdout.strip()


def describe(state_or_path) -> dict:
    """Provenance of a provisioned device: lsblk -J, findmnt -J, ndctl JSON, zram and cgroup
    settings, the state's notes."""
    state = _state(state_or_path)
    out = {"device": state["device"], "kind": state["kind"], "status": state.get("status"),
           "model": KINDS[state["kind"]].model(state) if state["kind"] in KINDS else state["kind"],
           "notes": list(state.get("notes", []))}
    dev = state.get("block_device")
    if dev and os.path.exists(dev):
        out["lsblk"] = _json_or_text(["lsblk", "-J", "-o", "NAME,MAJ:MIN,SIZE,TYPE,MODEL,ROTA,FSTYPE,MOUNTPOINTS", dev])
    if state.get("target"):
        out["findmnt"] = _json_or_text(["findmnt", "-J", "-T", state["target"]])
    if ns := state.get("created", {}).get("namespace"):
        out["ndctl"] = _json_or_text(["ndctl", "list", "-N", "-n", ns])
    sub = state.get("backing") or state
    zr = sub.get("created", {}).get("zram")
    if zr:
        sysd = Path("/sys/block") / os.path.basename(zr)
        out["zram"] = {f: (sysd / f).read_text().strip() for f in ("comp_algorithm", "disksize", "mm_stat")
                       if (sysd / f).exists()}
    cg = state.get("created", {}).get("cgroup")
    if cg and os.path.isdir(cg):
        out["cgroup"] = {"path": cg, **{f.name: f.read_text().strip() for f in Path(cg).iterdir()
                                        if "throttle" in f.name and f.name.endswith("_device") or f.name == "io.max"}}
    if (ra := blockinfo.read_ahead_kb(state.get("target"))) is not None:
        out["read_ahead_kb"] = ra
    for key in ("direct_ok", "mount_options", "limits", "delays_ns", "reason", "comp_algorithm", "loop_direct_io"):
        if key in state:
            out[key] = state[key]
    out["host"] = {**host.machine(), "fio_version": host.fio_version()}
    return out


def provenance(state_or_path) -> dict:
    """Provenance columns for records measured on the device."""
    state = _state(state_or_path)
    ra = blockinfo.read_ahead_kb(state.get("target"))
    return {"device_model": KINDS[state["kind"]].model(state) if state["kind"] in KINDS else "",
            "mount_options": state.get("mount_options", ""), "read_ahead_kb": "" if ra is None else str(ra)}


LOCK = os.environ.get("BENCHCAST_LOCK", "/tmp/benchcast-benchmark.lock")


@contextlib.contextmanager
def benchmark_lock(path: str | None = None):
    """Hold the machine's benchmark lock: one measurement (or provisioning/teardown) at a time per
    node. Snakemake's ``benchmark_slots`` resource already serialises jobs on a workstation, but
    inside a cluster group job the jobs of one device start together; this lock (flock on a file in
    the node's /tmp) keeps them from overlapping there too."""
    import fcntl

    with open(path or LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def on_device(device_id: str, spec: dict, state_path, enter_cgroup: bool = False,
              memory_limit: int | None = None, swap_file: tuple[int, int] | None = None,
              enter_memory: bool = True, shield: dict | None = None):
    """What one benchmark job does around its work: make sure the device is provisioned (it may have
    been torn down since, when benchmarks are added later) and yield its state; with
    ``enter_cgroup``, this process and the children it starts run inside a throttled device's cgroup;
    with ``memory_limit`` (bytes), inside a fresh memory cgroup of that limit too (recorded in the
    device's state as ``created.memcg``, removed on the way out; with ``enter_memory=False`` only
    made, for the job to start its programs in, so that the limit holds them and not the job); with
    ``swap_file`` (size in bytes, priority), a swap file on the device is on while the job runs
    (:mod:`.swap`, ``created.swapfile``). Always, this process and its children run in the benchmark's own CPU
    cgroup (:mod:`.benchcg`, ``created.cpucg``: the interference records tell its CPU time from
    the machine's), and so does the device's own server while the job runs (a delayed device's
    FUSE server); ``shield`` (``cpu_shares``, ``nice``, ``ionice``, each None for as is) gives
    them a CPU weight and priorities (:func:`apply_shield`).

    If the body fails or the job is interrupted (SIGTERM/SIGINT/SIGHUP), the device is torn down
    before the error is raised, so nothing stays mounted; the next job provisions it again.
    """
    with signals_raise(), benchmark_lock():
        state = ensure(device_id, spec, state_path)
        if state.get("status") != "ready":
            raise BenchcastError(f"device {device_id}: not available here: {state.get('reason')}")
        rec = state_record.Recorder(state, state_path)
        entered: list[Path] = []  # the cgroups this process was in, innermost last
        adopted: list = []  # the device's own server processes in the benchmark's cgroup

        def leave_all():
            benchcg.give_back(adopted)
            while entered:
                cgroups.join_cgroup(entered.pop())

        def remove_own():  # the job's memory cgroup and swap file, or those a killed job left
            errors: list[str] = []
            memlimit.remove(rec, errors)
            benchcg.remove(rec, errors)
            swap.remove(rec, errors)
            if errors:
                raise BenchcastError(f"device {device_id}: {errors[0]}")

        try:
            remove_own()
            if swap_file:
                swap.create(rec, state["target"], *swap_file)
            if enter_cgroup and state["kind"] == "throttled":
                entered.append(throttled.enter(state))
            shield = shield or {}
            made = benchcg.create(rec, shield.get("cpu_shares"))
            for cg in made:
                cgroups.join_cgroup(cg)
                entered.append(cg.parent)
            adopted += benchcg.adopt(made, getattr(KINDS[state["kind"]], "servers", lambda s: [])(state))
            apply_shield(device_id, shield)
            if memory_limit:
                cg = memlimit.create(rec, memory_limit)
                if enter_memory:
                    entered.append(memlimit.enter(cg))
            yield state
        except BaseException:
            leave_all()
            try:
                teardown(state_path)
            except BenchcastError as exc:  # keep the original error; say what is left
                print(f"benchcast: teardown after failure: {exc}", file=sys.stderr)
            raise
        leave_all()
        remove_own()


def apply_shield(device_id: str, shield: dict) -> None:
    """Give this process (and so the benchmark programs it starts) the ``nice`` value and the I/O
    priority ``ionice`` (``"CLASS"`` or ``"CLASS:LEVEL"``, class 1 realtime, 2 best-effort, 3 idle;
    util-linux ``ionice``) of the shield; None leaves each as it is. The job process ends with the
    job, so nothing is left to restore."""
    if shield.get("nice") is not None:
        os.setpriority(os.PRIO_PROCESS, 0, int(shield["nice"]))
    if shield.get("ionice"):
        cls, _, level = str(shield["ionice"]).partition(":")
        cmd = ["ionice", "-c", cls] + (["-n", level] if level else []) + ["-p", str(os.getpid())]
        base.run(cmd, f"device {device_id}: ionice {shield['ionice']}")


@contextlib.contextmanager
def session(device_id: str, spec: dict, state_path):
    """Provision, yield the state, and tear down on the way out - also when the body raises or the
    process gets SIGTERM/SIGINT/SIGHUP."""
    with signals_raise():
        state = provision(device_id, spec, state_path)
        try:
            yield state
        finally:
            if state.get("status") != "skipped":
                teardown(state_path)
