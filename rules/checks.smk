# Before the DAG: what each study's sources bring, checked against its spec cards, feature
# names, report focus and imported devices; every import's files listed (rules/common.smk: the plan).

# every import's files listed before the DAG is built: a missing file or a glob matching none is one
# line here (raised in the input function, it ended in Snakemake's traceback; a paper-shaped table
# that is not there was no error at all where the import's earlier output stood)
if workflow.is_main_process and bc_smk.builds_results():
    from types import SimpleNamespace

    for _study in SELECTED:
        for _name, _src in STUDIES[_study]["sources"].items():
            if _src["type"] in ("fio_json", "pkb", "records", "ycsb_output"):
                try:
                    get_import_inputs(SimpleNamespace(study=_study, source=_name))
                except WorkflowError as exc:
                    refuse(str(exc))
            for _key in ("fio", "app") if _src["type"] == "soga2018" else ():
                if not os.path.exists(_src[_key]):
                    refuse(
                        f"config: studies.{_study}.sources.{_name}.{_key}: {_src[_key]}: no such file"
                    )


def study_names(study):
    """What the study's sources bring, before any job runs: (figures, series, cells). Figures:
    (workload, block size, metric or None: any) of every device figure it measures (its fio grids
    on the devices this machine has) or imports; series: (benchmark, engine, workload, op; None:
    any) of its application results; cells: the imported application results (benchcast.sources.preflight
    .CELL; None where the study also measures some). Imports are read by the import itself, its
    checks included (benchcast.sources.preflight.imported): a file it refuses stops the run here, before
    any job, naming the file (and line)."""
    from benchcast.sources.parse import fiojson as bc_fiojson
    from benchcast.sources.parse import preflight as bc_preflight

    sources = STUDIES[study]["sources"]
    measured = {n: s for n, s in sources.items() if s["type"] in ("ycsb", "ooc")}
    figures, series = set(), bc_config.measured_series(measured)
    cells = None if measured else set()
    seen = set()  # the devices the imports' rows name
    for name, src in sources.items():
        if src["type"] == "fio":
            figures |= {
                (bc_fiojson.workload(c["rw"], c.get("extra") or {}), c["bs"], None)
                for (s, _, _), c in PLAN[study].cells.items()
                if s == name
            }
        elif src["type"] in bc_preflight.IMPORT_KINDS:
            try:
                got = bc_preflight.import_names(
                    src,
                    list(STUDIES[study].get("devices", {})) or None,
                    key=f"config: studies.{study}.sources.{name}",
                )
            except BenchcastError as exc:
                refuse(f"benchcast: {exc}")
            figures |= got[0]
            series |= got[1]
            cells = None if cells is None else cells | got[2]
            seen |= got[3]
    try:
        bc_preflight.check_imported_devices(
            f"config: studies.{study}", STUDIES[study].get("devices", {}), seen
        )
    except BenchcastError as exc:
        refuse(str(exc))
    return figures, series, cells


def check_cards(study):
    """A spec card no device figure of the study can feed is an error, or with allow_unused: true a
    warning (here and in the run's last lines, onsuccess); returns the warnings. So is a feature
    name (features.workloads, block_sizes, metrics) no source of the study has (features
    .allow_unused). The report's focus must name application results the study has (its runs'
    names, its imported files'), and, where they are all imported, on screen.min_devices devices
    at its data size.
    """
    from benchcast.sources.parse import preflight as bc_preflight

    # read for every study: an imported device no imported row names is refused there
    measured, series, cells = study_names(study)
    # device figures alone: no card is predicted, no focus
    if not bc_config.has_series(STUDIES[study]):
        return []
    spec, where = STUDIES[study], f"config: studies.{study}"
    least = spec["screen"]["min_devices"]
    try:
        # the focus and the pairing rules name results the study has
        bc_config.check_series_names(where, spec, series)
        # every application result imported: the focus fitted at its data size
        if cells:
            bc_preflight.check_series_selection(where, spec.get("series"), cells)
            bc_preflight.check_focus_devices(
                where, spec.get("report", {}), least, cells, spec.get("series")
            )
        # the imports read: their application tables' series
        for src in spec["sources"].values():
            if src["type"] == "soga2018":
                bc_preflight.check_app_series(src["app"], least)
                bc_preflight.check_fio_figures(src["fio"], least)
    except BenchcastError as exc:
        refuse(str(exc))
    targets = spec.get("targets", {})
    cards = [
        (
            name,
            "none of its figures is measured or imported by the study, no model can use it",
            targets[name]["allow_unused"],
        )
        for name in bc_config.unused_cards(targets, measured)
    ]
    names = [
        (key, what, spec["features"]["allow_unused"])
        for key, what in bc_config.unused_features(spec["features"], measured)
    ]
    warnings = (
        unused(
            f"studies.{study}.targets",
            cards,
            ("fix its figures or set allow_unused: true", "it gets no prediction"),
        )
        + unused(
            f"studies.{study}.features",
            names,
            ("fix it or set features.allow_unused: true", "it is no candidate feature"),
        )
        + [w for w in [bc_preflight.one_size_warning(where, spec, cells)] if w]
        + [  # a figure of a card that no device has: a warning, the card's other figures serve
            f"benchcast: studies.{study}.targets.{key}: no device of the study has this figure, "
            f"no model uses it (its card's other figures do)"
            for key in bc_config.unused_figures(targets, measured)
        ]
    )
    # the cards and feature names first: a pairing that allows none of them says less
    try:
        bc_preflight.check_figure_devices(where, spec, least)
        bc_preflight.check_focus_pairing(where, spec, measured, series)
    except BenchcastError as exc:
        refuse(str(exc))
    return warnings


def unused(where, items, advice):
    """Names of ``where`` the study cannot use, (key, what, allowed): a config error, or where
    allowed (allow_unused: true) a warning, returned for the run's last lines. One implementation
    for spec cards and feature names; ``advice``: (what to do, what it means when allowed).
    """
    warnings = []
    for key, what, allowed in items:
        if not allowed:
            refuse(f"config: {where}.{key}: {what}; {advice[0]}")
        warnings.append(
            f"benchcast: {where}.{key}: {what} (allow_unused: true): {advice[1]}"
        )
    return warnings


# the import sources' files are read here once, by the run's own process (not by each job's), where
# the run builds results (not for teardown, compare, --unlock: benchcast.core.smk.builds_results)
UNUSED_CARDS = (
    [w for study in SELECTED for w in check_cards(study)]
    if workflow.is_main_process and bc_smk.builds_results()
    else []
)
for _warning in UNUSED_CARDS:
    logger.warning(_warning)


def warn_unused_cards():
    """onsuccess: the spec cards and feature names allowed unused, in the run's last lines."""
    for warning in UNUSED_CARDS:
        logger.warning(warning)
