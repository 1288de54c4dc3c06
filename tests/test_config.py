import copy
from pathlib import Path

import pytest
import yaml

from analysis_util import CONFIG
from benchcast import BenchcastError, config


def check(mutate, pattern):
    cfg = copy.deepcopy(CONFIG)
    mutate(cfg)
    with pytest.raises(BenchcastError, match=pattern) as info:
        config.validate(cfg)
    assert "\n" not in str(info.value)


def test_default_config_is_valid_and_gets_defaults():
    cfg = config.validate(copy.deepcopy(CONFIG))
    assert cfg["studies"]["paper"]["screen"]["min_devices"] == 3


def test_mistyped_key_named():
    check(lambda c: c["studies"]["paper"].__setitem__("aggregat", {"trim": 1}),
          r"config: studies.paper: unknown key 'aggregat'")
    check(lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].__setitem__("blocksize", "4K"),
          r"studies.paper.targets.S-SCM.figures\[0\]: unknown key 'blocksize'")
    check(lambda c: c["studies"]["paper"]["sources"]["soga2018"].__setitem__("fios", "x"),
          r"studies.paper.sources.soga2018: unknown key 'fios'")


def test_missing_key_named():
    check(lambda c: c["studies"]["paper"].pop("targets"),
          r"^config: studies.paper: 'targets' is required where the study has application results")


def test_a_study_of_device_figures_alone_needs_no_targets():
    cfg = copy.deepcopy(CONFIG)
    cfg["studies"] = {"figs": {"devices": {"a": {"kind": "imported"}},
                               "sources": {"theirs": {"type": "fio_json", "files": {"a": "somewhere"}}},
                               "features": cfg["studies"]["paper"]["features"]}}
    cfg.pop("run", None)
    assert "targets" not in config.validate(cfg)["studies"]["figs"]
    check(lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].pop("value"),
          r"figures\[0\]: 'value' is a required property")


def test_wrong_type_named():
    check(lambda c: c["studies"]["paper"]["aggregate"].__setitem__("trim", "one"),
          r"studies.paper.aggregate.trim: 'one' is not of type 'integer'")
    check(lambda c: c["studies"]["paper"]["extrapolate"].__setitem__("data_sizes", ["lots"]),
          r"studies.paper.extrapolate.data_sizes\[0\]")


def test_even_nested_top_named():
    check(lambda c: c["studies"]["local"].setdefault("validate", {}).__setitem__("nested_top", 4),
          r"^config: studies.local.validate.nested_top: must not be a multiple of 2 \(got 4\)$")


def test_nested_share_field_named():
    check(lambda c: c["studies"]["local"].setdefault("validate", {}).__setitem__("nested_share", ["engine"]),
          r"^config: studies.local.validate.nested_share\[0\]: 'engine' is not one of")
    cfg = config.validate(copy.deepcopy(CONFIG))
    assert cfg["studies"]["local"]["validate"]["nested_share"] == ["data_size", "workload"]


def test_removed_levers_are_unknown_keys():
    """cpu_latency_us and a fio source's memory_limit measured nothing better (docs/method.md): a
    config that still names them is told so, by key."""
    check(lambda c: c["studies"]["local"]["sources"]["ycsb"].__setitem__("cpu_latency_us", 0),
          r"^config: studies.local.sources.ycsb: unknown key 'cpu_latency_us'")
    check(lambda c: c["studies"]["local"]["sources"]["fio"].__setitem__("memory_limit", "32M"),
          r"^config: studies.local.sources.fio: unknown key 'memory_limit'")


def test_fio_defaults_come_from_the_schema():
    cfg = config.validate(copy.deepcopy(CONFIG))
    fio = cfg["studies"]["local"]["sources"]["fio"]  # the config sets neither: the schema's
    assert (fio["numjobs"], fio["rwmixread"], fio["extra"], fio["per_device"]) == (1, 50, {}, {})
    assert fio["per_kind"] == {"tmpfs": {"direct": False}, "fsdax": {"ioengine": "libpmem"}}
    # a kind's entry keeps the kind defaults it does not set
    src = config.check_source({"type": "fio", "rw": ["read"], "block_sizes": ["4K"],
                               "per_kind": {"tmpfs": {"iodepth": 4}}}, "f")
    assert src["per_kind"] == {"tmpfs": {"iodepth": 4, "direct": False}, "fsdax": {"ioengine": "libpmem"}}
    assert src["ioengine"] == "libaio" and src["runtime"] == 30 and src["size"] == "1G"


def test_target_without_usable_feature():
    # a 99th percentile: not among the paper's metrics, and no datasheet rule fixes one from it
    check(lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].update(metric="clat_p99", value="5 us"),
          r"studies.paper.targets.S-SCM: none of its figures \(randwrite/64K/clat_p99\), nor any the datasheet rules fix")
    # a sequential rate alone fixes no random figure
    check(lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].update(workload="read", metric="bw",
                                                                                  block_size="128K", value="2 GB/s"),
          r"studies.paper.targets.S-SCM: none of its figures")


def test_a_card_of_iops_is_usable_through_the_rules_that_fix_its_latency():
    """IOPS at queue depth 1 fix the mean latency (Little's law) and the bandwidth: the paper's
    metrics, though it has no IOPS of its own."""
    cfg = copy.deepcopy(CONFIG)
    cfg["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].update(metric="iops", value="20000 IOPS")
    config.validate(cfg)


def test_mariadb_buffer_pool_below_innodb_minimum():
    check(lambda c: c["studies"]["local"]["sources"]["ycsb"].__setitem__("mariadb", {"buffer_pool_size": "4M"}),
          r"studies.local.sources.ycsb.mariadb.buffer_pool_size: 4M is below InnoDB's minimum")
    check(lambda c: c["studies"]["local"]["sources"]["ycsb"].__setitem__(
        "mariadb", {"buffer_pool_size": "6M", "lru_scan_depth": 384}),
        r"mariadb.lru_scan_depth: 384 is not below the 384 pages of buffer_pool_size 6M: InnoDB's page cleaner")
    check(lambda c: c["studies"]["local"]["sources"]["ycsb"].__setitem__(
        "mariadb", {"options": {"innodb_lru_scan_depth": 2000}}),
        r"mariadb.options: 'innodb_lru_scan_depth' is set by mariadb.lru_scan_depth; set it there")


def test_defaults_live_in_the_schema():
    """The MariaDB settings a study leaves out are the schema's, and code outside a config reads them there."""
    cfg = config.validate(copy.deepcopy(CONFIG))
    assert config.defaults("mariadb") == {"buffer_pool_size": "8M", "log_file_size": "8M", "lru_scan_depth": 100}
    # the default study sets its own buffer pool and leaves the log file size to the schema
    assert cfg["studies"]["local"]["sources"]["ycsb"]["mariadb"] == {"buffer_pool_size": "12M", "log_file_size": "8M",
                                                                       "lru_scan_depth": 100}
    with pytest.raises(BenchcastError, match="no definition 'nope'"):
        config.defaults("nope")


def test_target_figure_op_is_a_config_key():
    def mixed(c, op):
        fig = {"workload": "randrw", "block_size": "4K", "metric": "lat_mean", "value": 5}
        if op:
            fig["op"] = op
        c["studies"]["paper"]["targets"]["S-SCM"]["figures"].append(fig)

    cfg = copy.deepcopy(CONFIG)
    mixed(cfg, "read")
    config.validate(cfg)
    check(lambda c: mixed(c, None), r"studies.paper.targets.S-SCM.figures\[1\]: workload 'randrw' is mixed")
    check(lambda c: mixed(c, "both"), r"'both' is not one of \['read', 'write', 'sync'\]")


def test_precise_preset_is_a_valid_overlay_of_the_default():
    """config/precise.yaml, merged over config/config.yaml as `--configfile` does, is valid and
    makes the local study longer and repeated until stable."""
    from pathlib import Path

    import yaml
    from snakemake.utils import update_config

    root = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    update_config(cfg, yaml.safe_load((root / "config" / "precise.yaml").read_text()))
    config.validate(cfg)
    srcs = cfg["studies"]["local"]["sources"]
    assert srcs["ycsb"]["maxexecutiontime"] > 2 and srcs["ycsb"]["max_repeats"] > srcs["ycsb"]["repeats"]
    assert srcs["fio"]["ramp_time"] >= 1 and srcs["fio"]["max_repeats"] > srcs["fio"]["repeats"]


def test_the_default_local_study_runs_its_engines_across_their_memory():
    """Each YCSB engine of the default local study at three sizes or more, the smallest within the
    memory it caches its data in and the largest well beyond it (the data-size experiment), and a
    size between the two engines' memories; fast loads, and direct I/O so that the engine's cache
    is that memory."""
    import copy

    from analysis_util import CONFIG

    from benchcast.config import settings
    from benchcast.core.units import parse_size

    srcs = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["sources"]
    lines = settings.memory_lines(srcs)
    ycsb = srcs["ycsb"]
    sizes = sorted(parse_size(s) for s in ycsb["data_sizes"])
    assert len(sizes) >= 3 and ycsb["fast_load"] and ycsb["properties"]["rocksdb.directio"] is True
    for engine in ycsb["engines"]:
        line = lines[f"ycsb:ycsb/{engine}"]
        assert sizes[0] <= line / 1.5 and sizes[-1] > line, (engine, sizes, line)
    low, high = sorted(lines[f"ycsb:ycsb/{e}"] for e in ycsb["engines"])
    assert any(low < s < high for s in sizes), (sizes, low, high)


def test_spec_figure_units_must_fit_the_metric():
    check(lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].__setitem__("value", "50 MB/s"),
          r"^config: studies.paper.targets.S-SCM.figures\[0\].value: '50 MB/s' is not a time")


def test_optane_card_gives_the_same_figures_in_both_studies():
    """Written with units in both studies, the card means the same device, and every figure is in
    the records' one unit (the paper's published MB/s are B/s once imported)."""
    from analysis_util import paper_agg
    from benchcast import features

    cfg = config.validate(copy.deepcopy(CONFIG))
    cards = {s: {"Optane-P4800X": cfg["studies"][s]["targets"]["Optane-P4800X"]} for s in ("paper", "local")}
    paper = features.spec_features(cards["paper"]).set_index("feature")["x"]
    local = features.spec_features(cards["local"]).set_index("feature")["x"]
    units = features.feature_table(paper_agg()).drop_duplicates("feature").set_index("feature")["unit"]
    assert units["randread_4K_bw"] == "B/s" and units["randread_4K_lat_mean"] == "us"
    assert paper["randread_4K_bw"] == local["randread_4K_bw"] == pytest.approx(413e6)
    assert paper["randread_4K_lat_mean"] == local["randread_4K_lat_mean"]
    assert paper["randwrite_4K_lat_mean"] == local["randwrite_4K_lat_mean"] == 10.0
    # the datasheet's sequential rates, from which the 16K and 64K figures are fixed
    assert local["read_128K_bw"] == pytest.approx(2.4e9) and local["write_128K_bw"] == pytest.approx(2.0e9)


def test_imported_fio_json_devices_must_be_imported_devices_of_the_study():
    def add(c, dev):
        c["studies"]["paper"]["sources"]["theirs"] = {"type": "fio_json", "files": {dev: "imports/x"}}

    cfg = copy.deepcopy(CONFIG)
    cfg["studies"]["paper"]["devices"]["nvme"] = {"kind": "imported"}
    add(cfg, "nvme")
    config.validate(cfg)
    check(lambda c: add(c, "nvme9"), r"studies.paper.sources.theirs.files: 'nvme9' is not an imported device")


# --------------------------------------------------------------------------- refused values and names

ROOT = Path(__file__).resolve().parents[1]


def _paper(mutate):
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    mutate(cfg["studies"]["paper"])
    return cfg


def _card(value):
    return lambda s: s["targets"]["S-SCM"]["figures"][0].update(value=value)


@pytest.mark.parametrize("mutate, expected", [
    (_card("nan"), "targets.S-SCM.figures[0].value: 'nan' is not a finite number above 0"),
    (_card("inf us"), "'inf us' is not a finite number above 0"),
    (_card("-50 us"), "'-50 us' is not a finite number above 0"),
    (_card("0 us"), "'0 us' is not a finite number above 0"),
    (_card(float("nan")), "nan is not a finite number above 0"),
    (_card("8,9 us"), "'8,9 us' has a comma"),
    (_card("1/0 us"), "'1/0 us' is not a number with a unit"),
    (_card("5_0 us"), "targets.S-SCM.figures[0].value: '5_0 us' is not a number with a unit"),
    (_card("0x32"), "targets.S-SCM.figures[0].value: '0x32' is not a number with a unit"),
    (_card("50 60 us"), "targets.S-SCM.figures[0].value: '50 60 us' is not a number with a unit"),
    (lambda s: s["extrapolate"].update(data_sizes=["0 GB"]), "studies.paper.extrapolate.data_sizes[0]: '0 GB' is not a size above 0"),
    (lambda s: s["features"].update(metrics=["lat_mean", "bww"]), "studies.paper.features.metrics[1]: 'bww' is not one of"),
    (lambda s: s["series"].update(metrics=["lat_meen"]), "studies.paper.series.metrics[0]: 'lat_meen' is not one of"),
    (lambda s: s["features"].update(workloads=["randwirte"]), "studies.paper.features.workloads[0]: 'randwirte'"),
    (lambda s: s["report"]["focus"].update(metric="lat_p99"), "report.focus.metric: 'lat_p99' is not one of series.metrics"),
    (lambda s: s["screen"].update(min_devices=4), "studies.paper.screen.min_devices: 4 is more than the study's 3 devices"),
    (lambda s: s["devices"].update({"my dev": {"kind": "imported"}}), "studies.paper.devices: 'my dev' is not a device id"),
    (lambda s: s["devices"].update({"dä": {"kind": "imported"}}), "studies.paper.devices: 'dä' is not a device id"),
    (lambda s: s["pairing"][0]["when"].update(metric="lat_men"),
     "studies.paper.pairing[0].when.metric: 'lat_men' is not one of series.metrics ['lat_mean']"),
    (lambda s: s["pairing"][0].update(workloads=["write", "wrte"]),
     "studies.paper.pairing[0].workloads[1]: 'wrte' is not one of"),
    (lambda s: s["targets"].update(dram={"figures": [{"workload": "randwrite", "block_size": "64K",
                                                      "metric": "lat_mean", "value": "30 us"}]}),
     "studies.paper.targets.dram: a device of the study has this name"),
])
def test_bad_values_and_names_refused_in_one_line(mutate, expected):
    with pytest.raises(BenchcastError) as exc:
        config.validate(_paper(mutate))
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_empty_study_list_is_an_error_not_all():
    cfg = _paper(lambda s: None)
    cfg["run"] = {"studies": []}
    with pytest.raises(BenchcastError, match=r"run.studies: \[\] should be non-empty"):
        config.validate(cfg)


def test_size_zero_refused_for_data_sizes_and_limits():
    for value in (0, "0", "0M", "0.0 GB"):
        cfg = _paper(lambda s: s["extrapolate"].update(data_sizes=[value]))
        with pytest.raises(BenchcastError, match="is not a size above 0"):
            config.validate(cfg)
    cfg = _paper(lambda s: s["extrapolate"].update(data_sizes=["0.5K", "1B", "10GB"]))
    config.validate(cfg)
    for value in ("0.4B", "1.5B", "0.1K", "99999999999TB"):
        cfg = _paper(lambda s: s["extrapolate"].update(data_sizes=[value]))
        with pytest.raises(BenchcastError, match=rf"^config: studies.paper.extrapolate.data_sizes\[0\]: '{value}' is "
                                                 rf"not a whole number of bytes below 8 EiB$"):
            config.validate(cfg)
    cfg = _paper(lambda s: s["extrapolate"].update(data_sizes=["1.1GB", "1.5G", "4T"]))
    config.validate(cfg)


def test_noise_cv_is_a_fraction():
    cfg = _paper(lambda s: s["report"].update(noise_cv=10))
    with pytest.raises(BenchcastError, match=r"^config: studies.paper.report.noise_cv: 10 is greater than the maximum of 1"):
        config.validate(cfg)


@pytest.mark.parametrize("key, value, where", [
    ("data_sizes", [0], "studies.local.sources.ycsb.data_sizes[0]: 0 is not a size above 0"),
    ("memory_limit", 0, "studies.local.sources.ycsb.memory_limit: 0 is not a size above 0"),
    ("memory_limit", "0M", "studies.local.sources.ycsb.memory_limit: '0M' is not a size above 0"),
])
def test_ycsb_sizes_and_limits_above_zero(key, value, where):
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["studies"]["local"]["sources"]["ycsb"][key] = value
    with pytest.raises(BenchcastError) as exc:
        config.validate(cfg)
    assert where in str(exc.value)


@pytest.mark.parametrize("key, value, named", [
    ("engine", "rocksbd", "report.focus.engine: 'rocksbd' is not one of the study's engines"),
    ("workload", "write-onyl", "report.focus.workload: 'write-onyl' is not one of the study's workloads"),
])
def test_focus_of_a_measured_study_names_its_engines_and_workloads(key, value, named):
    """A typo in the focus of a study whose results benchcast measures is refused before any job."""
    cfg = copy.deepcopy(CONFIG)
    local = cfg["studies"]["local"]
    local["sources"] = {k: s for k, s in local["sources"].items() if s["type"] != "ooc"}
    local["report"]["focus"][key] = value
    with pytest.raises(BenchcastError, match=named):
        config.validate(cfg)
    local["report"]["focus"][key] = copy.deepcopy(CONFIG)["studies"]["local"]["report"]["focus"][key]
    config.validate(cfg)


def test_shield_defaults_and_checks():
    cfg = config.validate({**copy.deepcopy(CONFIG), "run": {}})
    assert cfg["run"]["shield"] == {"cpu_shares": 262144, "nice": None, "ionice": None}
    check(lambda c: c.setdefault("run", {}).__setitem__("shield", {"ionice": "4"}), r"^config: run.shield.ionice")
    check(lambda c: c.setdefault("run", {}).__setitem__("shield", {"nice": 20}), r"^config: run.shield.nice")


def _set(cfg, path, value):
    *keys, last = path.split(".")
    node = cfg
    for k in keys:
        node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@pytest.mark.parametrize("path, value", [
    ("studies.paper.extrapolate.data_sizes", [48]),
    ("studies.paper.extrapolate.data_sizes", ["48"]),
    ("studies.paper.report.focus_data_size", 16),
    ("studies.paper.features.block_sizes", [1024]),
    ("studies.paper.targets.S-SCM.figures.0.block_size", 65536),
    ("studies.local.sources.ycsb.data_sizes", [4]),
    ("studies.local.sources.ycsb.memory_limit", 33554432),
    ("studies.local.sources.ycsb.mariadb.buffer_pool_size", "8388608"),
    ("studies.local.sources.ooc.working_sets", [16]),
    ("studies.local.sources.ooc.memory_limit", 32),
    ("studies.local.sources.fio.block_sizes", [4096]),
    ("studies.local.sources.fio.size", 64),
    ("studies.local.devices.dram.size", 512),
    ("studies.local.devices.slow.read_bps", 100),
])
def test_a_size_without_its_unit_is_refused(path, value):
    """A bare number is no size, whatever the key: `extrapolate.data_sizes: [48]` would be 48 bytes."""
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    _set(cfg, path, value)
    with pytest.raises(BenchcastError) as exc:
        config.validate(cfg)
    shown = value[0] if isinstance(value, list) else value
    key = path.replace(".0.", "[0].") + ("[0]" if isinstance(value, list) else "")
    assert str(exc.value) == (f"config: {key}: {shown!r} is not a size above 0 with its unit, such as 4K, 64MB, "
                              f"1GiB or 512B (a bare number has no unit)")


@pytest.mark.parametrize("label", ["", "   "])
def test_an_empty_device_label_is_refused(label):
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["studies"]["paper"]["devices"]["dram"]["label"] = label
    with pytest.raises(BenchcastError, match=rf"^config: studies.paper.devices.dram.label: {label!r} is not a label "
                                             r"\(some text; not empty or blank\)$"):
        config.validate(cfg)


def _imported_runs(workload):
    """Study paper with its application results as YCSB outputs: runs[1]'s workload ``workload``."""
    def mutate(s):
        runs = [{"files": f"imports/ycsb/{d}.txt", "device": d, "engine": "mysql", "workload": "write-only",
                 "data_size": "16GB"} for d in ("3d_xpoint", "dram", "nand_flash")]
        runs[1]["workload"] = workload
        s["sources"]["apps"] = {"type": "ycsb_output", "runs": runs}
    return mutate


@pytest.mark.parametrize("workload", ["writeonly", "Write-Only", "workloada", ""])
def test_a_mistyped_workload_of_an_imported_run_is_named_by_its_key(workload):
    """The key of the typo, from the schema, before any import is read or the focus is checked (which
    blamed the devices the focus had left)."""
    with pytest.raises(BenchcastError) as exc:
        config.validate(_paper(_imported_runs(workload)))
    assert str(exc.value).startswith(f"config: studies.paper.sources.apps.runs[1].workload: {workload!r} is not one of")
    assert "\n" not in str(exc.value)
    config.validate(_paper(_imported_runs("load")))  # the load phase's output


def test_the_workloads_the_schema_names_are_the_ones_that_exist():
    from benchcast.core.workloads import WORKLOADS

    text = (ROOT / "config" / "schema.yaml").read_text()
    assert text.count("enum: [write-only, write-heavy, read-heavy, read-only, a, b, c, d, e, f") == 3
    assert list(WORKLOADS) == ["write-only", "write-heavy", "read-heavy", "read-only", "a", "b", "c", "d", "e", "f"]


def test_a_mistyped_workload_of_pkb_samples_is_named_by_its_key():
    def mutate(s):
        s["sources"]["vm"] = {"type": "pkb", "files": {"dram": "imports/pkb/dram.json"},
                              "ycsb": {"engine": "redis", "workload": "readonly", "data_size": "1GB"}}
    with pytest.raises(BenchcastError) as exc:
        config.validate(_paper(mutate))
    assert str(exc.value).startswith("config: studies.paper.sources.vm.ycsb.workload: 'readonly' is not one of ['write-only'")
