"""A device's state record: one JSON file per device, rewritten atomically (write + rename) after
every step, so that a run killed at any point leaves a record of exactly what it created:

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
import time
from pathlib import Path

from .. import BenchcastError


def write_state(path, state: dict) -> None:
    """Write the state record atomically: a crash leaves either the old or the new record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state["updated"] = time.time()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as fh:
            json.dump(state, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:  # a full file system: no half-written copy left beside the record
        tmp.unlink(missing_ok=True)
        raise


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

    def __init__(self, state: dict, path, parent: "Recorder | None" = None, lenient: bool = False):
        self.state = state
        self.path = Path(path)
        self.parent = parent
        #: a teardown goes on when its record cannot be written (a full results file system): what it
        #: undoes is gone either way, and undoing it again finds nothing left; ``unsaved`` says so
        self.lenient = lenient
        self.unsaved: OSError | None = None
        state.setdefault("created", {})
        state.setdefault("notes", [])

    @property
    def device(self) -> str:
        return self.state["device"]

    @property
    def created(self) -> dict:
        return self.state["created"]

    def save(self) -> None:
        """Write the record. A record that cannot be written stops provisioning before it makes what it
        would not have recorded (one line, naming the file); a lenient teardown goes on (``unsaved``)."""
        if self.parent is not None:
            self.parent.save()
            return
        try:
            write_state(self.path, self.state)
        except OSError as exc:
            if not self.lenient:
                raise BenchcastError(f"device {self.device}: state record {self.path} cannot be written "
                                     f"({exc.strerror})") from None
            self.unsaved = exc

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
