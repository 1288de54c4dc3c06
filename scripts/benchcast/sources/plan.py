"""The run plan: every run a study measures (fio cells, YCSB jobs, out-of-core jobs), one
:class:`Run` per run, built once from the validated config; and the one layout of the runs' result
paths, which both formats and parses them.

The rules' ``get_*`` functions (``rules/common.smk``, ``rules/inputs.smk``), their wildcard constraints
(:func:`wildcard_constraints`), the preflight check and the record scripts all read paths through
:func:`pattern`, :meth:`Run.path` and :func:`parse`; which devices a source measures is decided
here (:func:`measured_devices`) and nowhere else.

Layout (``<suffix>``: a run's files, :data:`SUFFIXES`; the log is the same path under ``logs/``)::

    results/<study>/fio/<source>/<device>/<cell>/run<repeat>.json   (.fio: its job file)
    results/<study>/ycsb/<source>/<device>/<engine>/<size bytes>/run<repeat>.csv   (no suffix: raw)
    results/<study>/ooc/<source>/<device>/<mode>/run<repeat>.csv   (no suffix: raw)
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field, replace

from .. import BenchcastError
from ..core.units import parse_size
from ..core.vocabulary import OOC_MODE_KINDS as MODE_KINDS, OOC_MODES as MODES, OOC_PROGRAMS as PROGRAMS
from ..core.vocabulary import YCSB_ENGINES as ENGINES

#: Source types whose runs the workflow measures, in the order a device's runs are listed.
MEASURED = ("fio", "ycsb", "ooc")

#: A run's path below its root (``results`` or ``logs``), less its suffix.
LAYOUT = {
    "fio": "{study}/fio/{source}/{device}/{cell}/run{repeat}",
    "ycsb": "{study}/ycsb/{source}/{device}/{engine}/{size}/run{repeat}",
    "ooc": "{study}/ooc/{source}/{device}/{mode}/run{repeat}",
}
#: The measured output of a run: what its records rule reads.
OUTPUT = {"fio": ".json", "ycsb": ".csv", "ooc": ".csv"}
#: Every file of a run: the output, fio's job file or the raw folder of a YCSB or ooc job, the log.
SUFFIXES = {"fio": (".json", ".fio", ".log"), "ycsb": (".csv", "", ".log"), "ooc": (".csv", "", ".log")}

#: What each wildcard of the workflow's paths matches (``study``: the configured names, see
#: :func:`wildcard_constraints`); the vocabularies come from the modules that own them.
WILDCARDS = {
    "source": "[A-Za-z0-9][A-Za-z0-9_-]*",
    "device": "[A-Za-z0-9][A-Za-z0-9_.-]*",
    "cell": "[A-Za-z0-9][A-Za-z0-9_.-]*",
    "repeat": "[0-9]+",
    "engine": "|".join(ENGINES),
    "size": "[0-9]+",
    "mode": "|".join(MODES),
    "program": "|".join(PROGRAMS),
}


def wildcard_constraints(studies) -> dict[str, str]:
    """The workflow's wildcard constraints: :data:`WILDCARDS` and the study names."""
    return {"study": "|".join(map(re.escape, studies)), **WILDCARDS}


# --------------------------------------------------------------------------- paths


@dataclass(frozen=True)
class Run:
    """One planned run: its study, source type and name, device, repeat, and what else names it
    (fio: the cell id; YCSB: engine and data size in bytes; ooc: the mode)."""

    study: str
    type: str
    source: str
    device: str
    repeat: int
    cell: str | None = None
    engine: str | None = None
    size: int | None = None
    mode: str | None = None

    def path(self, suffix: str | None = None, root: str = "results") -> str:
        """The run's file with ``suffix`` (default: its measured output, :data:`OUTPUT`)."""
        suffix = OUTPUT[self.type] if suffix is None else suffix
        return f"{root}/{LAYOUT[self.type].format(**vars(self))}{suffix}"

    def again(self, repeat: int) -> "Run":
        """The same job's run ``repeat``."""
        return replace(self, repeat=int(repeat))


def pattern(kind: str, suffix: str | None = None, root: str = "results") -> str:
    """A run's path with Snakemake wildcards, e.g. ``results/{study}/fio/.../run{repeat}.json``."""
    suffix = OUTPUT[kind] if suffix is None else suffix
    return f"{root}/{LAYOUT[kind]}{suffix}"


def _regex(kind: str, suffix: str, root: str) -> re.Pattern:
    parts = []
    for literal, name, _spec, _conv in string.Formatter().parse(LAYOUT[kind]):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(f"(?P<{name}>{WILDCARDS.get(name, '[^/]+')})")
    return re.compile(f"(?:^|/){re.escape(root)}/{''.join(parts)}{re.escape(suffix)}$")


def parse(path, suffix: str | None = None, root: str = "results") -> Run | None:
    """The run whose file with ``suffix`` (default: its measured output) ``path`` is, or None."""
    for kind in MEASURED:
        m = _regex(kind, OUTPUT[kind] if suffix is None else suffix, root).search(str(path))
        if m:
            got = m.groupdict()
            got["repeat"] = int(got["repeat"])
            if "size" in got:
                got["size"] = int(got["size"])
            return Run(type=kind, **got)
    return None


# --------------------------------------------------------------------------- the plan


def _err(source_name: str, key: str, msg: str) -> BenchcastError:
    return BenchcastError(f"source {source_name}: {key}: {msg}")


def measured_devices(source, devices: dict, source_name: str = "fio") -> list[str]:
    """The study devices a source (fio, YCSB, ooc) measures: its ``devices`` list (empty: none) and the
    devices that name the source in their own ``sources``; without a list, every non-imported device
    that names no ``sources``, or names this one. ``source``: the source's config, or a fio source's
    settings (:class:`benchcast.config.settings.FioSettings`, ``devices`` None: not given)."""
    devices = devices or {}
    if isinstance(source, dict):
        given, wanted, what = "devices" in source, source.get("devices"), source.get("type", "fio")
    else:
        given, wanted, what = source.devices is not None, source.devices, "fio"
    measurable = [d for d, spec in devices.items() if (spec or {}).get("kind") != "imported"]
    names = {d: (devices[d] or {}).get("sources") for d in measurable}
    if given:
        if not isinstance(wanted, (list, tuple)) or not all(isinstance(d, str) for d in wanted):
            raise _err(source_name, "devices", "must be a list of device ids")
        for d in wanted:
            if d not in devices:
                raise _err(source_name, "devices", f"{d!r} is not a device of the study")
            if devices[d].get("kind") == "imported":
                raise _err(source_name, "devices", f"{d!r} is an imported device; {what} cannot measure it")
        return list(wanted) + [d for d in measurable if d not in wanted and source_name in (names[d] or ())]
    return [d for d in measurable if names[d] is None or source_name in names[d]]


def check_device_sources(study: dict) -> None:
    """Each device of a study is measured by a source or given by an import: a device whose
    ``sources`` name a source the study has not, or that no source measures, is refused naming it."""
    devices, sources = study.get("devices") or {}, study.get("sources") or {}
    measured = {d for name, src in sources.items() if src.get("type") in MEASURED
                for d in measured_devices(src, devices, name)}
    for d, spec in devices.items():
        named = (spec or {}).get("sources")
        unknown = [n for n in named or () if n not in sources]
        if unknown:
            raise BenchcastError(f"devices.{d}.sources: {unknown[0]!r} is not a source of the study "
                                 f"(its sources: {', '.join(sources) or 'none'})")
        if (spec or {}).get("kind") != "imported" and d not in measured:
            raise BenchcastError(f"devices.{d}: no source of the study measures it (its sources list other devices"
                                 f"{', and it names ' + ', '.join(named) if named else ''}): add it to a source, or "
                                 f"leave its `sources` out")


def planned_runs(src: dict) -> int:
    """The runs of a fio cell or YCSB job before any extra run: ``repeats``, or ``max_repeats`` when
    larger (repeat until stable: the runs beyond ``repeats`` that are not needed end as skip notes)."""
    return max(src["repeats"], src.get("max_repeats") or 0)


def run_count(src: dict, extra_runs: int = 0) -> int:
    """Runs planned per fio cell or YCSB job (:func:`planned_runs` and up to ``extra_runs``, the
    runs that measure again what interference spoiled); an ooc job has its ``repeats``."""
    if src["type"] == "ooc":
        return src["repeats"]
    return planned_runs(src) + extra_runs


@dataclass(frozen=True)
class StudyPlan:
    """The planned runs of one study, in source order (:meth:`select` lists them by
    :data:`MEASURED` type first), and the options of each fio cell."""

    study: str
    runs: tuple[Run, ...]
    cells: dict = field(default_factory=dict, compare=False)

    def select(self, type: str | None = None, source: str | None = None, device: str | None = None) -> list[Run]:
        return sorted((r for r in self.runs if (type is None or r.type == type)
                       and (source is None or r.source == source) and (device is None or r.device == device)),
                      key=lambda r: MEASURED.index(r.type))

    def outputs(self, type: str | None = None, source: str | None = None, device: str | None = None) -> list[str]:
        """The measured outputs of the selected runs (:meth:`select`)."""
        return [r.path() for r in self.select(type, source, device)]

    def devices(self, source: str) -> list[str]:
        """The devices a source's runs measure, sorted."""
        return sorted({r.device for r in self.runs if r.source == source})

    def cell(self, source: str, device: str, cell: str) -> dict:
        """A fio cell's options (KeyError: no such cell in the plan)."""
        return self.cells[(source, device, cell)]


def build(study_name: str, study: dict, usable, *, grid, extra_runs: int = 0) -> StudyPlan:
    """The plan of one validated study: its fio, YCSB and ooc sources' runs on the ``usable``
    devices (those this machine has). ``grid``: fio's grid expansion (:func:`benchcast.sources.run.fio.expand_grid`,
    passed in: fio reads :func:`measured_devices` from here). BenchcastError names the config key.
    """
    runs, cells = [], {}
    devices = study.get("devices", {})
    for name, src in study["sources"].items():
        if src["type"] not in MEASURED:
            continue
        where = f"config: studies.{study_name}.sources.{name}"
        try:
            if src["type"] == "fio":
                jobs = _fio_jobs(name, src, devices, usable, grid, cells)
            else:
                wanted = [d for d in measured_devices(src, devices, name) if d in usable]
                jobs = (_ycsb_jobs if src["type"] == "ycsb" else _ooc_jobs)(src, devices, wanted, where)
        except BenchcastError as exc:
            raise BenchcastError(f"{where}: {exc}") from None
        n = run_count(src, extra_runs if src["type"] in ("fio", "ycsb") else 0)
        runs += [Run(study_name, src["type"], name, repeat=r, **job) for job in jobs for r in range(n)]
    try:  # after each source's own list is checked, naming the source
        check_device_sources(study)
    except BenchcastError as exc:
        raise BenchcastError(f"config: studies.{study_name}.{exc}") from None
    return StudyPlan(study_name, tuple(runs), cells)


def _fio_jobs(name, src, devices, usable, grid, cells) -> list[dict]:
    jobs = []
    for c in grid(src, devices, name):
        if c["device"] in usable:
            cells[(name, c["device"], c["cell"])] = c
            jobs.append({"device": c["device"], "cell": c["cell"]})
    return jobs


def _ycsb_jobs(src, devices, wanted, where) -> list[dict]:
    sizes = [parse_size(s, what=f"{where}.data_sizes") for s in src["data_sizes"]]
    return [{"device": d, "engine": e, "size": size} for d in wanted for e in src["engines"] for size in sizes]


def _ooc_jobs(src, devices, wanted, where) -> list[dict]:
    """Each mode on the devices it can use (:data:`benchcast.core.vocabulary.OOC_MODE_KINDS`)."""
    return [{"device": d, "mode": mode} for d in wanted for mode in src["modes"]
            if MODE_KINDS[mode] is None or devices[d]["kind"] in MODE_KINDS[mode]]
