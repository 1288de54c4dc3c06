"""What every device kind shares: the state record, command running, spec checks, safety checks,
mounting and the generic teardown of whatever a state record says this workflow created.

The state record is one JSON file per device, rewritten atomically (write + rename) after every
step, so that a run killed at any point leaves a record of exactly what it created:

    {"device": "zr", "kind": "zram", "spec": {...}, "status": "ready",
     "created": {"zram": "/dev/zram1", "mount": "/.../mnt/zr", "mountdir": "/.../mnt/zr"},
     "target": "/.../mnt/zr", "mount_options": "rw,relatime", "notes": [...], "pid": 1234}

``status`` is ``provisioning`` (steps under way), ``ready``, ``skipped`` (optional device not
available here), ``failed`` (provisioning failed; whatever ``created`` still lists is left to tear
down), ``tearing_down`` or ``torn_down``. Teardown removes each resource from ``created`` as soon as
it is gone, so it can be re-run any number of times.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from .. import BenchcastError
from ..units import parse_size

FSTYPES = ("ext4", "xfs")


class UnavailableError(BenchcastError):
    """The device kind cannot be had on this machine (no pmem, no zram module, not root ...).

    A device marked ``optional: true`` is skipped on this error; any other error always fails.
    """


# --------------------------------------------------------------------------- command running


def run(cmd, what: str, check: bool = True, input: str | None = None, timeout: float = 120):
    """Run ``cmd`` (a list); on failure raise BenchcastError '<what>: <cmd0> failed: <stderr line>'.

    Module-level so tests can replace it to feed recorded tool output (ndctl without pmem).
    """
    try:
        proc = subprocess.run(
            [str(c) for c in cmd], capture_output=True, text=True, input=input, timeout=timeout
        )
    except FileNotFoundError:
        raise UnavailableError(f"{what}: command {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise BenchcastError(f"{what}: {' '.join(map(str, cmd))} timed out after {timeout}s") from None
    if check and proc.returncode != 0:
        raise BenchcastError(f"{what}: {' '.join(map(str, cmd))} failed: {one_line(proc)}")
    return proc


def one_line(proc) -> str:
    """A command's error output as one line (all its non-blank lines, shortened)."""
    text = proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}"
    line = " | ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    return line if len(line) <= 400 else line[:397] + "..."


def run_json(cmd, what: str):
    """Run a command printing JSON; '' (as ``ndctl list`` prints when there is nothing) -> None."""
    out = run(cmd, what).stdout.strip()
    if not out:
        return None
    try:
        return json.loads(out)
    except json.JSONDecodeError as exc:
        raise BenchcastError(f"{what}: {cmd[0]} printed no JSON ({exc.msg})") from None


def is_root() -> bool:
    return os.geteuid() == 0


# --------------------------------------------------------------------------- state records


def write_state(path, state: dict) -> None:
    """Write the state record atomically: a crash leaves either the old or the new record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state["updated"] = time.time()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump(state, fh, indent=1, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_state(path) -> dict:
    path = Path(path)
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        raise BenchcastError(f"{path}: no device state record") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BenchcastError(f"{path}: device state record is not JSON ({exc})") from None
    if not isinstance(state, dict) or "kind" not in state or "device" not in state:
        raise BenchcastError(f"{path}: not a device state record (no kind/device)")
    state.setdefault("created", {})
    return state


class Recorder:
    """Holds a state dict and its file; ``set`` records one created resource and saves at once.

    A nested recorder (``child``) keeps a sub-state (the device a throttled device wraps) inside the
    same file.
    """

    def __init__(self, state: dict, path, parent: "Recorder | None" = None):
        self.state = state
        self.path = Path(path)
        self.parent = parent
        state.setdefault("created", {})
        state.setdefault("notes", [])

    @property
    def device(self) -> str:
        return self.state["device"]

    @property
    def created(self) -> dict:
        return self.state["created"]

    def save(self) -> None:
        if self.parent is not None:
            self.parent.save()
        else:
            write_state(self.path, self.state)

    def set(self, key, value) -> None:
        self.created[key] = value
        self.save()

    def drop(self, key) -> None:
        self.created.pop(key, None)
        self.save()

    def update(self, **fields) -> None:
        self.state.update(fields)
        self.save()

    def note(self, text: str) -> None:
        self.state["notes"].append(text)
        self.save()

    def child(self, key: str, state: dict) -> "Recorder":
        self.state[key] = state
        return Recorder(state, self.path, parent=self)

    def error(self, key: str, msg: str) -> BenchcastError:
        return BenchcastError(f"device {self.device}: {key}: {msg}")


# --------------------------------------------------------------------------- spec checks


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


def check_wrapper(device_id: str, spec: dict, backing_module) -> None:
    """The checks of a kind that wraps another device (``backing``): its own keys, then the backing
    spec's, named ``<id>.backing``."""
    check_keys(device_id, spec)
    backing_module(device_id, spec).check(f"{device_id}.backing", spec["backing"])


def remove_tree(rec: "Recorder", key: str, errors: list) -> bool:
    """Remove the directory ``rec.created[key]`` names (if any) and drop it from the record; False
    (with the error noted) when it could not be removed."""
    d = rec.created.get(key)
    if d:
        shutil.rmtree(d, ignore_errors=True)
        if os.path.exists(d):
            errors.append(f"cannot remove {d}")
            return False
        rec.drop(key)
    return True


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


def mount_opts_of(device_id: str, spec: dict) -> list[str]:
    val = spec.get("mount_options", [])
    if isinstance(val, str):
        return [o for o in val.split(",") if o]
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        raise BenchcastError(f"device {device_id}: mount_options: must be a string or list of strings")
    return list(val)


# --------------------------------------------------------------------------- system facts


def findmnt(*args) -> list[dict]:
    """findmnt -J entries (flattened); [] when nothing matches."""
    proc = run(["findmnt", "-J", "-o", "TARGET,SOURCE,FSTYPE,OPTIONS", *args], "findmnt", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return []
    out = []

    def walk(items):
        for fs in items:
            out.append({k: fs.get(k) for k in ("target", "source", "fstype", "options")})
            walk(fs.get("children", []))

    walk(json.loads(proc.stdout).get("filesystems", []))
    return out


def mounts_of_source(dev: str) -> list[str]:
    """Mount points where block device ``dev`` (or anything named so) is mounted."""
    real = os.path.realpath(dev)
    targets = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            parts = line.split()
            sep = parts.index("-")
            source = parts[sep + 2]
            if source in (dev, real):
                targets.append(parts[4].replace("\\040", " "))
    return targets


def is_mountpoint(path) -> bool:
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as fh:
        return any(line.split()[4].replace("\\040", " ") == path for line in fh)


def mount_entry(path) -> dict | None:
    """The mountinfo entry mounted exactly at ``path`` (last one wins), or None."""
    path = os.path.realpath(path)
    found = None
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            parts = line.split()
            if parts[4].replace("\\040", " ") == path:
                sep = parts.index("-")
                found = {
                    "target": path,
                    "fstype": parts[sep + 1],
                    "source": parts[sep + 2],
                    "options": ",".join(dict.fromkeys(
                        (parts[5] + ("," + parts[sep + 3] if len(parts) > sep + 3 else "")).split(","))),
                }
    return found


# --------------------------------------------------------------------------- cgroups

CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_v2_root(controller: str) -> Path | None:
    """The mounted cgroup v2 hierarchy that offers ``controller`` (io, memory), or None."""
    for entry in findmnt("-t", "cgroup2"):
        root = Path(entry["target"])
        try:
            if controller in (root / "cgroup.controllers").read_text().split():
                return root
        except OSError:
            pass
    return None


def own_cgroup(controller: str, version: int) -> Path:
    """The cgroup directory this process is in now, for ``controller`` (v1: that controller's
    hierarchy; v2: the unified one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        num, controllers, path = line.split(":", 2)
        if version == 1 and controller in controllers.split(","):
            return CGROUP_ROOT / controller / path.lstrip("/")
        if version == 2 and num == "0":
            return (cgroup_v2_root(controller) or CGROUP_ROOT) / path.lstrip("/")
    raise BenchcastError(f"cgroup: cannot tell which {controller} cgroup this process is in")


def join_cgroup(cg) -> None:
    """Move this process (and so the children it starts from now on) into cgroup ``cg``."""
    Path(cg, "cgroup.procs").write_text(str(os.getpid()))


def cgroup_remove(path: str, errors: list) -> bool:
    """Remove a cgroup this workflow made, first moving any process a killed run left in it to the
    parent; False (with the error noted) when it stays."""
    p = Path(path)
    if not p.exists():
        return True
    parent_procs = p.parent / "cgroup.procs"
    for _ in range(3):
        try:
            pids = (p / "cgroup.procs").read_text().split()
        except OSError:
            pids = []
        for pid in pids:  # move leftovers (a killed run's fio) out so the cgroup can go
            try:
                parent_procs.write_text(pid)
            except OSError:
                pass
        try:
            p.rmdir()
            return True
        except OSError as exc:
            err = exc
            time.sleep(0.1)
    errors.append(f"cannot remove cgroup {path}: {err.strerror}")
    return False


def majmin(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def block_counters(dev: str) -> dict[str, int] | None:
    """The kernel's I/O counters of block device ``dev`` since it appeared (``/sys/class/block/<name>/stat``:
    reads, read_bytes, writes, write_bytes, syncs = flush requests); None when it has none."""
    name = os.path.basename(os.path.realpath(dev))
    try:
        f = [int(x) for x in Path(f"/sys/class/block/{name}/stat").read_text().split()]
    except (OSError, ValueError):
        return None
    if len(f) < 11:
        return None
    return {"reads": f[0], "read_bytes": f[2] * 512, "writes": f[4], "write_bytes": f[6] * 512,
            "syncs": f[15] if len(f) >= 17 else 0}


def signatures(dev: str) -> list[str]:
    """Filesystem / partition-table / RAID signatures on ``dev`` (``blkid -p`` and ``wipefs -n``)."""
    found = []
    proc = run(["blkid", "-p", "-o", "export", dev], f"blkid {dev}", check=False)
    if proc.returncode == 0:
        kv = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
        found.append(kv.get("TYPE") or kv.get("PTTYPE") or "unknown signature")
    elif proc.returncode not in (2,):
        raise BenchcastError(f"blkid {dev}: exit {proc.returncode}: {proc.stderr.strip()}")
    proc = run(["wipefs", "-n", "-J", dev], f"wipefs {dev}", check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        for sig in json.loads(proc.stdout).get("signatures", []):
            found.append(sig.get("type", "unknown signature"))
    return sorted(set(found))


def in_use(dev: str) -> str | None:
    """Why block device ``dev`` is in use (mounted, has holders, mounted partitions), or None."""
    mounted = mounts_of_source(dev)
    if mounted:
        return f"mounted at {mounted[0]}"
    name = os.path.basename(os.path.realpath(dev))
    holders = Path(f"/sys/class/block/{name}/holders")
    if holders.is_dir() and any(holders.iterdir()):
        return f"held by {', '.join(p.name for p in holders.iterdir())}"
    for part in Path(f"/sys/class/block/{name}").glob(f"{name}*"):
        pm = mounts_of_source(f"/dev/{part.name}")
        if pm:
            return f"partition {part.name} is mounted at {pm[0]}"
    try:  # O_EXCL on a block device fails with EBUSY while anyone (a mount, dm, md) holds it
        fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
        os.close(fd)
    except OSError as exc:
        return f"cannot be opened exclusively ({exc.strerror})"
    return None


# --------------------------------------------------------------------------- mounting


def format_and_mount(rec: Recorder, dev: str, spec: dict) -> None:
    """mkfs ``dev`` with the spec's fstype and options, then mount it at the spec's mount point:
    the common tail of the block-backed kinds (zram, loop, blockdev)."""
    fs = fstype_of(rec.device, spec)
    mkfs(rec, dev, fs, list_of_str(rec.device, spec, "mkfs_options"))
    mp = prepare_mountpoint(rec, default_mountpoint(rec, spec))
    do_mount(rec, dev, mp, fs, mount_opts_of(rec.device, spec))


def default_mountpoint(rec: Recorder, spec: dict) -> Path:
    if spec.get("mountpoint"):
        return Path(spec["mountpoint"])
    return rec.path.parent / "mnt" / rec.device


def prepare_mountpoint(rec: Recorder, path: Path) -> Path:
    """Make (or accept) an empty, unmounted directory to mount on; record it if we made it."""
    path = Path(os.path.abspath(path))
    if path.exists():
        if not path.is_dir():
            raise rec.error("mountpoint", f"{path} exists and is not a directory")
        if is_mountpoint(path):
            raise rec.error("mountpoint", f"{path} is already a mount point; refusing to mount over it")
        if any(path.iterdir()):
            raise rec.error("mountpoint", f"{path} is not empty; refusing to mount over it")
    else:
        rec.set("mountdir", str(path))
        path.mkdir(parents=True)
    return path


def do_mount(rec: Recorder, source: str, target: Path, fstype: str, options: list[str]) -> None:
    rec.set("mount", str(target))
    rec.set("mount_source", source)
    cmd = ["mount", "-t", fstype]
    if options:
        cmd += ["-o", ",".join(options)]
    run(cmd + [source, str(target)], f"device {rec.device}: mount")
    entry = mount_entry(target)
    rec.update(target=str(target), mount_options=entry["options"] if entry else ",".join(options))


def mkfs(rec: Recorder, dev: str, fstype: str, extra: list[str]) -> None:
    """Make a filesystem on ``dev``: only on a device this record says the workflow owns."""
    owned = {rec.created.get(k) for k in ("zram", "loop", "pmem", "formattable")}
    if dev not in owned:
        raise rec.error("mkfs", f"refusing to format {dev}: not a device this workflow created or owns")
    if fstype == "ext4":
        cmd = ["mkfs.ext4", "-q", "-F", *extra, dev]
    else:
        cmd = ["mkfs.xfs", "-q", "-f", *extra, dev]
    if shutil.which(cmd[0]) is None:
        raise UnavailableError(f"device {rec.device}: fstype: {cmd[0]} is not installed")
    run(cmd, f"device {rec.device}: mkfs")
    rec.note(f"{' '.join(cmd)}")


class RootRequiredError(UnavailableError):
    """The kind needs root and this process is not root. Planning on a machine where the jobs will
    not run (a dry run, a cluster's login node) does not hold this against a device."""


def ensure_root(device_id: str, kind: str) -> None:
    if not is_root():
        raise RootRequiredError(f"device {device_id}: kind {kind} needs root (running as uid {os.geteuid()})")


# --------------------------------------------------------------------------- teardown


def _umount(target: str, source: str | None, errors: list) -> bool:
    entry = mount_entry(target)
    if entry is None:
        return True
    if source and entry["source"] not in (source, os.path.realpath(source)):
        errors.append(f"{target} is mounted from {entry['source']}, not {source}: left alone")
        return False
    for attempt in range(5):
        proc = run(["umount", target], "umount", check=False)
        if proc.returncode == 0 or mount_entry(target) is None:
            return True
        time.sleep(0.2 * (attempt + 1))
    errors.append(f"umount {target} failed: {proc.stderr.strip()}")
    return False


def teardown_mounted(rec: Recorder, undo_device=None) -> list[str]:
    """Undo a filesystem kind's resources in ``rec.created``, in reverse order of making; return
    error strings: unmount, then (once unmounted) ``undo_device(rec, errors)`` (the kind's own
    device: zram reset, loop detach, namespace destroy ...), then the mount directory.

    Each resource leaves the record as soon as it is gone, so a second call only retries what
    failed. Only resources named in the record are touched.
    """
    created = rec.created
    errors: list[str] = []
    if "mount" in created:
        if _umount(created["mount"], created.get("mount_source"), errors):
            rec.drop("mount")
            rec.drop("mount_source")
    if "mount" not in created:
        if undo_device is not None:
            undo_device(rec, errors)
    if "mountdir" in created:
        d = created["mountdir"]
        try:
            if os.path.isdir(d) and not is_mountpoint(d):
                os.rmdir(d)
        except OSError as exc:
            errors.append(f"rmdir {d}: {exc.strerror}")
        if not os.path.exists(d):
            rec.drop("mountdir")
    return errors
