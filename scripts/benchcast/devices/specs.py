"""A device spec's checks and settings: its keys against the schema's definition of its kind,
sizes, filesystem type, mkfs and mount options, and the schema's defaults for what it leaves out."""

from __future__ import annotations

from .. import BenchcastError
from ..core.units import parse_size


FSTYPES = ("ext4", "xfs")


def check_keys(device_id: str, spec: dict) -> None:
    """Check a spec's keys against the schema's device definition for its kind (config/schema.yaml)."""
    from ..config import device_keys  # yaml + jsonschema: only when a spec is checked

    if not isinstance(spec, dict):
        raise BenchcastError(f"device {device_id}: spec must be a mapping, not {type(spec).__name__}")
    allowed, required, booleans = device_keys(spec.get("kind"))
    for key in spec:
        if key not in allowed:
            raise BenchcastError(
                f"device {device_id}: unknown key {key!r} for kind {spec.get('kind')} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
    for key in required:
        if key not in spec or spec[key] in (None, ""):
            raise BenchcastError(f"device {device_id}: kind {spec.get('kind')} needs key {key!r}")
    for key in sorted(booleans):
        if key in spec and not isinstance(spec[key], bool):
            raise BenchcastError(f"device {device_id}: {key}: must be true or false, not {spec[key]!r}")
    ra = spec.get("read_ahead_kb", 0)
    if isinstance(ra, bool) or not isinstance(ra, int) or ra < 0 or ra % 4:
        raise BenchcastError(f"device {device_id}: read_ahead_kb: must be a whole number of KiB >= 0 "
                             f"and a multiple of 4 (a page), not {ra!r}")


def check_wrapper(device_id: str, spec: dict, backing_module) -> None:
    """The checks of a kind that wraps another device (``backing``): its own keys, then the backing
    spec's, named ``<id>.backing``."""
    check_keys(device_id, spec)
    if "read_ahead_kb" in (spec.get("backing") or {}):
        raise BenchcastError(f"device {device_id}.backing: read_ahead_kb: set it on device {device_id} "
                             "itself (the window of the file system the benchmarks use)")
    backing_module(device_id, spec).check(f"{device_id}.backing", spec["backing"])


def setting(spec: dict, kind: str, key: str):
    """A device setting: the spec's, or the schema's default for that kind (a spec from a validated
    config has it already; one from the command line or a test may not)."""
    if key in spec:
        return spec[key]
    from ..config import device_default  # yaml + jsonschema: only when a spec lacks the key

    return device_default(kind, key)


def size_of(device_id: str, spec: dict, key: str, default=None, minimum: int = 1) -> int:
    if key not in spec:
        if default is None:
            raise BenchcastError(f"device {device_id}: kind {spec.get('kind')} needs key {key!r}")
        return parse_size(default)
    n = parse_size(spec[key], what=f"device {device_id}: {key}")
    if n < minimum:
        raise BenchcastError(f"device {device_id}: {key}: {spec[key]!r} is smaller than {minimum} bytes")
    return n


def fstype_of(device_id: str, spec: dict, default: str = "ext4") -> str:
    fs = spec.get("fstype", default)
    if fs not in FSTYPES:
        raise BenchcastError(f"device {device_id}: fstype: {fs!r} is not one of {', '.join(FSTYPES)}")
    return fs


def list_of_str(device_id: str, spec: dict, key: str) -> list[str]:
    val = spec.get(key, [])
    if isinstance(val, str):
        return val.split()
    if not isinstance(val, list) or not all(isinstance(v, (str, int)) for v in val):
        raise BenchcastError(f"device {device_id}: {key}: must be a list of strings")
    return [str(v) for v in val]


def check_filesystem(device_id: str, spec: dict, default: str = "ext4") -> None:
    """The keys of a kind that makes a file system and mounts it: ``fstype`` (``default`` when
    unset), ``mkfs_options``, ``mount_options``."""
    fstype_of(device_id, spec, default=default)
    list_of_str(device_id, spec, "mkfs_options")
    mount_opts_of(device_id, spec)


def mount_opts_of(device_id: str, spec: dict) -> list[str]:
    val = spec.get("mount_options", [])
    if isinstance(val, str):
        return [o for o in val.split(",") if o]
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        raise BenchcastError(f"device {device_id}: mount_options: must be a string or list of strings")
    return list(val)
