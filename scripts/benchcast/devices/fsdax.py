"""fsdax: a persistent-memory namespace in filesystem-DAX mode.

``ndctl create-namespace --mode=fsdax --region=R --size=S`` (its JSON output names the namespace,
its uuid and block device pmemN), a filesystem (xfs with ``-m reflink=0`` by default, or ext4),
``mount -o dax``; fio uses ioengine libpmem there. Teardown unmounts and destroys (``ndctl
destroy-namespace --force``) only the namespace this workflow created, and only while it still has
the uuid recorded at creation.
"""

from __future__ import annotations

import shutil

from .. import BenchcastError
from . import base, mounts, specs, state_record



def check(device_id: str, spec: dict) -> None:
    specs.check_keys(device_id, spec)
    specs.size_of(device_id, spec, "size", minimum=16 << 20)
    specs.check_filesystem(device_id, spec, default="xfs")
    region_name(device_id, spec)


def region_name(device_id: str, spec: dict) -> str:
    r = spec["region"]
    if isinstance(r, int) and not isinstance(r, bool):
        return f"region{r}"
    if isinstance(r, str) and r.startswith("region") and r[6:].isdigit():
        return r
    if isinstance(r, str) and r.isdigit():
        return f"region{r}"
    raise BenchcastError(f"device {device_id}: region: {r!r} is not a region (e.g. region0 or 0)")


# -- ndctl JSON shapes. ndctl prints a one-element array as the bare object, several top-level
# -- object types as {"regions": [...], ...}, and nothing at all when there is nothing to list.


def as_list(obj, key: str) -> list[dict]:
    if obj is None or obj == "":
        return []
    if isinstance(obj, list):
        return obj
    if isinstance(obj, dict):
        if key in obj:
            return as_list(obj[key], key)
        if "buses" in obj and key == "regions":  # ndctl list -B -R: regions nested under buses
            return [r for b in as_list(obj["buses"], "buses") for r in as_list(b.get("regions"), key)]
        return [obj]
    raise BenchcastError(f"ndctl: unexpected JSON shape ({type(obj).__name__})")


def parse_regions(obj) -> list[dict]:
    """Regions from ``ndctl list -R -N`` output, each with a ``namespaces`` list."""
    regions = as_list(obj, "regions")
    for r in regions:
        if "dev" not in r:
            raise BenchcastError("ndctl list: a region without 'dev'")
        r["namespaces"] = as_list(r.get("namespaces"), "namespaces")
    return regions


def parse_namespace(obj) -> dict:
    """The namespace ``ndctl create-namespace`` printed: dev, mode, uuid, blockdev, size."""
    ns = as_list(obj, "namespaces")
    if len(ns) != 1 or not isinstance(ns[0], dict):
        raise BenchcastError("ndctl create-namespace: expected one namespace in its JSON output")
    ns = ns[0]
    for key in ("dev", "mode", "blockdev"):
        if key not in ns:
            raise BenchcastError(f"ndctl create-namespace: output lacks {key!r}")
    if ns["mode"] != "fsdax":
        raise BenchcastError(f"ndctl create-namespace: made mode {ns['mode']!r}, not fsdax")
    return ns


def list_command() -> list[str]:
    return ["ndctl", "list", "-R", "-N"]


def create_command(region: str, size: int) -> list[str]:
    return ["ndctl", "create-namespace", "--mode=fsdax", f"--region={region}", f"--size={size}"]


def destroy_command(namespace: str) -> list[str]:
    return ["ndctl", "destroy-namespace", "--force", namespace]


def mkfs_options(fstype: str, spec: dict, device_id: str) -> list[str]:
    extra = specs.list_of_str(device_id, spec, "mkfs_options")
    if fstype == "xfs" and not any(o.startswith("reflink") or o == "-m" for o in extra):
        extra = ["-m", "reflink=0", *extra]
    return extra


def regions(device_id: str) -> list[dict]:
    if shutil.which("ndctl") is None:
        raise base.UnavailableError(f"device {device_id}: kind fsdax: ndctl is not installed")
    return parse_regions(base.run_json(list_command(), f"device {device_id}: ndctl list"))


def find_region(device_id: str, spec: dict) -> dict:
    name = region_name(device_id, spec)
    regs = regions(device_id)
    if not regs:
        raise base.UnavailableError(
            f"device {device_id}: region: this machine has no persistent-memory regions "
            f"(ndctl list -R shows none); mark the device optional: true to skip it here"
        )
    for r in regs:
        if r["dev"] == name:
            if r.get("type", "pmem") != "pmem":
                raise base.UnavailableError(f"device {device_id}: region: {name} is of type {r.get('type')}, not pmem")
            return r
    raise base.UnavailableError(
        f"device {device_id}: region: no region {name} (have: {', '.join(r['dev'] for r in regs)})"
    )


def available(device_id: str, spec: dict) -> None:
    base.ensure_root(device_id, "fsdax")
    region = find_region(device_id, spec)
    size = specs.size_of(device_id, spec, "size")
    avail = region.get("available_size")
    if isinstance(avail, int) and avail < size:
        raise base.UnavailableError(
            f"device {device_id}: size: {size} bytes wanted but {region['dev']} has {avail} available"
        )


def provision(rec: state_record.Recorder, spec: dict) -> None:
    available(rec.device, spec)
    region = region_name(rec.device, spec)
    size = specs.size_of(rec.device, spec, "size")
    rec.set("namespace_pending", region)
    ns = parse_namespace(base.run_json(create_command(region, size), f"device {rec.device}: ndctl create-namespace"))
    rec.created.pop("namespace_pending", None)
    rec.state["namespace_uuid"] = ns.get("uuid")
    rec.set("namespace", ns["dev"])
    dev = f"/dev/{ns['blockdev']}"
    rec.set("pmem", dev)
    rec.update(block_device=dev, namespace_info=ns)
    fs = specs.fstype_of(rec.device, spec, default="xfs")
    mounts.mkfs(rec, dev, fs, mkfs_options(fs, spec, rec.device))
    mp = mounts.prepare_mountpoint(rec, mounts.default_mountpoint(rec, spec))
    opts = specs.mount_opts_of(rec.device, spec)
    if "dax" not in opts and not any(o.startswith("dax=") for o in opts):
        opts = ["dax", *opts]
    mounts.do_mount(rec, dev, mp, fs, opts)


def destroy_namespace(rec: state_record.Recorder, errors: list) -> bool:
    """Destroy the namespace the record names, only while it still has the recorded uuid."""
    name = rec.created["namespace"]
    try:
        current = None
        for r in regions(rec.device):
            for ns in r["namespaces"]:
                if ns.get("dev") == name:
                    current = ns
    except BenchcastError as exc:
        errors.append(str(exc))
        return False
    if current is None:
        return True  # already gone
    want = rec.state.get("namespace_uuid")
    if want and current.get("uuid") != want:
        errors.append(f"{name} now has uuid {current.get('uuid')}, not {want} as created: left alone")
        return False
    try:
        base.run(destroy_command(name), f"device {rec.device}: ndctl destroy-namespace")
    except BenchcastError as exc:
        errors.append(str(exc))
        return False
    return True


def _undo(rec: state_record.Recorder, errors: list) -> None:
    """Destroy the namespace this record created."""
    created = rec.created
    if "namespace" in created:
        if destroy_namespace(rec, errors):
            rec.drop("namespace")
            rec.drop("pmem")


def teardown(rec: state_record.Recorder) -> list[str]:
    if "namespace_pending" in rec.created:
        rec.note("killed during ndctl create-namespace: a namespace may exist that this record does "
                 "not name; it is left alone (check ndctl list -N)")
        rec.drop("namespace_pending")
    return mounts.teardown_mounted(rec, _undo)


def alive(state: dict) -> bool:
    c = state.get("created", {})
    e = mounts.mount_entry(c["mount"]) if "mount" in c else None
    return e is not None and e["source"] == c.get("pmem")


def model(state: dict) -> str:
    ns = state.get("namespace_info", {})
    return f"pmem fsdax {ns.get('dev', '?')} ({ns.get('blockdev', '?')})"
