"""Before the DAG (rules/checks.smk): what each study's sources bring, checked against its spec
cards, feature names, report focus and imported devices; every import's files listed. A check that
fails raises :class:`~benchcast.BenchcastError` with the refusal's one line."""

import os
from types import SimpleNamespace

from benchcast import BenchcastError
from benchcast import config as bc_config
from benchcast.workflow.inputs import IMPORTED, Inputs


def check_import_files(inputs: Inputs, selected: list[str]) -> None:
    """Every import's files listed before the DAG is built: a missing file or a glob matching none is
    one line here (raised in the input function, it ended in Snakemake's traceback; a paper-shaped
    table that is not there was no error at all where the import's earlier output stood)."""
    for study in selected:
        for name, src in inputs.studies[study]["sources"].items():
            if src["type"] in IMPORTED:
                inputs.import_inputs(SimpleNamespace(study=study, source=name))
            for key in ("fio", "app") if src["type"] == "soga2018" else ():
                if not os.path.exists(src[key]):
                    raise BenchcastError(f"config: studies.{study}.sources.{name}.{key}: {src[key]}: no such file")


def study_names(inputs: Inputs, study: str):
    """What the study's sources bring, before any job runs: (figures, series, cells). Figures:
    (workload, block size, metric or None: any) of every device figure it measures (its fio grids
    on the devices this machine has) or imports; series: (benchmark, engine, workload, op; None:
    any) of its application results; cells: the imported application results (benchcast.sources.parse.preflight
    .CELL; None where the study also measures some). Imports are read by the import itself, its
    checks included (benchcast.sources.parse.preflight.imported): a file it refuses stops the run here, before
    any job, naming the file (and line)."""
    from benchcast.sources.parse import fiojson as bc_fiojson
    from benchcast.sources.parse import preflight as bc_preflight

    sources = inputs.studies[study]["sources"]
    measured = {n: s for n, s in sources.items() if s["type"] in ("ycsb", "ooc")}
    figures, series = set(), bc_config.measured_series(measured)
    cells = None if measured else set()
    seen = set()  # the devices the imports' rows name
    for name, src in sources.items():
        if src["type"] == "fio":
            figures |= {
                (bc_fiojson.workload(c["rw"], c.get("extra") or {}), c["bs"], None)
                for (s, _, _), c in inputs.plan[study].cells.items()
                if s == name
            }
        elif src["type"] in bc_preflight.IMPORT_KINDS:
            try:
                got = bc_preflight.import_names(
                    src, list(inputs.studies[study].get("devices", {})) or None, key=f"config: studies.{study}.sources.{name}"
                )
            except BenchcastError as exc:
                raise BenchcastError(f"benchcast: {exc}") from None
            figures |= got[0]
            series |= got[1]
            cells = None if cells is None else cells | got[2]
            seen |= got[3]
    bc_preflight.check_imported_devices(f"config: studies.{study}", inputs.studies[study].get("devices", {}), seen)
    return figures, series, cells


def check_cards(inputs: Inputs, study: str) -> list[str]:
    """A spec card no device figure of the study can feed is an error, or with allow_unused: true a
    warning (here and in the run's last lines, onsuccess); returns the warnings. So is a feature
    name (features.workloads, block_sizes, metrics) no source of the study has (features
    .allow_unused). The report's focus must name application results the study has (its runs'
    names, its imported files'), and, where they are all imported, on screen.min_devices devices
    at its data size.
    """
    from benchcast.sources.parse import preflight as bc_preflight

    # read for every study: an imported device no imported row names is refused there
    measured, series, cells = study_names(inputs, study)
    # device figures alone: no card is predicted, no focus
    if not bc_config.has_series(inputs.studies[study]):
        return []
    spec, where = inputs.studies[study], f"config: studies.{study}"
    least = spec["screen"]["min_devices"]
    # the focus and the pairing rules name results the study has
    bc_config.check_series_names(where, spec, series)
    # every application result imported: the focus fitted at its data size
    if cells:
        bc_preflight.check_series_selection(where, spec.get("series"), cells)
        bc_preflight.check_focus_devices(where, spec.get("report", {}), least, cells, spec.get("series"))
    # the imports read: their application tables' series
    for src in spec["sources"].values():
        if src["type"] == "soga2018":
            bc_preflight.check_app_series(src["app"], least)
            bc_preflight.check_fio_figures(src["fio"], least)
    warnings = _unused_warnings(study, spec, measured) + [
        w for w in [bc_preflight.one_size_warning(where, spec, cells)] if w
    ]
    warnings += [  # a figure of a card that no device has: a warning, the card's other figures serve
        f"benchcast: studies.{study}.targets.{key}: no device of the study has this figure, "
        f"no model uses it (its card's other figures do)"
        for key in bc_config.unused_figures(spec.get("targets", {}), measured)
    ]
    # the cards and feature names first: a pairing that allows none of them says less
    bc_preflight.check_figure_devices(where, spec, least)
    bc_preflight.check_focus_pairing(where, spec, measured, series)
    return warnings


def _unused_warnings(study: str, spec: dict, measured) -> list[str]:
    """The spec cards and feature names of a study no figure it measures or imports can feed."""
    targets = spec.get("targets", {})
    cards = [
        (name, "none of its figures is measured or imported by the study, no model can use it", targets[name]["allow_unused"])
        for name in bc_config.unused_cards(targets, measured)
    ]
    names = [
        (key, what, spec["features"]["allow_unused"]) for key, what in bc_config.unused_features(spec["features"], measured)
    ]
    return unused(
        f"studies.{study}.targets", cards, ("fix its figures or set allow_unused: true", "it gets no prediction")
    ) + unused(f"studies.{study}.features", names, ("fix it or set features.allow_unused: true", "it is no candidate feature"))


def unused(where, items, advice) -> list[str]:
    """Names of ``where`` the study cannot use, (key, what, allowed): a config error, or where
    allowed (allow_unused: true) a warning, returned for the run's last lines. One implementation
    for spec cards and feature names; ``advice``: (what to do, what it means when allowed).
    """
    warnings = []
    for key, what, allowed in items:
        if not allowed:
            raise BenchcastError(f"config: {where}.{key}: {what}; {advice[0]}")
        warnings.append(f"benchcast: {where}.{key}: {what} (allow_unused: true): {advice[1]}")
    return warnings
