"""The config files: read as YAML that refuses a key given twice, checked as Snakemake merged them
(a later ``--configfile`` never changes a device's kind), and what ``./benchcast.sh run`` checks on
its command line before Snakemake reads it. Every error is one line naming the file (and line).
Validating what they hold is :mod:`benchcast.config`'s."""

from __future__ import annotations

from pathlib import Path

import yaml

from .. import BenchcastError


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last). A merge
    key (``<<: *anchor``) is no key of its own: the keys it brings yield to the mapping's."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise BenchcastError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r} "
                                     f"(first on line {seen[key]})")
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _missing_folder(path: Path) -> str:
    """Why a config file's path leads nowhere, where a folder on it does: the first part of it that
    is missing, or a file where a folder goes ('' where its folders are there)."""
    for parent in reversed(path.parents):
        if parent == Path(".") or parent.is_dir():
            continue
        return f" ({parent} is a file, not a folder)" if parent.exists() else f" (no folder {parent})"
    return ""


def read_file(path) -> dict:
    """One config file as a mapping; a missing, unreadable or malformed file, one that is empty or no
    mapping, or a key given twice in one mapping, is a one-line error naming the file (and line)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise BenchcastError(f"{path}: no such config file{_missing_folder(path)}") from None
    except IsADirectoryError:
        raise BenchcastError(f"{path}: a folder, not a config file") from None
    except PermissionError:
        raise BenchcastError(f"{path}: cannot read config file (permission denied)") from None
    except UnicodeDecodeError as exc:
        raise BenchcastError(f"{path}: cannot read config file (not UTF-8 text: byte {exc.start})") from None
    except OSError as exc:
        raise BenchcastError(f"{path}: cannot read config file ({(exc.strerror or str(exc)).lower()})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except BenchcastError as exc:
        raise BenchcastError(f"{path}:{str(exc)[len('line '):]}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BenchcastError(f"{where}: not valid YAML ({what})") from None
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}, not a mapping of keys"
        raise BenchcastError(f"{path}: config file is {what} (it needs keys such as studies:)")
    return data


def check_files(base, overlays=()) -> None:
    """The config files Snakemake merged, read again: each must be a mapping without duplicate keys,
    and a later file (``--configfile``) must not change the kind of a device an earlier one defines:
    a merge keeps the old kind's keys and the device's earlier records (an imported ``dram`` turned
    into a tmpfs would mix the paper's rows with a measurement); give the new device its own id."""
    kinds: dict = {}
    for i, path in enumerate([*base, *overlays]):
        data = read_file(path)
        studies = data.get("studies")
        for study, spec in (studies.items() if isinstance(studies, dict) else ()):
            devices = spec.get("devices") if isinstance(spec, dict) else None
            for dev, dspec in (devices.items() if isinstance(devices, dict) else ()):
                kind = dspec.get("kind") if isinstance(dspec, dict) else None
                old = kinds.get((study, dev))
                if i >= len(base) and kind and old and old[0] != kind:
                    raise BenchcastError(
                        f"{path}: studies.{study}.devices.{dev}.kind: {kind!r} would change the kind of "
                        f"device {dev} ({old[0]!r} in {old[1]}); a merge never changes a device's kind: "
                        f"give the device a new id"
                    )
                if kind:
                    kinds[(study, dev)] = (kind, path)


def check_merged(config) -> None:
    """The config as Snakemake merged it (files and ``--config`` items), before the schema: every
    number finite and a 64-bit one (YAML reads ``99999999999999999999`` and ``.nan`` as numbers:
    the first ended in an OverflowError inside a job after outputs were rewritten, the second passes
    every bound), and study names that differ in more than case (their results would share one
    folder where case is ignored)."""
    _numbers(config, "")
    studies = config.get("studies") if isinstance(config, dict) else None
    folded: dict = {}
    for name in sorted(map(str, studies or ())):
        first = folded.setdefault(name.casefold(), name)
        if first != name:
            raise BenchcastError(f"config: studies: {first!r} and {name!r} differ only in case (one results "
                                 f"folder where case is ignored); give one another name")


def _numbers(value, where: str) -> None:
    import math

    if isinstance(value, dict):
        for key, sub in value.items():
            _numbers(sub, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _numbers(sub, f"{where}[{i}]")
    elif isinstance(value, bool):
        return
    elif isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise BenchcastError(f"config: {where}: {value} is beyond a 64-bit integer")
    elif isinstance(value, float) and not math.isfinite(value):
        raise BenchcastError(f"config: {where}: {value} is not a finite number")


def check_command_line(argv) -> None:
    """What Snakemake reads before the workflow can check anything, checked first by
    ``./benchcast.sh run``: each ``--configfile`` (:func:`read_file`) and each ``--config`` item,
    which must be KEY=VALUE with a top-level key (``run.studies=[paper]`` names no key)."""
    wanted: dict = {"--configfile": [], "--configfiles": [], "--config": []}
    into = None
    for arg in argv:
        name, eq, value = arg.partition("=")
        if name in wanted:
            into = wanted[name]
            if eq:
                into.append(value)
            continue
        if arg.startswith("-"):
            into = None
        elif into is not None:
            into.append(arg)
    for path in wanted["--configfile"] + wanted["--configfiles"]:
        read_file(path)
    for item in wanted["--config"]:
        key = item.partition("=")[0]
        if "=" not in item or not key.isidentifier():
            raise BenchcastError(f"--config {item}: not KEY=VALUE with a top-level key (e.g. --config "
                                 f"'run={{studies: [paper]}}')")


def main(argv=None) -> int:
    import sys

    try:
        check_command_line(sys.argv[1:] if argv is None else argv)
    except BenchcastError as exc:
        print(f"benchcast: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
