"""throttled: a block-backed device (zram or loop, spec under ``backing``) whose I/O is capped by a
cgroup: cgroup v1 ``blkio.throttle.{read,write}_{bps,iops}_device`` ("MAJ:MIN value") or cgroup v2
``io.max`` ("MAJ:MIN rbps=.. wbps=.. riops=.. wiops=.."). The benchmark must run inside the cgroup:
prefix its command with :func:`command_prefix` (or start it with :func:`run_in_cgroup`). Caps hold
for direct I/O; buffered writes are written back by kernel threads outside the cgroup (v1).
Teardown removes the cgroup (moving out any process a killed run left in it), then the backing
device."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from .. import BenchcastError
from . import base, blockinfo, cgroups, loop, mounts, specs, state_record, zram

LIMITS = ("read_bps", "write_bps", "read_iops", "write_iops")
V1_ROOT = Path("/sys/fs/cgroup/blkio")
V2_NAMES = {"read_bps": "rbps", "write_bps": "wbps", "read_iops": "riops", "write_iops": "wiops"}
#: The kinds a throttled device can wrap.
BACKING = {"zram": zram, "loop": loop}


def backing_module(device_id: str, spec: dict):
    b = spec.get("backing")
    if not isinstance(b, dict) or b.get("kind") not in ("zram", "loop"):
        raise BenchcastError(f"device {device_id}: backing: must be a zram or loop device spec (kind: zram|loop)")
    return BACKING[b["kind"]]


def limits(device_id: str, spec: dict) -> dict[str, int]:
    out = {}
    for key in LIMITS:
        if key in spec:
            if key.endswith("_iops"):
                v = spec[key]
                if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                    raise BenchcastError(f"device {device_id}: {key}: must be a positive integer, not {v!r}")
                out[key] = v
            else:
                out[key] = specs.size_of(device_id, spec, key)
    if not out:
        raise BenchcastError(f"device {device_id}: kind throttled needs at least one of {', '.join(LIMITS)}")
    return out


def check(device_id: str, spec: dict) -> None:
    specs.check_wrapper(device_id, spec, backing_module)
    limits(device_id, spec)


def cgroup_version() -> int | None:
    if (V1_ROOT / "blkio.throttle.write_bps_device").exists():
        return 1
    return 2 if cgroups.cgroup_v2_root("io") else None


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "throttled")
    backing_module(device_id, spec).available(f"{device_id}.backing", spec["backing"])
    if cgroup_version() is None:
        raise base.UnavailableError(
            f"device {device_id}: kind throttled: no cgroup v1 blkio throttle files under {V1_ROOT} "
            f"and no cgroup v2 with the io controller"
        )


def limit_lines(version: int, mm: str, lim: dict[str, int]) -> dict[str, str]:
    """The cgroup files to write and their contents."""
    if version == 1:
        return {f"blkio.throttle.{k}_device": f"{mm} {v}" for k, v in lim.items()}
    return {"io.max": f"{mm} " + " ".join(f"{V2_NAMES[k]}={v}" for k, v in lim.items())}


def cgroup_name(rec: state_record.Recorder) -> str:
    h = hashlib.sha1(str(rec.path.resolve()).encode()).hexdigest()[:8]
    return f"benchcast-{rec.device}-{h}"


def provision(rec: state_record.Recorder, spec: dict) -> None:
    available(rec.device, spec)
    lim = limits(rec.device, spec)
    mod = backing_module(rec.device, spec)
    child = rec.child("backing", {"device": rec.device, "kind": spec["backing"]["kind"], "created": {}})
    child.save()
    mod.provision(child, spec["backing"])
    dev = child.state["block_device"]
    version = cgroup_version()
    if version == 1:
        cg = V1_ROOT / cgroup_name(rec)
    else:
        root = cgroups.cgroup_v2_root("io")
        ctl = root / "cgroup.subtree_control"
        if "io" not in ctl.read_text().split():
            ctl.write_text("+io")
        cg = root / cgroup_name(rec)
    if cg.exists():
        raise rec.error("cgroup", f"{cg} already exists (left by an earlier run? run teardown-all)")
    rec.set("cgroup", str(cg))
    cg.mkdir()
    mm = blockinfo.majmin(dev)
    for fname, line in limit_lines(version, mm, lim).items():
        try:
            (cg / fname).write_text(line)
        except OSError as exc:
            raise rec.error("cgroup", f"writing {line!r} to {cg / fname}: {exc.strerror}") from None
    rec.update(target=child.state["target"], mount_options=child.state.get("mount_options", ""),
               block_device=dev, cgroup_version=version, limits=lim)


def command_prefix(state: dict) -> list[str]:
    """A command prefix that puts the process into the device's cgroup, then execs the rest."""
    cg = state.get("created", {}).get("cgroup")
    if not cg:
        raise BenchcastError(f"device {state.get('device')}: cgroup: not provisioned (no cgroup in state)")
    procs = os.path.join(cg, "cgroup.procs")
    return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "benchcast-cgroup"]


def run_in_cgroup(state: dict, cmd, **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd`` with its process placed in the device's cgroup before it starts."""
    procs = os.path.join(state["created"]["cgroup"], "cgroup.procs")

    def enter():
        with open(procs, "w") as fh:
            fh.write(str(os.getpid()))

    return subprocess.run(list(map(str, cmd)), preexec_fn=enter, **kwargs)


def enter(state: dict) -> Path:
    """Move this process (and so the children it starts) into the device's cgroup; return the
    cgroup it was in, to go back to with :func:`benchcast.devices.cgroups.join_cgroup`."""
    cg = state.get("created", {}).get("cgroup")
    if not cg:
        raise BenchcastError(f"device {state.get('device')}: cgroup: not provisioned (no cgroup in state)")
    version = state.get("cgroup_version", cgroup_version() or 1)
    before = cgroups.own_cgroup("blkio" if version == 1 else "io", version)
    cgroups.join_cgroup(cg)
    return before


def charged(state: dict) -> dict[str, int] | None:
    """The requests to the device that the cap has charged to the tier's cgroup so far
    (charged_reads, charged_writes; :func:`.blockinfo.cgroup_io`: cgroup v1
    ``blkio.throttle.io_serviced``, v2 ``io.stat`` rios/wios). Only bios issued by processes in the
    cgroup count; the file system's journal thread and background writeback are not, so the
    device's own counters can be larger. None when the cgroup or its statistics are gone."""
    io = own_io(state)
    return None if io is None else {"charged_reads": io["reads"], "charged_writes": io["writes"]}


def own_io(state: dict) -> dict[str, int] | None:
    """What the tier's cgroup (the benchmark's processes, which run in it) sent to the device so far:
    :func:`.blockinfo.cgroup_io`; None when there is no cgroup or it is gone."""
    cg = state.get("created", {}).get("cgroup")
    dev = state.get("block_device")
    if not cg or not dev:
        return None
    try:
        mm = blockinfo.majmin(dev)
    except OSError:
        return None
    return blockinfo.cgroup_io(cg, mm)


def teardown(rec: state_record.Recorder) -> list[str]:
    """Remove the cgroup (moving out any process left in it), then tear the backing device down,
    then whatever the record itself mounted."""
    errors: list[str] = []
    if "cgroup" in rec.created:
        if cgroups.cgroup_remove(rec.created["cgroup"], errors):
            rec.drop("cgroup")
    sub = rec.state.get("backing")
    if isinstance(sub, dict) and sub.get("created"):
        errors += BACKING[sub.get("kind", "zram")].teardown(state_record.Recorder(sub, rec.path, parent=rec))
    return errors + mounts.teardown_mounted(rec)


def alive(state: dict) -> bool:
    sub = state.get("backing") or {}
    cg = state.get("created", {}).get("cgroup")
    return bool(cg) and os.path.isdir(cg) and BACKING[sub.get("kind", "zram")].alive(sub)


def model(state: dict) -> str:
    sub = state.get("backing") or {}
    lim = ", ".join(f"{k}={v}" for k, v in (state.get("limits") or {}).items())
    return f"{BACKING[sub.get('kind', 'zram')].model(sub)} throttled ({lim})"
