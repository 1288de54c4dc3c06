"""The run plan: the runs of the default studies and of a small one, and the one path layout, which
formats and parses every planned path (and agrees with the rules' wildcard constraints)."""
import copy
import re
from pathlib import Path

import pytest
import yaml
from snakemake.io import regex_from_filepattern

from analysis_util import CONFIG
from benchcast import BenchcastError, config
from benchcast.sources.run import fio, ooc, ycsb
from benchcast.sources import plan

ROOT = Path(__file__).resolve().parents[1]


def measured(study: dict) -> list[str]:
    return [d for d, spec in study.get("devices", {}).items() if spec["kind"] != "imported"]


def build(name: str, study: dict, usable=None, extra_runs: int = 0) -> plan.StudyPlan:
    return plan.build(name, study, measured(study) if usable is None else usable, grid=fio.expand_grid,
                      extra_runs=extra_runs)


@pytest.fixture(scope="module")
def default_plans() -> dict[str, plan.StudyPlan]:
    cfg = config.validate(copy.deepcopy(CONFIG))
    return {name: build(name, study) for name, study in cfg["studies"].items()}


def small_study(**sources) -> dict:
    """A validated study of three devices (tmpfs, a directory, an imported one) and ``sources``."""
    cfg = {"studies": {"small": {
        "devices": {"ram": {"kind": "tmpfs", "size": "64M"}, "here": {"kind": "dir", "path": "."},
                    "paper": {"kind": "imported"}},
        "sources": sources,
        "targets": {"t": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean",
                                       "value": "10 us"}]}},
        "features": {"workloads": ["randread"], "block_sizes": ["4K"], "metrics": ["lat_mean"]},
    }}}
    return config.validate(cfg)["studies"]["small"]


SMALL = {
    "grid": {"type": "fio", "rw": ["randread", "randrw"], "block_sizes": ["4K", "16K"], "rwmixread": [30, 70],
             "repeats": 2, "max_repeats": 3, "stable_cv": 5, "devices": ["here"]},
    "kv": {"type": "ycsb", "engines": ["rocksdb"], "workloads": ["read-only"], "data_sizes": ["4MB", "8MB"],
           "repeats": 2},
    "oc": {"type": "ooc", "working_sets": ["16M"], "memory_limit": "32M", "repeats": 1},
}


def test_default_plans_count_every_run_of_the_config(default_plans):
    assert default_plans["paper"].runs == ()  # imported alone: nothing measured
    local = default_plans["local"]
    count = {t: len(local.select(type=t)) for t in plan.MEASURED}
    # fio: 6 devices x (3 randread cells, 4K-64K, and the 16K and 64K randwrites) x 3; commit: 6 x 2 x 3; on
    # the two out-of-core tiers alone (zcap, loop): 2 x 2 reads (4K, 64K) x 3 and 2 x one 16K commit x 3
    # ycsb: 6 devices x 2 engines x 3 sizes x 3; ooc: 19 (device, mode) pairs x 2
    assert count == {"fio": 6 * 5 * 3 + 6 * 2 * 3 + 2 * 2 * 3 + 2 * 1 * 3, "ycsb": 6 * 2 * 3 * 3,
                     "ooc": 19 * 2}
    assert {r.mode for r in local.select(device="fuse150", type="ooc")} == {"memory", "mmap"}
    assert local.devices("ooc") == sorted(["zram", "zcap", "fuse150", "disk", "loop", "fuse400", "slow"])
    # a device's runs: fio first, then YCSB, then ooc (the order its teardown lists them in)
    types = [r.type for r in local.select(device="disk")]
    assert types == sorted(types, key=plan.MEASURED.index)
    outputs = local.outputs()
    assert len(outputs) == len(set(outputs)) == len(local.runs)


def test_every_planned_path_round_trips(default_plans):
    small = build("small", small_study(**copy.deepcopy(SMALL)))
    runs = [r for p in [*default_plans.values(), small] for r in p.runs]
    assert {r.type for r in runs} == set(plan.MEASURED)
    for run in runs:
        for suffix in plan.SUFFIXES[run.type]:
            for root in ("results", "logs", "/elsewhere/results"):
                path = run.path(suffix, root=root)
                assert plan.parse(path, suffix, root=root.rsplit("/", 1)[-1]) == run, path
                assert path == plan.pattern(run.type, suffix, root=root).format(**vars(run))
        assert plan.parse(run.path()) == run
        assert plan.parse("results/other/" + run.path()) == run  # a tree inside another


def test_the_rules_wildcard_constraints_read_a_planned_path_as_parse_does(default_plans):
    cons = plan.wildcard_constraints(["paper", "local"])
    for kind in plan.MEASURED:
        constrained = re.sub(r"\{(\w+)\}", lambda m: "{%s,%s}" % (m[1], cons[m[1]]), plan.pattern(kind))
        regex = re.compile(regex_from_filepattern(constrained))
        for run in default_plans["local"].select(type=kind)[:50]:
            got = regex.match(run.path()).groupdict()
            assert plan.parse(run.path()) == plan.Run(type=kind, **{
                k: int(v) if k in ("repeat", "size") else v for k, v in got.items()})


def test_other_files_are_no_runs():
    for path in ["results/local/fio/fio/disk/randread-4K-abc123/quality-run0.json",
                 "results/local/records/fio/fio.csv", "results/local/devices/disk/provisioned.json",
                 "results/local/ycsb/ycsb/disk/cassandra/4000000/run0.csv",  # no engine of ours
                 "results/local/ooc/ooc/disk/memory/run0.json",
                 "results/local/fio/fio/disk/randread-4K-abc123/run0.json.tmp"]:
        assert plan.parse(path) is None, path
    assert plan.parse("results/local/fio/fio/disk/randread-4K-abc123/run0.fio") is None  # not the output
    assert plan.parse("results/local/fio/fio/disk/randread-4K-abc123/run0.fio", ".fio").cell == "randread-4K-abc123"


def test_a_small_study_plans_devices_modes_and_extra_runs():
    study = small_study(**copy.deepcopy(SMALL))
    p = build("small", study, usable=["ram", "here"], extra_runs=1)
    grid = p.select(source="grid")
    # one device; randread x 2 sizes + randrw x 2 sizes x 2 mixes = 6 cells; max_repeats 3 + 1 extra run
    assert {r.device for r in grid} == {"here"} and len({r.cell for r in grid}) == 6
    assert sorted({r.repeat for r in grid}) == [0, 1, 2, 3]
    cell = p.cell("grid", "here", grid[0].cell)
    assert cell["cell"] == grid[0].cell and cell["repeats"] == 2
    kv = p.select(source="kv")
    assert {(r.device, r.engine, r.size) for r in kv} == {
        (d, "rocksdb", s) for d in ("ram", "here") for s in (4_000_000, 8_000_000)}
    assert sorted({r.repeat for r in kv}) == [0, 1, 2]  # repeats 2 + 1 extra run
    # ooc: no extra runs; on tmpfs the in-memory baseline alone, on a directory every mode
    oc = p.select(source="oc")
    assert {(r.device, r.mode) for r in oc} == {("ram", "memory")} | {("here", m) for m in ooc.MODES}
    assert {r.repeat for r in oc} == {0}
    # a device this machine cannot have is planned nowhere
    assert {r.device for r in build("small", study, usable=["here"]).runs} == {"here"}


@pytest.mark.parametrize("source, devices, message", [
    ("kv", ["paper"], r"^config: studies.small.sources.kv: source kv: devices: 'paper' is an imported device; "
                      r"ycsb cannot measure it$"),
    ("oc", ["ghost"], r"^config: studies.small.sources.oc: source oc: devices: 'ghost' is not a device of the study$"),
    ("grid", ["paper"], r"^config: studies.small.sources.grid: source grid: devices: 'paper' is an imported device; "
                        r"fio cannot measure it$"),
])
def test_a_source_naming_a_device_it_cannot_measure_is_refused(source, devices, message):
    study = small_study(**copy.deepcopy(SMALL))
    study["sources"][source]["devices"] = devices  # after validation, which refuses unknown ids itself
    with pytest.raises(BenchcastError, match=message):
        build("small", study)


def test_vocabularies_are_the_modules_and_the_schema_agrees():
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
    enums = {}

    def walk(node):
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                if isinstance(sub, dict) and "enum" in sub.get("items", {}):
                    enums.setdefault(key, []).append(sub["items"]["enum"])
            for sub in node.values():
                walk(sub)
        elif isinstance(node, list):
            for sub in node:
                walk(sub)

    walk(schema)
    assert enums["engines"] == [list(ycsb.ENGINES)]
    assert enums["modes"] == [list(ooc.MODES)]
    assert enums["programs"] == [list(ooc.PROGRAMS)]
    cons = plan.wildcard_constraints(["a.b", "c"])
    assert cons["study"] == r"a\.b|c"
    assert cons["engine"].split("|") == list(ycsb.ENGINES) and cons["mode"].split("|") == list(ooc.MODES)
    assert cons["program"].split("|") == list(ooc.PROGRAMS)


def test_run_paths_are_spelled_in_plan_alone():
    """No rule file or script spells a run's path: they take it from benchcast.sources.plan."""
    files = [*ROOT.glob("rules/*.smk"), *ROOT.glob("scripts/*.py"),
             *(p for p in ROOT.glob("scripts/benchcast/**/*.py") if p.name != "plan.py")]
    spelled = [f"{p.relative_to(ROOT)}: {line.strip()}" for p in files
               for line in p.read_text().splitlines()
               if re.search(r"/run\{repeat\}|run\(\?P<repeat>|/run\\d", line) and not line.lstrip().startswith("#")]
    assert not spelled, spelled
