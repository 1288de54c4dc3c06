"""Config validation: the YAML JSON-schema plus the checks a schema cannot express.

Every error is one line naming the key, e.g.
``config: studies.paper.targets.S-SCM: unknown key 'figurs'``.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import jsonschema
import yaml

from .. import BenchcastError
from ..core.datasheet import Figure, serving
from ..core.units import figure_value, parse_size, size_label
from ..core.workloads import rw_op

SCHEMA = Path(__file__).resolve().parents[3] / "config" / "schema.yaml"


def _path(err) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in err.absolute_path]
    return ".".join(parts).replace(".[", "[") or "(top level)"


def _message(err) -> str:
    """One line for a jsonschema error, naming the key."""
    where = _path(err)
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {}))) or "none"
        return f"{where}: unknown key {', '.join(repr(e) for e in extra)} (allowed: {allowed})"
    if err.validator == "not" and set(err.validator_value) == {"multipleOf"}:
        return f"{where}: must not be a multiple of {err.validator_value['multipleOf']} (got {err.instance!r})"
    return f"{where}: {err.message}"


def _with_defaults(validator_class, defs: dict):
    """A validator that also fills in ``default`` values (as snakemake.utils.validate does), also
    where a property is a ``$ref`` to a definition that has the default."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def default_of(sub):
        if not isinstance(sub, dict):
            return None
        if "default" in sub:
            return sub
        ref = sub.get("$ref", "")
        if ref.startswith("#/$defs/"):
            target = defs.get(ref.split("/")[-1], {})
            return target if "default" in target else None
        return None

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                d = default_of(sub)
                if d is not None and prop not in instance:
                    instance[prop] = copy.deepcopy(d["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _deepest(err):
    """For oneOf/anyOf/allOf errors, the most specific sub-error (names the real key)."""
    while err.context:
        err = max(err.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return err


def _schema(schema_path: Path = SCHEMA) -> dict:
    """The schema (read once per process whichever way the path is given; callers never change it)."""
    return _read_schema(Path(schema_path).resolve())


@functools.lru_cache(maxsize=None)
def _read_schema(schema_path: Path) -> dict:
    # libyaml's safe loader where PyYAML has it: every measuring job reads the schema
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(schema_path.read_text(), Loader=loader)  # noqa: S506 (a safe loader)
    except (OSError, yaml.YAMLError) as exc:
        raise BenchcastError(f"{schema_path}: cannot read schema ({exc})") from None


#: The schema's ``format: size`` ($defs/size): whole bytes a record's 64-bit column holds (0.4B, 0.1K
#: or 99999999999TB pass its pattern).
_FORMATS = jsonschema.FormatChecker(formats=())


@_FORMATS.checks("size", raises=BenchcastError)
def _whole_bytes(value) -> bool:
    try:
        parse_size(value)
    except BenchcastError:
        return True  # no size at all: the schema's pattern says so
    parse_size(value, what="size", whole=True)
    return True


def _validator(schema: dict):
    cls = _with_defaults(jsonschema.validators.validator_for(schema), schema.get("$defs", {}))
    return cls(schema, format_checker=_FORMATS)


def defaults(definition: str, schema_path: Path = SCHEMA) -> dict:
    """The schema's defaults of one definition (``$defs/<definition>``), e.g. ``defaults("mariadb")``
    -> {"buffer_pool_size": "8M", ...}: for code that runs outside a validated config (tests, the
    command line), so that defaults still live only in the schema."""
    schema = _schema(schema_path)
    if definition not in schema.get("$defs", {}):
        raise BenchcastError(f"{schema_path}: no definition {definition!r}")
    sub = {"$schema": schema.get("$schema"), "$defs": schema["$defs"], **schema["$defs"][definition]}
    out: dict = {}
    _validator(sub).validate(out)
    return out


def default_of(definition: str, key: str):
    """The schema's default of one key of a definition (``$defs/<definition>``), e.g.
    ``default_of("figure", "iodepth")`` -> 1: for a mapping given outside a validated config."""
    prop = _schema()["$defs"].get(definition, {}).get("properties", {}).get(key)
    if not isinstance(prop, dict) or "default" not in prop:
        raise BenchcastError(f"{SCHEMA}: $defs/{definition} has no default for {key!r}")
    return prop["default"]


@functools.lru_cache(maxsize=None)
def device_keys(kind: str) -> tuple[frozenset, tuple, frozenset]:
    """What the schema's device definition (``$defs/device``) allows for one device kind:
    (allowed keys, required keys, keys that must be booleans). The device code checks specs given
    outside a validated config (the command line, tests) against these, not a list of its own."""
    schema = _schema()
    for branch in schema["$defs"]["device"].get("allOf", []):
        if branch.get("if", {}).get("properties", {}).get("kind", {}).get("const") == kind:
            props = branch["then"].get("properties", {})
            booleans = frozenset(k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "boolean")
            return frozenset(props), tuple(branch["then"].get("required", ())), booleans
    raise BenchcastError(f"{SCHEMA}: $defs/device has no kind {kind!r}")


def device_default(kind: str, key: str):
    """The schema's default of one key of one device kind (``$defs/device``), for device specs given
    outside a validated config (the command line, tests)."""
    for branch in _schema()["$defs"]["device"].get("allOf", []):
        if branch.get("if", {}).get("properties", {}).get("kind", {}).get("const") == kind:
            prop = branch["then"].get("properties", {}).get(key)
            if isinstance(prop, dict) and "default" in prop:
                return prop["default"]
    raise BenchcastError(f"{SCHEMA}: $defs/device kind {kind!r} has no default for {key!r}")


def _check(validator, instance, prefix: str) -> None:
    """Raise the most specific schema error of ``instance`` as one line starting with ``prefix``
    (a prefix that names the instance, ``source NAME: ``, stands for the top level)."""
    errors = sorted(validator.iter_errors(instance), key=lambda e: (len(list(e.absolute_path)), e.path))
    if not errors:
        return
    err = errors[-1]
    expected = err.schema.get("x-expected") if isinstance(err.schema, dict) else None
    if err.validator == "format" and err.cause is not None:  # the format's own words
        line = f"{_path(err)}: {str(err.cause).removeprefix('size: ')}"
    elif expected:  # a value of a described shape (a size): say so in words, not as a regex
        line = f"{_path(err)}: {err.instance!r} is not {expected}"
    else:
        if err.validator in ("oneOf", "anyOf", "allOf") and err.context:
            err = _deepest(err)
        line = _message(err)
    if prefix != "config: ":
        line = line.removeprefix("(top level): ")
    raise BenchcastError(f"{prefix}{line}")


def validate(config: dict, schema_path: Path = SCHEMA) -> dict:
    """Validate ``config`` in place (defaults filled in) and return it; raise BenchcastError."""
    schema = _schema(schema_path)
    if not isinstance(config, dict):
        raise BenchcastError("config: not a mapping")
    _check(_validator(schema), config, "config: ")
    for name, study in config["studies"].items():
        check_study(name, study)
    return config


@functools.lru_cache(maxsize=None)
def _source_validator():
    schema = _schema()
    return _validator({"$schema": schema.get("$schema"), "$defs": schema["$defs"], "$ref": "#/$defs/source"})


def check_source(source: dict, name: str) -> dict:
    """One source's settings as the schema gives them (``$defs/source``): a copy of ``source`` with
    the defaults filled in, for code handed a source outside a validated config (tests, the command
    line); an error is one line ``source NAME: KEY: ...``."""
    out = copy.deepcopy(source)
    if not isinstance(out, dict):
        raise BenchcastError(f"source {name}: not a mapping")
    _check(_source_validator(), out, f"source {name}: ")
    return out


def _distinct_sizes(sizes, where: str) -> None:
    """A list of sizes names each once, however written (``48GB`` and ``48000MB`` are one size: a
    table would have two rows of it)."""
    seen: dict = {}
    for i, size in enumerate(sizes or []):
        j = seen.setdefault(parse_size(size, what=f"{where}[{i}]"), i)
        if j != i:
            raise BenchcastError(f"{where}[{i}]: {size!r} is the size of [{j}] ({sizes[j]!r}): give each size once")


def _distinct_labels(name: str, devices: dict, targets: dict) -> None:
    """The charts name each device by its label (its id where it has none) beside the spec cards by
    theirs: two of one name would be drawn as one."""
    seen = {t: f"spec card {t}" for t in targets}
    for dev, spec in devices.items():
        label = spec.get("label", dev) if isinstance(spec, dict) else dev
        if label in seen and dev not in targets:
            raise BenchcastError(f"config: studies.{name}.devices.{dev}.label: {label!r} names {seen[label]} too: "
                                 f"the charts would draw both as one; give each its own label")
        seen[label] = f"device {dev}"


def check_study(name: str, study: dict) -> None:
    """Cross-key checks of one study (after the schema filled in the defaults). A trim must leave
    runs of every source of 3 or more repeats (with 1 or 2 repeats there is nothing to trim: the trim
    is reduced, as aggregate.trim says)."""
    devices = study.get("devices", {})
    folded: dict = {}
    for dev in devices:  # their folders would be one on a file system that ignores case
        if folded.setdefault(dev.casefold(), dev) != dev:
            one, other = sorted((dev, folded[dev.casefold()]))
            raise BenchcastError(f"config: studies.{name}.devices: {one!r} and {other!r} differ only in case; "
                                 f"give each device an id of its own")
    _distinct_labels(name, devices, study.get("targets") or {})
    trim = study["aggregate"]["trim"]
    _distinct_sizes(study.get("extrapolate", {}).get("data_sizes"), f"config: studies.{name}.extrapolate.data_sizes")
    _distinct_sizes(study["features"].get("block_sizes"), f"config: studies.{name}.features.block_sizes")
    for src_name, src in study["sources"].items():
        for key in ("data_sizes", "block_sizes"):
            if isinstance(src.get(key), list):
                _distinct_sizes(src[key], f"config: studies.{name}.sources.{src_name}.{key}")
        repeats = src.get("repeats")
        if isinstance(repeats, int) and repeats > 2 and 2 * trim >= repeats:
            raise BenchcastError(
                f"config: studies.{name}.aggregate.trim: {trim} drops all {repeats} runs of source "
                f"{src_name} (it drops {trim} largest and {trim} smallest); use trim {(repeats - 1) // 2} "
                f"or fewer, or more repeats"
            )
        most = src.get("max_repeats")
        if isinstance(repeats, int) and isinstance(most, int) and most < repeats:
            raise BenchcastError(
                f"config: studies.{name}.sources.{src_name}.max_repeats: {most} is below repeats "
                f"({repeats}); repeat-until-stable adds runs after the first {repeats}"
            )
        for dev in src.get("devices", []) or []:
            if dev not in devices:
                raise BenchcastError(
                    f"config: studies.{name}.sources.{src_name}.devices: unknown device {dev!r}"
                )
        if src.get("type") in ("fio_json", "pkb"):
            for dev in src["files"]:
                if devices.get(dev, {}).get("kind") != "imported":
                    raise BenchcastError(
                        f"config: studies.{name}.sources.{src_name}.files: {dev!r} is not an imported "
                        f"device of the study (add it under devices with kind: imported)"
                    )
        if src.get("type") == "ycsb" and "mariadb" in src.get("engines", []):
            _check_mariadb(src["mariadb"], f"config: studies.{name}.sources.{src_name}.mariadb")
    if "targets" not in study:
        if has_series(study):
            raise BenchcastError(f"config: studies.{name}: 'targets' is required where the study has "
                                 f"application results (a study of device figures alone needs none)")
        return _check_report(name, study)
    try:
        check_targets(study["targets"], study["features"])
    except BenchcastError as exc:
        raise BenchcastError(f"config: studies.{name}.{exc}") from None
    _check_report(name, study)


#: InnoDB's page size, as mariadb-install-db makes the datadir.
INNODB_PAGE = 16 << 10


def _check_mariadb(server: dict, where: str) -> None:
    """A MariaDB server's settings (``$defs/mariadb``): a buffer pool InnoDB starts with, whose pages
    outnumber the free pages the page cleaner keeps (or every clean page is evicted), and no option
    that sets one of the named settings a second time."""
    pool = server["buffer_pool_size"]
    if parse_size(pool, what="buffer_pool_size") < 6 << 20:  # InnoDB refuses to start below
        raise BenchcastError(f"{where}.buffer_pool_size: {pool} is below InnoDB's minimum of 6 MiB (with 16K pages)")
    pages = parse_size(pool, what="buffer_pool_size") // INNODB_PAGE
    if server["lru_scan_depth"] >= pages:
        raise BenchcastError(f"{where}.lru_scan_depth: {server['lru_scan_depth']} is not below the {pages} pages of "
                             f"buffer_pool_size {pool}: InnoDB's page cleaner would evict every clean page")
    named = {k.replace("_", "-"): k for k in server if k != "options"}  # innodb-<name> as mariadbd spells it
    for key in server.get("options") or {}:
        if own := named.get(str(key).replace("_", "-").removeprefix("innodb-")):
            raise BenchcastError(f"{where}.options: {key!r} is set by mariadb.{own}; set it there")


def _check_report(name: str, study: dict) -> None:
    report = study.get("report", {})
    for key in report.get("focus", {}):
        if key not in ("benchmark", "engine", "workload", "op", "metric"):
            raise BenchcastError(f"config: studies.{name}.report.focus: unknown key {key!r}")
    check_names(name, study)


def check_names(name: str, study: dict) -> None:
    """Names one key gives that another must know: the focus of the report is a screened series,
    a pairing rule pairs a screened metric with feature workloads, a spec card is no device of the
    study, a simple regression needs no more devices than the study has."""
    if not has_series(study):  # device figures alone: no series, no regression, no focus
        return
    where = f"config: studies.{name}"
    focus = study.get("report", {}).get("focus", {})
    metrics = study["series"]["metrics"]
    if "metric" in focus and focus["metric"] not in metrics:
        raise BenchcastError(f"{where}.report.focus.metric: {focus['metric']!r} is not one of series.metrics {metrics}")
    benchmarks = study["series"].get("benchmarks")
    if "benchmark" in focus and benchmarks and focus["benchmark"] not in benchmarks:
        raise BenchcastError(f"{where}.report.focus.benchmark: {focus['benchmark']!r} is not one of "
                             f"series.benchmarks {benchmarks}")
    for i, rule in enumerate(study.get("pairing") or []):
        if "metric" in rule["when"] and rule["when"]["metric"] not in metrics:
            raise BenchcastError(f"{where}.pairing[{i}].when.metric: {rule['when']['metric']!r} is not one of "
                                 f"series.metrics {metrics}")
    _check_focus_measured(where, study)
    devices = study.get("devices") or {}
    folded = {d.casefold(): d for d in devices}
    for target in study.get("targets") or {}:
        if target.casefold() in folded:
            same = "" if target in devices else f" ({folded[target.casefold()]}, but for case)"
            raise BenchcastError(f"{where}.targets.{target}: a device of the study has this name{same}; give the "
                                 f"spec card a name of its own (the tables name devices and targets in one column)")
    least = study["screen"]["min_devices"]
    if devices and least > len(devices):
        raise BenchcastError(f"{where}.screen.min_devices: {least} is more than the study's {len(devices)} "
                             f"devices ({', '.join(devices)}): no regression could be fitted")


def _check_focus_measured(where: str, study: dict) -> None:
    """Where every application result of a study is a run benchcast makes (YCSB, out of core), the
    focus and the pairing rules are checked against the names of its runs (:func:`measured_series`);
    a study that imports results is checked against its files before any job runs (rules/checks.smk)."""
    series = measured_series(study["sources"])
    if series is not None:
        check_series_names(where, study, series)


#: The focus keys an application result's series is named by, in the order of a series tuple.
FOCUS_KEYS = ("benchmark", "engine", "workload", "op")


def measured_series(sources: dict) -> set | None:
    """(benchmark, engine, workload, op) of the application results the study's own runs make (None
    in a field: not known before they run): YCSB engines and workloads (and ``load``, the load
    phase, where it is measured), out-of-core modes as engines.
    None where a source imports application results (their names are in its files)."""
    out = set()
    for src in sources.values():
        kind = src.get("type")
        if kind == "ycsb":  # its load phase is a series too, unless a fast load measures nothing
            workloads = [*src.get("workloads", []), *([] if src.get("fast_load") else ["load"])]
            out |= {("ycsb", e, w, None) for e in src.get("engines", []) for w in workloads}
        elif kind == "ooc":
            out |= {("ooc", m, None, None) for m in src.get("modes", [])}
        elif has_series({"sources": {"s": src}}):
            return None
    return out


def check_series_names(where: str, study: dict, series: set) -> None:
    """The names the report's focus gives application results, against the study's ``series``
    (:func:`check_focus`). (A pairing rule's ``when`` is not checked so: one pairing may serve
    several studies, each with only some of its ops.)"""
    check_focus(where, study.get("report", {}).get("focus", {}), series)


def check_focus(where: str, focus: dict, series: set, key: str = "report.focus", together: bool = True) -> None:
    """The report's focus (or another mapping of series names, ``key``) names application results
    the study has (``series``: (benchmark, engine, workload, op) tuples, None in a field where any
    name may come): each of its keys one of the names of its field, and (``together``) the keys
    together some series; else one line naming the key."""
    if not series:
        return
    for k, name in enumerate(FOCUS_KEYS):
        names = {s[k] for s in series}
        if name in focus and None not in names and str(focus[name]) not in names:
            raise BenchcastError(f"{where}.{key}.{name}: {focus[name]!r} is not one of the study's "
                                 f"{name}s {sorted(names)}")
    wanted = [(k, str(focus[name])) for k, name in enumerate(FOCUS_KEYS) if name in focus]
    if together and not any(all(s[k] is None or s[k] == v for k, v in wanted) for s in series):
        named = ", ".join(f"{FOCUS_KEYS[k]} {v}" for k, v in wanted)
        raise BenchcastError(f"{where}.{key}: no application result of the study is {named} "
                             f"(each name is one of the study's, but not together)")


#: Source types whose records hold application results (screening targets).
APP_SOURCE_TYPES = {"soga2018", "ycsb", "records", "ycsb_output", "ooc"}


def has_series(study: dict) -> bool:
    """Whether a study's sources bring application results (PKB files with YCSB samples count)."""
    return any(src.get("type") in APP_SOURCE_TYPES or (src.get("type") == "pkb" and src.get("ycsb"))
               for src in study["sources"].values())


def card_figure_ids(name: str, card: dict) -> list[tuple[int, Figure]]:
    """(index, figure) of each figure of spec card ``name`` (:class:`benchcast.core.datasheet.Figure`,
    named as the predictions name it: a figure's op is its ``op`` key, else the op its workload
    measures); a figure of a mixed workload that does not say its op, and a figure given twice in one
    card, are refused."""
    out, seen = [], {}
    for i, fig in enumerate(card["figures"]):
        where = f"targets.{name}.figures[{i}]"
        bs = parse_size(fig["block_size"], what=f"{where}.block_size")
        op = fig.get("op") or rw_op(fig["workload"])
        if op is None:
            raise BenchcastError(f"{where}: workload {fig['workload']!r} is mixed: give its op (read or write)")
        qd, jobs = (int(fig.get(k, default_of("figure", k))) for k in ("iodepth", "numjobs"))
        f = Figure(fig["workload"], bs, op, fig["metric"], qd, jobs, fig.get("ioengine") or "")
        if f.name in seen:  # one card holds one value of a figure
            raise BenchcastError(f"{where}: figure {f.name} is given twice (first as figures[{seen[f.name]}])")
        seen[f.name] = i
        out.append((i, f))
    return out


def _card_figures(name: str, card: dict) -> dict:
    """A card's figures (:func:`card_figure_ids`) -> each value in its metric's canonical unit."""
    return {f: figure_value(card["figures"][i]["value"], f.metric, where=f"targets.{name}.figures[{i}].value")
            for i, f in card_figure_ids(name, card)}


def check_targets(targets: dict, features: dict) -> None:
    """Refuse a target none of whose figures, given or fixed by the datasheet rules
    (:mod:`benchcast.core.datasheet`), is a candidate feature of the study; each figure is read as
    the predictions read it (:func:`benchcast.features.spec_features`: a figure of a mixed workload
    (``randrw``) that does not say its op, a value that is no finite quantity above 0, a figure
    given twice in one card)."""
    cards = {name: _card_figures(name, card) for name, card in targets.items()}
    bench_bs = {parse_size(s, what="features.block_sizes") for s in features["block_sizes"]}
    grid = {(w, bs, m) for w in features["workloads"] for bs in bench_bs for m in features["metrics"]}
    for name, card in targets.items():
        if not serving(cards[name], grid):
            figs = ", ".join(f"{f['workload']}/{f['block_size']}/{f['metric']}" for f in card["figures"])
            raise BenchcastError(
                f"targets.{name}: none of its figures ({figs}), nor any the datasheet rules fix from them, is a "
                f"candidate feature (features: workloads {features['workloads']}, block_sizes "
                f"{features['block_sizes']}, metrics {features['metrics']})"
            )


def unused_cards(targets: dict, measured) -> list[str]:
    """The spec cards none of whose figures, given or fixed by the datasheet rules, the study measures
    or imports: ``measured`` holds (workload, block size in bytes, metric or None for any metric) of
    the study's device figures."""
    return [name for name, card in targets.items() if not serving(_card_figures(name, card), measured)]


def unused_figures(targets: dict, measured) -> list[str]:
    """The figures, ``NAME.figures[i]``, that no device of the study has and from which the datasheet
    rules fix none it has, of the cards some of whose figures serve (``measured``: as for
    :func:`unused_cards`): no model can use them."""
    out = []
    for name, card in targets.items():
        given = list(_card_figures(name, card))
        used = set().union(*serving(dict.fromkeys(given, 1.0), measured).values())
        if used:
            out += [f"{name}.figures[{i}]" for i, f in enumerate(given) if f not in used]
    return out


def unused_features(features: dict, measured) -> list[tuple[str, str]]:
    """The feature names no figure of the study has, as (key, what): a workload, block size or
    metric the study lists that none of its sources measures or imports (``measured``: as for
    :func:`unused_cards`; a figure of metric None, a measured grid's, has every metric)."""
    have = [{f[k] for f in measured} for k in range(3)]
    sizes = {size_label(bs): bs for bs in sorted(have[1])}
    out = []
    for key, names, known, read in (("workloads", features["workloads"], have[0], str),
                                    ("block_sizes", features["block_sizes"], set(sizes.values()),
                                     lambda bs: parse_size(bs, what="features.block_sizes")),
                                    ("metrics", features["metrics"], None if None in have[2] else have[2], str)):
        if known is None:
            continue
        its = ", ".join(sizes) if key == "block_sizes" else ", ".join(sorted(map(str, known)))
        out += [(f"{key}[{i}]", f"{name!r} is not among the {key.replace('_', ' ')} the study's sources "
                 f"measure or import ({its or 'none'})") for i, name in enumerate(names) if read(name) not in known]
    return out
