"""Before any job runs: the files the planned jobs will read are checked, so that a corrupt or
truncated raw output, or a bad imported table, stops the run with one line naming the file while
every earlier result is still in place (Snakemake deletes a job's old outputs when the job starts).

The records rules check the same things again when they run; this only moves the refusal first.
"""

from __future__ import annotations

import os
from pathlib import Path

from ... import BenchcastError
from .. import plan
from ...core.units import parse_size, size_label


def check_file(path: str) -> None:
    """Check one raw output a records rule will read (fio JSON, a YCSB run's records)."""
    run = plan.parse(path)
    if run is None:
        return
    if run.type == "fio":
        from . import fiojson

        fiojson.parse(path, study="check", device="check")  # also refuses a job that ended in error
    elif run.type == "ycsb":
        from ... import records

        records.read(path)


#: An application result's cell: its series (as :func:`import_names`), metric, data size, device,
#: and its value (one per run).
CELL = ("benchmark", "engine", "workload", "op", "metric", "data_size", "device", "value")


def import_names(src: dict, devices=None, key: str | None = None) -> tuple[set, set, set, set]:
    """What an import source brings, for the checks of spec cards, feature names, devices and the
    report's focus before any job runs, in one read: (figures, series, cells, devices). Figures as
    (workload, block size, metric) of its device figures; series as (benchmark, engine, workload,
    op) of its application results; cells the application results (:data:`CELL` tuples); devices
    the ids its rows name. Read by the import itself, its checks included (:func:`imported`: a
    file it refuses is a :class:`BenchcastError` naming it)."""
    recs = imported(src, devices, key)
    fio = (recs["benchmark"] == "fio").to_numpy()
    figures = {(w, int(bs), m) for w, bs, m in recs.loc[fio, ["workload", "block_size", "metric"]].itertuples(index=False)}
    apps = recs.loc[~fio, list(CELL)]
    return (figures, {c[:4] for c in apps.itertuples(index=False, name=None)},
            set(apps.itertuples(index=False, name=None)), set(recs["device"]))


def check_imported_devices(where: str, devices: dict, seen: set) -> None:
    """Every device of kind ``imported`` (``devices``: the study's) has rows in the files the study
    imports (``seen``: the device ids their rows name): one that has none would be left out of
    every table without a word."""
    for dev, spec in devices.items():
        if spec.get("kind") == "imported" and dev not in seen:
            raise BenchcastError(f"{where}.devices.{dev}: kind imported, but no file the study imports has "
                                 f"a row for it (its rows name {', '.join(sorted(map(str, seen))) or 'no device'})")


#: The source types that import results made elsewhere (read by :func:`imported`).
IMPORT_KINDS = ("soga2018", "fio_json", "pkb", "records", "ycsb_output")


def imported(src: dict, devices=None, key: str | None = None):
    """The records an import source of kind soga2018, fio_json, pkb, records or ycsb_output brings,
    read by the import itself, its checks included, without writing anything: before any job runs,
    a file it refuses is a :class:`BenchcastError` naming the file (and line), while every earlier
    result is still in place. ``devices``: the study's; ``key``: the source's config key, named by
    an error of one of its ``runs`` entries."""
    from . import importers, pkb

    kind = src["type"]
    try:
        if kind == "ycsb_output":
            return importers.ycsb_output(src["runs"], study="check", source="check", devices=devices, key=key)
        if kind == "soga2018":
            return importers.soga2018(src["fio"], src["app"], "check", "check", src["benchmark"], devices)
        if kind == "fio_json":
            return importers.fio_json(src["files"], study="check", source="check")
        if kind == "pkb":
            return pkb.pkb(src["files"], study="check", source="check", ycsb=src.get("ycsb"))
        return importers.record_files(src["files"], "check", "check", devices=devices, rename=src.get("rename"))
    except OSError as exc:
        raise BenchcastError(f"{exc.filename or src}: cannot read ({(exc.strerror or str(exc)).lower()})") from None


def check_series_selection(where: str, series: dict | None, cells: set) -> None:
    """Each metric and benchmark the study's ``series`` selection names is one some imported
    application result (``cells``, :func:`import_names`) has: one line naming the key where not (a
    name no result has screens nothing, and said nothing)."""
    for k, key in ((4, "metrics"), (0, "benchmarks")):
        have = {str(c[k]) for c in cells}
        for i, name in enumerate((series or {}).get(key) or []):
            if str(name) not in have:
                raise BenchcastError(f"{where}.series.{key}[{i}]: {name!r}: no application result the study "
                                     f"imports has it (theirs: {', '.join(sorted(have))})")


def check_focus_devices(where: str, report: dict, least: int, cells: set, series: dict | None = None) -> None:
    """The report's focus (``report``: the study's report settings) needs a series fitted at its
    data size: results on ``least`` (screen.min_devices) devices there, that differ between them.
    ``cells``: the imported application results (:func:`import_names`), of them the ones the
    study's ``series`` selection screens; one line naming the key where no series has them."""
    focus, size = report.get("focus", {}), report.get("focus_data_size")
    keys = [(k, str(focus[key])) for k, key in enumerate(CELL[:5]) if key in focus]
    named = " ".join(v for _, v in keys) or "any series"
    metrics, benchmarks = (series or {}).get("metrics"), (series or {}).get("benchmarks")
    devices: dict = {}  # (series, data size) -> device -> its values
    for c in cells:
        if metrics is not None and c[4] not in metrics or benchmarks is not None and c[0] not in benchmarks:
            continue
        if all(str(c[k]) == v for k, v in keys):
            devices.setdefault((c[:5], c[5]), {}).setdefault(c[6], set()).add(c[7])
    if not devices:
        raise BenchcastError(f"{where}.report.focus: no imported application result is {named}")
    sizes = sorted({s for _, s in devices})
    want = None if size is None else parse_size(size, what=f"{where}.report.focus_data_size")
    if want is not None and want not in sizes:
        raise BenchcastError(f"{where}.report.focus_data_size: {size}: no imported result of {named} at that "
                             f"size (sizes: {', '.join(size_label(s, decimal=True) for s in sizes)})")
    there = [d for (_, s), d in devices.items() if want is None or s == want]
    at = f" at {size}" if size is not None else ""
    most = max(there, key=len)
    if len(most) < least:
        raise BenchcastError(
            f"{where}.report.focus: {named}{at}: the imported results come from {len(most)} device(s) "
            f"({', '.join(sorted(most))}), fewer than screen.min_devices ({least}): no series could be "
            f"fitted for the report"
        )
    # a fit needs the result to differ between devices (R^2 is undefined where it does not)
    if all(len(set().union(*d.values())) == 1 for d in there if len(d) >= least):
        value = next(iter(most[min(most)]))
        raise BenchcastError(
            f"{where}.report.focus: {named}{at}: the imported results are the same on every device "
            f"({value:.10g} on {', '.join(sorted(most))}): a result that does not vary between devices "
            f"fits no feature, so no series could be fitted for the report"
        )


def one_size_warning(where: str, study: dict, cells: set) -> str | None:
    """A warning where the study extrapolates over data size (``extrapolate.data_sizes``) but every
    imported application result (``cells``, :func:`import_names`) is at one data size: the first
    stage runs, the second has nothing to fit (Tables 13-14 stay empty)."""
    if not study.get("extrapolate", {}).get("data_sizes") or not cells:
        return None
    sizes = {c[5] for c in cells}
    if len(sizes) > 1:
        return None
    return (f"benchcast: {where.removeprefix('config: ')}.extrapolate.data_sizes: every application result of "
            f"the study is at one data size ({size_label(min(sizes), decimal=True)}): nothing to extrapolate "
            f"from, Tables 13 and 14 stay empty")


def check_focus_pairing(where: str, study: dict, figures: set, series: set) -> None:
    """The report's focus needs a candidate feature its pairing rule allows: a figure the study
    measures or imports (``figures``: (workload, block size, metric or None: any)) among its
    candidate features, of a workload the first rule matching the focus series allows. One line
    where no focus series (``series``: (benchmark, engine, workload, op or None)) has one: nothing
    could be fitted, and the report's tables and charts failed after the analysis was rewritten."""
    from ...config.settings import match_rule

    feats = study["features"]
    sizes = {parse_size(b) for b in feats["block_sizes"]}
    workloads = {w for w, bs, m in figures
                 if w in feats["workloads"] and bs in sizes and (m is None or m in feats["metrics"])}
    focus = study.get("report", {}).get("focus", {})
    fields = ("benchmark", "engine", "workload", "op")
    rules = set()
    for ser in series:
        row = {k: focus.get(k) if v is None else v for k, v in zip(fields, ser)}
        if any(k in focus and str(row[k]) != str(focus[k]) for k in fields):
            continue
        if row["op"] is None:
            return  # an op known only when it runs: its rule is not known
        for metric in [focus["metric"]] if "metric" in focus else study["series"]["metrics"]:
            rule = match_rule({**row, "metric": metric}, study.get("pairing"))
            if rule < 0 or workloads & set(study["pairing"][rule]["workloads"]):
                return
            rules.add(rule)
    if rules:
        named = " ".join(str(focus[k]) for k in (*fields, "metric") if k in focus) or "any series"
        allowed = sorted({w for r in rules for w in study["pairing"][r]["workloads"]})
        raise BenchcastError(
            f"{where}.report.focus: {named}: its pairing rule (pairing[{min(rules)}]) allows the workloads "
            f"{allowed}, none of which the study's candidate figures have ({', '.join(sorted(workloads)) or 'none'}): "
            f"no series could be fitted for the report"
        )


def check_figure_devices(where: str, study: dict, least: int) -> None:
    """A study whose device figures are all imported needs a candidate feature on ``least``
    (screen.min_devices) devices: one line where none has them (a device whose files hold another
    setting, numjobs 4 or randrw where the others hold numjobs 1 or randread: nothing could be
    screened, and the report's charts failed after the analysis was rewritten). Figures are grouped
    by workload, block size, metric, iodepth and numjobs (a feature's name tells apart at least
    these). Nothing to say where a source measures."""
    import pandas as pd

    feats, devices = study["features"], list(study.get("devices", {})) or None
    if any(src["type"] not in IMPORT_KINDS for src in study["sources"].values()):
        return
    parts = [imported(src, devices) for src in study["sources"].values()]
    recs = pd.concat(parts, ignore_index=True)
    every = set(devices or recs.loc[recs["benchmark"] == "fio", "device"])
    sizes = {parse_size(b) for b in feats["block_sizes"]}
    recs = recs[(recs["benchmark"] == "fio") & recs["workload"].isin(feats["workloads"])
                & recs["block_size"].astype(int).isin(sizes) & recs["metric"].isin(feats["metrics"])]
    keys = [k for k in ("workload", "block_size", "metric", "iodepth", "numjobs") if k in recs.columns]
    groups = recs.groupby(keys)["device"].agg(lambda d: sorted(set(d))) if len(recs) else None
    if groups is None or groups.map(len).max() >= least:
        return
    best = groups.map(len).idxmax()
    named = " ".join(f"{k} {size_label(int(v)) if k == 'block_size' else v}" for k, v in zip(keys, best))
    others = sorted(every - set(groups[best]))
    raise BenchcastError(
        f"{where}.features: no candidate figure comes from screen.min_devices ({least}) devices: the most, "
        f"{named}, from {len(groups[best])} ({', '.join(groups[best])}); {', '.join(others) or 'no other device'} "
        f"{'has' if len(others) == 1 else 'have'} figures of other settings only: no series could be screened"
    )


def check_app_series(app_csv, least: int) -> None:
    """The paper-shaped application table (engine, workload, device, data_gb, op, latency_us; read
    and checked by its import first): a series (engine, workload, op) whose rows come, at every data
    size, from fewer than ``least`` (screen.min_devices) devices is one no fit can use, refused at
    its first line (an engine relabelled by mistake). A cell missing where other devices have the
    series is no error: third-party results may lack one."""
    _few_devices(app_csv, ("engine", "workload", "op"), "data_gb", least, "at every data size rows")


def check_fio_figures(fio_csv, least: int) -> None:
    """The paper-shaped fio table (device, rw, bs, metric, value; read and checked by its import
    first): a figure (rw, bs, metric) of fewer than ``least`` (screen.min_devices) devices is one no
    fit can use, refused at its first line (a block size mistyped: its device's figure lost)."""
    _few_devices(fio_csv, ("rw", "bs", "metric"), None, least, "rows", bs=parse_size)


def _few_devices(path, keys: tuple, size, least: int, rows: str, **read) -> None:
    """The rows of a paper-shaped table by ``keys`` (and by the column ``size``, where given): one
    line naming the first row of a key whose rows come from fewer than ``least`` devices (at its
    best size). ``read``: column -> how its text is read (``bs=parse_size``: 1k and 1K are one)."""
    import pandas as pd

    from ... import records

    path = Path(path)
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    table = raw.copy()
    lines = records.csv_lines(path, len(table))
    groups: dict = {}
    cols = [*keys, "device"] + ([size] if size else [])
    for col, fn in read.items():
        table[col] = table[col].map(fn)
    for i, row in enumerate(table[cols].itertuples(index=False, name=None)):
        _, sizes = groups.setdefault(row[:len(keys)], (i, {}))
        sizes.setdefault(float(row[-1]) if size else None, set()).add(row[len(keys)])
    for i, sizes in groups.values():
        most = max(sizes.values(), key=len)
        if len(most) < least:
            named = ", ".join(f"{k} {raw[k].iloc[i]}" for k in keys)  # as the file writes them
            raise BenchcastError(
                f"{path}: line {lines[i]}: {named}: {rows} of {len(most)} device(s) ({', '.join(sorted(most))}), "
                f"fewer than screen.min_devices ({least}): no fit can use them"
            )


def check_writable(directory: str = "results") -> None:
    """The results folder (or, before it exists, the working directory) must take new files, and be a
    folder (a file named ``results`` ends Snakemake's inventory in a traceback)."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise BenchcastError(f"{d}: the results folder is a file here; move it away (or rename it); nothing was run")
    probe = d if d.exists() else d.resolve().parent
    if not os.access(probe, os.W_OK):
        why = "read-only file system" if _read_only_mount(probe) else "no write permission"
        raise BenchcastError(f"{probe}: results folder is not writable ({why}); nothing was run")


def check_output_files(paths) -> None:
    """The files a run makes (its final targets) must not be folders: Snakemake takes a folder at a
    file's path for the file ("Nothing to be done"), and the report step failed on it after."""
    for path in paths:
        if os.path.isdir(path):
            raise BenchcastError(f"{path}: a folder where the run writes a file; move it away (or rename it); "
                                 f"nothing was run")


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
