"""Refuse what the analysis cannot use, and never finish with exit 0 over stale or missing outputs.

Every case runs the real workflow (the README's command, ./benchcast.sh run, or snakemake in the
checkout, its default profile) on its own copy of one finished tree of the paper study (no
measuring: cheap), then asserts the exit code, the one line naming the key or file:line, no
traceback, and `results/` byte-identical before and after (on a refusal) or byte-identical to the uninterrupted run (after an interruption).
"""
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import copy_tree
from workflow_util import ROOT, checksums, edit_config, planned_jobs

pytestmark = [pytest.mark.workflow, pytest.mark.imported]

PAPER_FIO = "resources/soga2018/fio.csv"
PAPER_APP = "resources/soga2018/ycsb_mysql.csv"
ANALYSIS_RULES = ["aggregate", "screen", "predict", "extrapolate", "heldout", "predict_intervals"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory, paper_tree):
    """The paper study run to completion (what every case copies): a copy of the session's
    (conftest.paper_tree), its config the project's with the run cut to the paper study, which plans
    nothing there (the same study, the same outputs)."""
    wd = copy_tree(paper_tree, tmp_path_factory.mktemp("consistency") / "base")
    shutil.copy2(ROOT / "config" / "config.yaml", wd / "config" / "config.yaml")
    edit_config(wd, lambda c: c.update(run={"studies": ["paper"]}))
    assert planned_jobs(wd) == {}
    return wd


@pytest.fixture
def tree(finished, tmp_path):
    wd = tmp_path / "wf"
    subprocess.run(["cp", "-a", str(finished), str(wd)], check=True)
    return wd


def run(wd: Path, *args):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", *args], cwd=wd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc, timeout=900) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


#: The tests that run the workflow through once or twice each, on their own copy of the finished
#: tree (half a minute or so each, most of it one job after another): their bodies (the functions
#: :func:`scenario` registers, their assertions in them) run beforehand, two at a time (:func:`ran`),
#: and each test reports its own outcome. Test name -> (function of ``finished`` and ``tree``, its
#: other arguments).
SCENARIOS: dict = {}


def scenario(name: str, **kwargs):
    """Register the decorated function as the body of the test ``name``, called with the tree (and
    the finished tree, if it takes it) and ``kwargs``."""
    def register(fn):
        SCENARIOS[name] = (fn, kwargs)
        return fn
    return register


# --------------------------------------------------------------------------- refusals

def overlay(text):
    """A case given as a --configfile merged over config/config.yaml."""
    return ("configfile", text)


def card(value):
    return overlay("studies:\n  paper:\n    targets:\n      S-SCM:\n        figures:\n"
                   f"          - {{workload: randwrite, block_size: 64K, metric: lat_mean, value: \"{value}\"}}\n")


def paper(text):
    return overlay("studies:\n  paper:\n" + "".join(f"    {ln}\n" for ln in text.splitlines()))


def csv_line(path, line, fn):
    """A case that edits line ``line`` (1-based) of an imported table."""
    def edit(text):
        lines = text.splitlines()
        lines[line - 1:line] = fn(lines[line - 1])
        return "\n".join(lines) + "\n"
    return ("file", (path, edit))


def field(col, value):
    def fn(ln):
        cells = ln.split(",")
        cells[col] = value
        return [",".join(cells)]
    return fn


CASES = {
    # values
    "card value nan": (card("nan"), "targets.S-SCM.figures[0].value: 'nan' is not a finite number above 0"),
    "card value inf": (card("inf us"), "'inf us' is not a finite number above 0"),
    "card value negative": (card("-50 us"), "'-50 us' is not a finite number above 0"),
    "card value zero": (card("0 us"), "'0 us' is not a finite number above 0"),
    "card value decimal comma": (card("8,9 us"), "'8,9 us' has a comma"),
    "card value division by zero": (card("1/0 us"), "'1/0 us' is not a number with a unit"),
    "extrapolate to 0 GB": (paper("extrapolate: {data_sizes: [0 GB]}"),
                            "studies.paper.extrapolate.data_sizes[0]: '0 GB' is not a size above 0"),
    "no study selected": (overlay("run: {studies: []}"), "run.studies: [] should be non-empty"),
    # names
    "feature metric typo": (paper("features: {metrics: [lat_mean, bww]}"),
                            "studies.paper.features.metrics[1]: 'bww' is not one of"),
    "series metric typo": (paper("series: {metrics: [lat_meen]}"), "studies.paper.series.metrics[0]: 'lat_meen'"),
    "series metric no import has": (paper("series: {metrics: [lat_mean, lat_p99]}"),
                                    "studies.paper.series.metrics[1]: 'lat_p99': no application result the study "
                                    "imports has it (theirs: lat_mean)"),
    "series benchmark no import has": (paper("series: {benchmarks: [ycsb, ooc]}"),
                                       "studies.paper.series.benchmarks[1]: 'ooc': no application result"),
    "focus not a screened series": (paper("report: {focus: {metric: lat_p99}}"),
                                    "report.focus.metric: 'lat_p99' is not one of series.metrics"),
    "min_devices above the devices": (paper("screen: {min_devices: 4}"),
                                      "studies.paper.screen.min_devices: 4 is more than the study's 3 devices"),
    "card no device measures": (paper("features: {block_sizes: [1K, 4K, 16K, 64K, 256K, 1M]}\ntargets:\n  X:\n    figures: "
                                      "[{workload: randread, block_size: 1M, metric: bw, value: 2000 MB/s}]"),
                                "studies.paper.targets.X: none of its figures is measured or imported"),
    "device id with a space": (paper("devices: {'my dev': {kind: imported}}"),
                               "studies.paper.devices: 'my dev' is not a device id"),
    "device id not ASCII": (paper("devices: {'dä': {kind: imported}}"), "studies.paper.devices: 'dä' is not a device id"),
    "duplicate key": (overlay("studies:\n  paper:\n    aggregate: {trim: 1}\n    aggregate: {trim: 0}\n"),
                      "overlay.yaml:4: duplicate key 'aggregate' (first on line 3)"),
    "merge changes a device's kind": (paper("devices: {dram: {kind: tmpfs, size: 64M}}"),
                                      "studies.paper.devices.dram.kind: 'tmpfs' would change the kind of device dram"),
    # imported rows: the file and its own line
    "exact duplicate row": (csv_line(PAPER_APP, 5, lambda ln: [ln, ln]),
                            f"{PAPER_APP}: line 6: duplicate row (the same as line 5"),
    "conflicting duplicate rows": (csv_line(PAPER_APP, 5, lambda ln: [ln, ln.rsplit(",", 1)[0] + ",9999"]),
                                   f"{PAPER_APP}: line 6: conflicting duplicate of line 5"),
    "unknown rw": (csv_line(PAPER_FIO, 4, field(1, "randwirte")), f"{PAPER_FIO}: line 4: unknown rw 'randwirte'"),
    "zero latency": (csv_line(PAPER_FIO, 4, field(4, "0")), f"{PAPER_FIO}: line 4: column value: value is zero"),
    "negative data size": (csv_line(PAPER_APP, 11, field(3, "-8")),
                           f"{PAPER_APP}: line 11: column data_gb: value is negative"),
    "negative latency on line 11": (csv_line(PAPER_APP, 11, field(5, "-5")),
                                    f"{PAPER_APP}: line 11: column latency_us: value is negative"),
    "header-only table": (("file", (PAPER_APP, lambda t: t.splitlines()[0] + "\n")), f"{PAPER_APP}: no rows"),
    "device in one table only": (("file", (PAPER_APP, lambda t: "".join(ln + "\n" for ln in t.splitlines()
                                                                         if ",dram," not in ln))),
                                 f"{PAPER_FIO}: line 4: device 'dram' has no rows in {PAPER_APP}"),
}


# --- a study `again` of the paper's devices, series, cards and report, whose rows come from other imports

PAPER_RECORDS = "results/paper/records/soga2018/soga2018.csv"
RECS = "imports/paper.csv"
APPS = "imports/apps.csv"


def again(sources, files, **study):
    """A case: study `again` (the paper's, with ``study``'s keys merged in) importing ``sources``;
    ``files``: path -> function of the tree giving the text written there first."""
    return ("again", (sources, files, study))


def paper_records(edit=lambda lines: lines):
    """The paper study's record file (a finished run's), edited (``edit``: its lines -> lines)."""
    return lambda wd: "\n".join(edit((wd / PAPER_RECORDS).read_text().splitlines())) + "\n"


def record_field(line, col, value):
    """Edit column ``col`` of line ``line`` (1-based, the header is line 1) of a record file."""
    def edit(lines):
        cells = lines[line - 1].split(",")
        cells[lines[0].split(",").index(col)] = value
        return lines[:line - 1] + [",".join(cells)] + lines[line:]
    return edit


def apps_only(lines):
    return [lines[0]] + [ln for ln in lines[1:] if ",ycsb," in ln]


DEVICES = ("nand_flash", "3d_xpoint", "dram")


def fio_json_text(iops):
    """A fio JSON output (fio 2.x fields) of one randread 4K job at ``iops``."""
    read = {"io_bytes": 409600, "bw": iops * 4, "iops": float(iops), "total_ios": 100, "lat": {"mean": 1e6 / iops},
            "clat": {"mean": 0.9e6 / iops, "percentile": {"99.00": 2e6 / iops}}}
    return json.dumps({"fio version": "fio-2.2.10", "jobs": [{"jobname": "j", "error": 0, "read": read,
        "job options": {"name": "j", "rw": "randread", "bs": "4k", "iodepth": "1", "ioengine": "libaio", "size": "1G"}}]})


def pkb_text(*values):
    """PKB fio samples of a randwrite 64K job: its completion latency (usec) and bandwidth, one per line."""
    md = {"rw": "randwrite", "blocksize": "64k", "iodepth": "1", "numjobs": "1", "ioengine": "libaio", "size": "1g"}
    return "".join(json.dumps({"metric": f"j:write:{m}", "value": v, "unit": u, "metadata": md}) + "\n"
                   for m, v, u in values)


FIO_JSON_SOURCES = {"figures": {"type": "fio_json", "files": {d: f"imports/fio/{d}.json" for d in DEVICES}},
                    "apps": {"type": "records", "files": APPS}}
FIO_JSON_FILES = {**{f"imports/fio/{d}.json": (lambda wd, i=i: fio_json_text(1000 * (i + 1)))
                     for i, d in enumerate(DEVICES)}, APPS: paper_records(apps_only)}
PKB_SOURCES = {"figures": {"type": "pkb", "files": {d: f"imports/pkb/{d}.json" for d in DEVICES}},
               "apps": {"type": "records", "files": APPS}}
PKB_FILES = {**{f"imports/pkb/{d}.json": (lambda wd, i=i: pkb_text(("latency", 50.0 * (i + 1), "usec")))
                for i, d in enumerate(DEVICES)}, APPS: paper_records(apps_only)}
RECORDS = {"theirs": {"type": "records", "files": RECS}}

def fio_only(lines):
    return [lines[0]] + [ln for ln in lines[1:] if ",fio," in ln]


#: Real YCSB 0.17 outputs (text exporter; tests/data/ycsb) of the application side, one a device.
YCSB_OUT = Path(__file__).resolve().parent / "data" / "ycsb" / "mariadb-01-write-only.txt"
YCSB_DRAM = "imports/ycsb/dram.txt"


def ycsb_sources(*more, **dram):
    """Study `again`'s sources: the paper's fio figures as records, the application results as YCSB
    outputs, one run entry a device (``dram``: keys of the dram entry changed), then ``more`` entries."""
    runs = [{"files": f"imports/ycsb/{d}.txt", "device": d, "engine": "mysql", "workload": "write-only",
             "data_size": "16GB", **(dram if d == "dram" else {})} for d in DEVICES]
    return {"figures": {"type": "records", "files": RECS}, "apps": {"type": "ycsb_output", "runs": runs + list(more)}}


def ycsb_files(edit=lambda lines: lines, vary=True):
    """The files of ``ycsb_sources``: dram's output edited (``edit``: its lines -> lines); the other
    devices' outputs a run of their own each (its run time k ms longer: no two runs write the same
    bytes, a copy is refused), with its own update latency (``vary``; else dram's: a result no
    device changes, which no feature explains)."""
    out = {RECS: paper_records(fio_only)}
    for k, d in enumerate(DEVICES):
        other = [f"[OVERALL], RunTime(ms), {808 + 1 + k}"]
        latency = [f"[UPDATE], AverageLatency(us), {383.7585 * (4 - k) if vary else 383.7585}"]
        out[f"imports/ycsb/{d}.txt"] = (lambda wd, d=d, other=other, latency=latency: "\n".join(
            (edit if d == "dram" else lambda lines: ycsb_line(19, latency)(ycsb_line(1, other)(lines)))(
                YCSB_OUT.read_text().splitlines())) + "\n")
    return out


def ycsb_line(n, new):
    """Line ``n`` (1-based) of a YCSB output replaced by the lines ``new``."""
    return lambda lines: lines[:n - 1] + list(new) + lines[n:]


YCSB_KEY = "config: studies.again.sources.apps.runs"
YCSB_FOCUS = {"report": {"focus": {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "update",
                                   "metric": "lat_mean"}}}

CASES.update({
    # imported rows of YCSB outputs: the file and its own line; the runs entries: their key
    "YCSB output: the same run listed twice": (
        again(ycsb_sources({"files": YCSB_DRAM, "device": "dram", "engine": "mysql", "workload": "write-only",
                            "data_size": "16GB"}), ycsb_files(), **YCSB_FOCUS),
        f"{YCSB_KEY}[3]: duplicate run (the same as runs[2]: {YCSB_DRAM})"),
    "YCSB output: one run listed twice, differing": (
        again(ycsb_sources({"files": YCSB_DRAM, "device": "nand_flash", "engine": "mysql", "workload": "write-only",
                            "data_size": "16GB"}), ycsb_files(), **YCSB_FOCUS),
        f"{YCSB_KEY}[3]: conflicting duplicate of runs[2] ({YCSB_DRAM}: device dram vs nand_flash)"),
    # a mistyped workload of a runs entry: its key, first (it blamed the focus's "2 devices")
    "YCSB output: mistyped workload": (
        again(ycsb_sources(workload="writeonly"), ycsb_files(), **YCSB_FOCUS),
        "config: studies.again.sources.apps.runs[2].workload: 'writeonly' is not one of ['write-only', "),
    "YCSB output: unknown device": (again(ycsb_sources(device="optane"), ycsb_files(), **YCSB_FOCUS),
                                    f"{YCSB_KEY}[2]: unknown device 'optane' (study devices: 3d_xpoint, dram, nand_flash)"),
    "YCSB output: negative latency on line 19": (
        again(ycsb_sources(), ycsb_files(ycsb_line(19, ["[UPDATE], AverageLatency(us), -383.7585"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 19: [UPDATE], AverageLatency(us): value is negative: -383.759 (it must be above 0)"),
    "YCSB output: zero throughput": (
        again(ycsb_sources(), ycsb_files(ycsb_line(2, ["[OVERALL], Throughput(ops/sec), 0.0"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 2: [OVERALL], Throughput(ops/sec): value is zero"),
    "YCSB output: NaN latency": (
        again(ycsb_sources(), ycsb_files(ycsb_line(22, ["[UPDATE], 95thPercentileLatency(us), NaN"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 22: [UPDATE], 95thPercentileLatency(us): value is not finite"),
    "YCSB output: not a number": (
        again(ycsb_sources(), ycsb_files(ycsb_line(18, ["[UPDATE], Operations, 2,000"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 18: [UPDATE], Operations: value is not a number: '2,000'"),
    "YCSB output: unknown operation": (
        again(ycsb_sources(), ycsb_files(ycsb_line(18, ["[UPDAET], Operations, 2000"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 18: unknown operation 'UPDAET'"),
    "YCSB output: a line twice, differing": (
        again(ycsb_sources(), ycsb_files(ycsb_line(19, ["[UPDATE], AverageLatency(us), 383.7585",
                                                       "[UPDATE], AverageLatency(us), 401.2"])), **YCSB_FOCUS),
        f"{YCSB_DRAM}: line 20: conflicting duplicate of line 19 ([UPDATE], AverageLatency(us): 383.7585 vs 401.2)"),
    "YCSB output: only status lines": (
        again(ycsb_sources(), ycsb_files(lambda lines: ["YCSB Client 0.17.0", "Loading workload...", "Starting test.",
                                                        "2024-05-01 10:00:00:000 0 sec: 0 operations; est completion "
                                                        "in 0 second"]), **YCSB_FOCUS),
        f"{YCSB_DRAM}: no YCSB measurements found (no [OPERATION], measurement, value line)"),
    "YCSB output: empty file": (again(ycsb_sources(), ycsb_files(lambda lines: []), **YCSB_FOCUS),
                                f"{YCSB_DRAM}: no YCSB measurements found (an empty file)"),
    # one data size, three devices, the same result on each: no fit (R^2 undefined), refused before
    # the chart step found nothing screened after 50 outputs were rewritten
    "YCSB output: the same result on every device": (
        again(ycsb_sources(), ycsb_files(vary=False), **YCSB_FOCUS),
        "config: studies.again.report.focus: ycsb mysql write-only update lat_mean at 16GB: the imported results "
        "are the same on every device (383.7585 on 3d_xpoint, dram, nand_flash)"),
})

CASES.update({
    # imported rows of record, fio JSON and PKB imports: the file and its own line (fio JSON: its job)
    "records: the same record twice": (again(RECORDS, {RECS: paper_records(lambda ln: ln[:5] + [ln[4]] + ln[5:])}),
                                       f"{RECS}: line 6: duplicate record (the same as line 5: device nand_flash"),
    "records: one record twice, differing": (
        again(RECORDS, {RECS: paper_records(lambda ln: record_field(6, "value", "1.5")(ln[:5] + [ln[4]] + ln[5:]))}),
        f"{RECS}: line 6: conflicting duplicate of line 5 ("),
    "records: unknown fio rw": (again(RECORDS, {RECS: paper_records(record_field(3, "workload", "randwirte"))}),
                                f"{RECS}: line 3: unknown workload 'randwirte'"),
    "records: zero latency": (again(RECORDS, {RECS: paper_records(record_field(3, "value", "0"))}),
                              f"{RECS}: line 3: column value: value is zero: 0.0 (read lat_mean: it must be above 0)"),
    "records: header only": (again(RECORDS, {RECS: paper_records(lambda ln: ln[:1])}), f"{RECS}: no rows (only a header)"),
    "fio JSON: the same output twice": (
        again({"figures": {"type": "fio_json", "files": {**FIO_JSON_SOURCES["figures"]["files"],
                                                         "dram": ["imports/fio/dram.json", "imports/fio/copy.json"]}},
               "apps": FIO_JSON_SOURCES["apps"]},
              {**FIO_JSON_FILES, "imports/fio/copy.json": lambda wd: fio_json_text(3000)}),
        "imports/fio/copy.json: jobs[0] (j): duplicate job (the same as imports/fio/dram.json: jobs[0] (j): device dram"),
    "fio JSON: zero IOPS": (again(FIO_JSON_SOURCES, {**FIO_JSON_FILES, "imports/fio/dram.json": lambda wd: fio_json_text(
        3000).replace('"iops": 3000.0', '"iops": 0')}),
        "imports/fio/dram.json: jobs[0] (j): column value: value is zero: 0.0 (read iops: it must be above 0)"),
    "PKB: two samples of one figure that disagree": (
        again(PKB_SOURCES, {**PKB_FILES, "imports/pkb/dram.json": lambda wd: pkb_text(
            ("latency", 50.0, "usec"), ("bandwidth", 9000, "KB/s"), ("latency", 70.0, "usec"))}),
        "imports/pkb/dram.json: line 3: conflicting duplicate of line 1 ("),
    # report.focus against the imported files
    "focus engine no imported row has": (again(RECORDS, {RECS: paper_records()}, report={"focus": {"engine": "rocksdb"}}),
                                         "config: studies.again.report.focus.engine: 'rocksdb' is not one of the "
                                         "study's engines ['mysql']"),
    "focus op the focus workload has not": (
        again(RECORDS, {RECS: paper_records()},
              report={"focus": {"engine": "mysql", "workload": "read-only", "op": "write"}}),
        "config: studies.again.report.focus: no application result of the study is engine mysql, workload "
        "read-only, op write"),
    # spec cards against the figures record, fio JSON and PKB imports bring
    "records: card no imported figure feeds": (
        again(RECORDS, {RECS: paper_records()}, features={"block_sizes": ["1K", "4K", "16K", "64K", "256K", "1M"]},
              targets={"X": {"figures": [{"workload": "randread", "block_size": "1M", "metric": "bw",
                                          "value": "2000 MB/s"}]}}),
        "studies.again.targets.X: none of its figures is measured or imported by the study"),
    "fio JSON: card no job measures": (again(FIO_JSON_SOURCES, FIO_JSON_FILES),
                                       "studies.again.targets.M-SCM: none of its figures is measured or imported"),
    "PKB: card of a latency PKB does not report": (
        again(PKB_SOURCES, PKB_FILES),  # PKB reports fio's completion latency (clat_mean), the card lat_mean
        "studies.again.targets.M-SCM: none of its figures is measured or imported"),
})


CASES.update({
    # every feature name against what the study's sources have (its imported table's rows here)
    "feature block size typo": (paper("features: {block_sizes: [1K, 4K, 16K, 64K, 265K]}"),
                                "config: studies.paper.features.block_sizes[4]: '265K' is not among the block sizes "
                                "the study's sources measure or import (1K, 4K, 16K, 64K, 256K); fix it or set "
                                "features.allow_unused: true"),
    "feature workload no source has": (paper("features: {workloads: [randread, randwrite, read]}"),
                                       "config: studies.paper.features.workloads[2]: 'read' is not among the "
                                       "workloads the study's sources measure or import (randread, randwrite)"),
    # sizes carry their unit: a bare 48 would be 48 bytes
    "extrapolate to a bare number": (paper("extrapolate: {data_sizes: [48]}"),
                                     "studies.paper.extrapolate.data_sizes[0]: 48 is not a size above 0 with its "
                                     "unit, such as 4K, 64MB, 1GiB or 512B (a bare number has no unit)"),
    "focus data size a bare number": (paper("report: {focus_data_size: '16'}"),
                                      "studies.paper.report.focus_data_size: '16' is not a size above 0 with its unit"),
    "empty device label": (paper("devices: {dram: {kind: imported, label: ''}}"),
                           "studies.paper.devices.dram.label: '' is not a label (some text; not empty or blank)"),
    # what the report needs of the imported rows: its focus fitted at its data size
    "app row relabelled to another engine": (
        csv_line(PAPER_APP, 5, field(0, "rocksdb")),
        "config: studies.paper.report.focus: ycsb mysql write-only write lat_mean at 16GB: the imported results "
        "come from 2 device(s) (3d_xpoint, dram), fewer than screen.min_devices (3): no series could be fitted"),
    "focus data size no imported row has": (
        paper("report: {focus_data_size: 48GB}"),
        "config: studies.paper.report.focus_data_size: 48GB: no imported result of ycsb mysql write-only write "
        "lat_mean at that size (sizes: 2GB, 4GB, 8GB, 16GB, 32GB, 64GB, 128GB)"),
    "app row relabelled, not the focus": (
        csv_line(PAPER_APP, 77, field(0, "rocksdb")),
        f"{PAPER_APP}: line 77: engine rocksdb, workload read-heavy, op read: at every data size rows of 1 device(s) "
        f"(nand_flash), fewer than screen.min_devices (3): no fit can use them"),
    "YCSB output: a byte-identical copy as a second repeat": (
        again(ycsb_sources({"files": "imports/ycsb/copy.txt", "device": "dram", "engine": "mysql",
                            "workload": "write-only", "data_size": "16GB"}),
              {**ycsb_files(), "imports/ycsb/copy.txt": ycsb_files()[YCSB_DRAM]}, **YCSB_FOCUS),
        f"imports/ycsb/copy.txt: the same bytes as {YCSB_DRAM}: one YCSB run imported twice (a copy is no repeat)"),
})


#: The paper's spec cards of a 64K random write (the fio JSON study has no such figure)
PAPER_CARDS = {card: {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean",
                                   "value": value}]} for card, value in (("S-SCM", "50 us"), ("M-SCM", "25 us"))}

#: The focus of a study whose fio JSON has randread figures alone: a read (the paper's write focus is
#: paired with randwrite figures only, and nothing could be fitted for it)
FIO_JSON_FOCUS = {"workload": "read-only", "op": "read"}


def fio_job(edit):
    """A fio JSON output of dram (:func:`fio_json_text`) whose JSON ``edit`` changed."""
    def make(wd):
        data = json.loads(fio_json_text(3000))
        edit(data)
        return json.dumps(data)
    return make


FIO_DRAM = "imports/fio/dram.json"

CASES.update({
    # names a pairing rule gives: a typo would match nothing, and the series it meant would be
    # fitted on every figure (Table 11 changes, exit 0)
    # sizes that pass the pattern but are no whole bytes, or no 64-bit number; a percent for a fraction
    "extrapolate to 0.4 bytes": (paper("extrapolate: {data_sizes: [0.4B]}"),
                                 "config: studies.paper.extrapolate.data_sizes[0]: '0.4B' is not a whole number of "
                                 "bytes below 8 EiB"),
    "extrapolate beyond 64 bits": (paper("extrapolate: {data_sizes: [99999999999TB]}"),
                                   "studies.paper.extrapolate.data_sizes[0]: '99999999999TB' is not a whole number"),
    "noise_cv as a percent": (paper("report: {noise_cv: 10}"),
                              "config: studies.paper.report.noise_cv: 10 is greater than the maximum of 1"),
    # a block size of 0 in the paper-shaped table (accepted: 38 outputs rewritten); a folder for a table
    "block size 0K": (csv_line(PAPER_FIO, 2, field(2, "0K")), f"{PAPER_FIO}: line 2: bs: '0K' is not a size above 0"),
    "app table a folder": (paper("sources: {soga2018: {type: soga2018, fio: resources/soga2018/fio.csv, "
                                 "app: resources/soga2018}}"), "resources/soga2018: a folder, not a CSV file"),
    # results/ as a file (Snakemake's inventory ended in a traceback)
    "results is a file": (("results-file", None), "benchcast: results: the results folder is a file here"),
    # a spec card named like a device: Table 13 has one column per name, and kept one of the two
    "card named like a device": (paper("targets: {dram: {figures: [{workload: randwrite, block_size: 64K, "
                                       "metric: lat_mean, value: 30 us}]}}"),
                                 "config: studies.paper.targets.dram: a device of the study has this name"),
    # ... or like one but for case (Table 13 had a column dram beside DRAM)
    "device ids that differ only in case": (paper("devices: {DRAM: {kind: imported}}"),
                                            "config: studies.paper.devices: 'DRAM' and 'dram' differ only in case"),
    # one size written twice: Table 13 had two rows of it (exit 0)
    "extrapolate to one size twice": (paper("extrapolate: {data_sizes: [48GB, 96GB, 48000MB]}"),
                                      "config: studies.paper.extrapolate.data_sizes[2]: '48000MB' is the size of [0] "
                                      "('48GB'): give each size once"),
    # a block size mistyped on one row: its figure lost a device (Tables 9-11 changed, exit 0)
    "fio row with a mistyped block size": (csv_line(PAPER_FIO, 2, field(2, "3K")),
                                           f"{PAPER_FIO}: line 2: rw randread, bs 3K, metric lat_us: rows of 1 "
                                           f"device(s) (nand_flash), fewer than screen.min_devices (3)"),
    # two devices of one label: the charts drew them as one device (exit 0)
    "two devices of one label": (paper("devices: {3d_xpoint: {kind: imported, label: DRAM (tmpfs)}}"),
                                 "config: studies.paper.devices.dram.label: 'DRAM (tmpfs)' names device 3d_xpoint "
                                 "too: the charts would draw both as one"),
    "card named like a device but for case": (
        paper("targets: {DRAM: {figures: [{workload: randwrite, block_size: 64K, metric: lat_mean, value: 30 us}]}}"),
        "config: studies.paper.targets.DRAM: a device of the study has this name (dram, but for case)"),
    # one figure twice in a card: the predict job failed on it after 3 outputs were rewritten
    "card figure given twice": (
        paper("targets: {S-SCM: {figures: [{workload: randwrite, block_size: 64K, metric: lat_mean, value: 50 us}, "
              "{workload: randwrite, block_size: 64KiB, metric: lat_mean, value: 70 us}]}}"),
        "config: studies.paper.targets.S-SCM.figures[1]: figure randwrite_64K_lat_mean is given twice (first as "
        "figures[0])"),
    # fio JSON whose jobs are not what fio writes
    "fio JSON: a job that is no object": (
        again(FIO_JSON_SOURCES, {**FIO_JSON_FILES, FIO_DRAM: fio_job(lambda d: d["jobs"].append(1))}),
        f"{FIO_DRAM}: jobs[1]: not a fio job"),
    "fio JSON: IOPS as text": (
        again(FIO_JSON_SOURCES, {**FIO_JSON_FILES, FIO_DRAM: fio_job(lambda d: d["jobs"][0]["read"].update(iops="fast"))}),
        f"{FIO_DRAM}: jobs[0] (j): fio JSON read statistics are not numbers where fio writes them"),
})

CASES.update({
    # an import's file missing, a glob matching none: in the input function it ended in a traceback
    "fio JSON: a file that is not there": (
        again(FIO_JSON_SOURCES, {k: v for k, v in FIO_JSON_FILES.items() if k != FIO_DRAM}),
        f"config: studies.again.sources.figures.files: {FIO_DRAM}: no *.json file"),
    "YCSB output: a glob matching no file": (
        again(ycsb_sources(files="imports/ycsb/none-*.txt"), ycsb_files(), **YCSB_FOCUS),
        "config: studies.again.sources.apps.runs: imports/ycsb/none-*.txt: no * file"),
    # a row longer than the header: its line, not the parser's message
    "app row with a field too many": (csv_line(PAPER_APP, 5, lambda ln: [ln + ",7"]),
                                      f"{PAPER_APP}: line 5: 7 fields where the header has 6"),
    # a declared imported device that no imported row names: left out of every table, exit 0
    "imported device without a row": (paper("devices: {optane: {kind: imported, label: Optane SSD}}"),
                                      "config: studies.paper.devices.optane: kind imported, but no file the study "
                                      "imports has a row for it (its rows name 3d_xpoint, dram, nand_flash)"),
    # the same for each kind of import, and for a study of device figures alone (no focus, no card)
    "imported device without a row: YCSB outputs": (
        again(ycsb_sources(), ycsb_files(), devices={"optane": {"kind": "imported", "label": "Optane SSD"}},
              **YCSB_FOCUS),
        "config: studies.again.devices.optane: kind imported, but no file the study imports has a row for it "
        "(its rows name 3d_xpoint, dram, nand_flash)"),
    "imported device without a row: fio JSON, device figures alone": (
        again({"figures": FIO_JSON_SOURCES["figures"]},
              {k: v for k, v in FIO_JSON_FILES.items() if k != APPS},
              devices={"optane": {"kind": "imported", "label": "Optane SSD"}}),
        "config: studies.again.devices.optane: kind imported, but no file the study imports has a row for it "
        "(its rows name 3d_xpoint, dram, nand_flash)"),
    # the paper-shaped app table's path mistyped: "Nothing to be done" over the old table's results
    "paper table that is not there": (paper("sources: {soga2018: {type: soga2018, fio: resources/soga2018/fio.csv, "
                                            "app: resources/soga2018/ycsb.csv}}"),
                                      "config: studies.paper.sources.soga2018.app: resources/soga2018/ycsb.csv: no "
                                      "such file"),
    # the focus's pairing rule allows no workload the study's figures have (randwrite, randread
    # figures alone): the report's tables failed after 38 outputs were rewritten
    "focus whose pairing rule allows no figure": (
        again(FIO_JSON_SOURCES, FIO_JSON_FILES, features={"allow_unused": True},
              targets={card: {**PAPER_CARDS[card], "allow_unused": True} for card in ("S-SCM", "M-SCM")}),
        "config: studies.again.report.focus: ycsb mysql write-only write lat_mean: its pairing rule (pairing[0]) "
        "allows the workloads ['randwrite'], none of which the study's candidate figures have (randread)"),
    # YCSB outputs say update where the paper's table says write: the focus op is checked against
    # the outputs' own operations (the chart step failed on it after 44 outputs were rewritten)
    "YCSB output: a focus op the outputs have not": (
        again(ycsb_sources(), ycsb_files(), report={"focus": {**YCSB_FOCUS["report"]["focus"], "op": "write"}}),
        "config: studies.again.report.focus.op: 'write' is not one of"),
})


CASES.update({
    # a number beyond 64 bits: an OverflowError inside the aggregate job, after its output was rewritten
    "trim beyond 64 bits": (paper("aggregate: {trim: 99999999999999999999}"),
                            "config: studies.paper.aggregate.trim: 99999999999999999999 is beyond a 64-bit integer"),
    # an empty target name: a traceback of the report's input functions
    "target of an empty name": (paper("targets: {'': {figures: [{workload: randwrite, block_size: 64K, "
                                      "metric: lat_mean, value: 40 us}]}}"),
                                "config: studies.paper.targets: '' is not a target name"),
    # a pairing rule's op mistyped: it matched nothing, the write series were fitted on every figure
    # (Tables 8-14 changed, exit 0)
    "pairing rule of an op no source gives": (
        paper("pairing:\n  - {when: {op: wrte}, workloads: [randwrite]}\n  - {when: {op: read}, workloads: [randread]}"),
        "config: studies.paper.pairing[0].when.op: 'wrte' is not one of"),
    # one device's fio JSON of another setting (numjobs 4): no figure on min_devices devices, nothing
    # screened; the chart step failed after 49 outputs were rewritten
    "fio JSON: one device's jobs of another setting": (
        again(FIO_JSON_SOURCES, {**FIO_JSON_FILES, FIO_DRAM: fio_job(lambda d: d["jobs"][0]["job options"].update(
            numjobs="4", group_reporting="1"))}, features={"allow_unused": True}, report={"focus": FIO_JSON_FOCUS},
              targets={card: {**PAPER_CARDS[card], "allow_unused": True} for card in ("S-SCM", "M-SCM")}),
        "config: studies.again.features: no candidate figure comes from screen.min_devices (3) devices: the most, "
        "workload randread block_size 4K metric bw iodepth 1 numjobs 1, from 2 (3d_xpoint, nand_flash); dram has "
        "figures of other settings only"),
    # a folder where Table 12 goes: Snakemake took it for the table ("Nothing to be done"), the
    # report step failed on it
    "a folder at an output's path": (("output-folder", "results/paper/tables/table12_predictions.csv"),
                                     "benchcast: results/paper/tables/table12_predictions.csv: a folder where the "
                                     "run writes a file"),
    # a value no fit can square: its figure's fits were NaN and it dropped out of the screening
    # (Tables 9-11 changed, exit 0)
    "fio row of 1e300": (csv_line(PAPER_FIO, 4, field(4, "1e300")),
                         f"{PAPER_FIO}: line 4: column value: value is more than a fit can square: 1e300 (it must be "
                         "at most 1e+150)"),
    # a file the run made, cut short or edited by hand: the jobs after it failed on it (or finished
    # on the edited numbers) after rewriting their outputs
    "an analysis file cut short by hand": (("file", ("results/paper/aggregated.csv",
                                                     lambda t: "".join(t.splitlines(True)[:3]))),
                                           "benchcast: results/paper/aggregated.csv: changed after the run made it "
                                           "(rule aggregate)"),
    "a record file edited by hand": (("file", ("results/paper/records/soga2018/soga2018.csv",
                                               lambda t: t.replace(",124.49,", ",12.449,", 1))),
                                     "benchcast: results/paper/records/soga2018/soga2018.csv: changed after the run "
                                     "made it (rule import_soga2018)"),
    # two studies of one name but for case: one results folder where case is ignored
    "study names that differ only in case": (
        overlay("studies:\n  PAPER:\n    devices: {dram: {kind: imported}}\n    sources: {s: {type: records, "
                "files: x.csv}}\nrun: {studies: [paper, PAPER]}\n"),
        "config: studies: 'PAPER' and 'paper' differ only in case"),
})


def write_again(wd: Path, sources, files, study) -> list[str]:
    """The files and the overlay of an `again` case; returns Snakemake's arguments."""
    for rel, make in files.items():
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text(make(wd))
    spec = {**yaml.safe_load((wd / "config" / "config.yaml").read_text())["studies"]["paper"], "sources": sources}
    for key, val in study.items():
        spec[key] = {**spec.get(key, {}), **val}
    (wd / "overlay.yaml").write_text(yaml.safe_dump({"studies": {"again": spec}, "run": {"studies": ["again"]}}))
    return ["--configfile", "overlay.yaml"]


#: Cases judged against what Snakemake recorded of the finished run (a file changed after its job
#: wrote it), known only once it has built its plan of jobs: their refusal comes after Snakemake's
#: opening lines (the plan's job counts), still one line and the last. Every other case is refused
#: before Snakemake starts, its line alone on stderr.
AFTER_THE_PLAN = {"an analysis file cut short by hand", "a record file edited by hand"}


def readme_command(wd: Path, *args, timeout=900) -> subprocess.CompletedProcess:
    """``./benchcast.sh run ARGS`` in the tree ``wd``, as the README says: the script and its pins
    beside the workflow, the Python running the tests as its venv."""
    root = Path(__file__).resolve().parents[1]
    for part in ("benchcast.sh", "requirements.txt"):
        subprocess.run(["cp", "-p", str(root / part), str(wd / part)], check=True)
    if not (wd / ".venv").exists():
        (wd / ".venv").symlink_to(Path(sys.prefix))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "benchcast.sh", "run", *args], cwd=wd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def results_state(wd: Path):
    """What the run must leave as it was: every file under results/ (or results/ itself, a file)."""
    return checksums(wd / "results") if (wd / "results").is_dir() else (wd / "results").read_bytes()


def refuse(tree: Path, name: str) -> tuple[subprocess.CompletedProcess, object, object]:
    """Case ``name`` of :data:`CASES` made in ``tree`` and run through the README's command: what it
    printed, and results/ before (after the case's edit: the edited file is the bad input itself)
    and after the run."""
    (kind, what), _expected = CASES[name]
    args = []
    if kind == "configfile":
        (tree / "overlay.yaml").write_text(what)
        args = ["--configfile", "overlay.yaml"]
    elif kind == "again":
        args = write_again(tree, *what)
    elif kind == "output-folder":  # a folder where an output file goes: "Nothing to be done" over it
        (tree / what).unlink()
        (tree / what).mkdir()
    elif kind == "results-file":
        subprocess.run(["rm", "-rf", str(tree / "results")], check=True)
        (tree / "results").write_text("x\n")
    else:
        path, edit = what
        (tree / path).write_text(edit((tree / path).read_text()))
    before = results_state(tree)
    proc = readme_command(tree, *args)
    return proc, before, results_state(tree)


@pytest.fixture(scope="module")
def refused(request, finished, tmp_path_factory):
    """The cases of :data:`CASES` this session runs (all, or those -k selects), each on its own copy of
    the finished tree, as many at a time as there are cores: they share nothing (no device, no
    benchmark; each is mostly the start of two Python processes that refuse). Case name -> what
    :func:`refuse` returned, or the exception it raised."""
    names = [item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_refused_in_one_line_and_nothing_changed" and item.module is request.module]
    top = tmp_path_factory.mktemp("refused")

    def one(i: int, name: str):
        wd = top / f"case{i}"
        try:
            subprocess.run(["cp", "-a", str(finished), str(wd)], check=True)
            return name, refuse(wd, name)
        except Exception as exc:  # noqa: BLE001 (raised again by the case's own test)
            return name, exc

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(one, range(len(names)), names))


@pytest.mark.parametrize("name", list(CASES))
def test_refused_in_one_line_and_nothing_changed(name, refused):
    """Through the README's command: a non-zero exit, the reason in one line of stderr and the last,
    no Snakemake framing (no `WorkflowError in file ...` header, no `File "..."` frame), and
    `results/` as it was."""
    if isinstance(refused[name], Exception):
        raise refused[name]
    proc, before, after = refused[name]
    expected = CASES[name][1]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    # what ./benchcast.sh's setup says where it is not root and a Debian package is missing: no refusal
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("benchcast: not root; please install:")]
    hits = [ln for ln in lines if expected in ln]
    assert len(hits) == 1 and lines[-1] == hits[0], f"expected one line with {expected!r}, the last:\n{out[-3000:]}"
    assert lines == hits or name in AFTER_THE_PLAN, f"expected the reason alone:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in out and "WorkflowError" not in out, out[-3000:]
    assert not any(ln.lstrip().startswith('File "') for ln in out.splitlines()), out[-3000:]
    assert after == before


@pytest.mark.parametrize("sources, files, study", [
    (RECORDS, {RECS: paper_records()}, {}),
    (FIO_JSON_SOURCES, FIO_JSON_FILES, {"features": {"allow_unused": True}, "report": {"focus": FIO_JSON_FOCUS},
                                        "targets": {"S-SCM": {"allow_unused": True}, "M-SCM": {"allow_unused": True}}}),
    (PKB_SOURCES, PKB_FILES, {"features": {"metrics": ["lat_mean", "bw", "clat_mean"], "allow_unused": True}, "targets": {
        "S-SCM": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "clat_mean", "value": "50 us"}]},
        "M-SCM": {"allow_unused": True}, "Optane-P4800X": {"allow_unused": True}}}),
    (ycsb_sources(), ycsb_files(), YCSB_FOCUS),
], ids=["records", "fio_json", "pkb", "ycsb_output"])
def test_the_same_imports_unedited_are_planned(tree, sources, files, study):
    """The control of the import cases above: their files unedited, their cards fed, the run is planned."""
    for name, val in study.get("targets", {}).items():
        study["targets"][name] = {**yaml.safe_load((tree / "config" / "config.yaml").read_text())["studies"]["paper"]
                                  ["targets"][name], **val}
    args = write_again(tree, sources, files, study)
    code, out = finish(run(tree, "-n", *args))
    assert code == 0 and "import_records" in out, out[-3000:]


def test_real_ycsb_outputs_import(tree):
    """The control of the YCSB output cases: real outputs, checked before any job and by the import
    itself, become the study's application records."""
    args = write_again(tree, ycsb_sources(), ycsb_files(), YCSB_FOCUS)
    code, out = finish(run(tree, "results/again/records/ycsb_output/apps.csv", *args))  # --configfile takes the rest
    assert code == 0 and "Traceback" not in out, out[-3000:]
    recs = (tree / "results/again/records/ycsb_output/apps.csv").read_text()
    assert recs.count(",update,lat_mean,") == 3 and recs.count(",overall,throughput,") == 3, recs[:2000]


def test_an_overlay_with_an_anchor_and_a_merge_key_is_read(tree):
    """YAML's merge key (``<<: *anchor``) is no duplicate key: the overlay is read, its card planned
    (refused before as YAML it could not read)."""
    (tree / "overlay.yaml").write_text(
        "studies:\n  paper:\n    targets:\n      X:\n        figures:\n          - &fig {workload: randwrite, "
        "block_size: 64K, metric: lat_mean, value: 40 us}\n      Y:\n        figures:\n          - {<<: *fig, "
        "value: 30 us}\n")
    code, out = finish(run(tree, "-n", "--configfile", "overlay.yaml"))
    assert code == 0 and "predict" in out and "Traceback" not in out, out[-3000:]


@scenario("test_ycsb_outputs_at_one_data_size_are_a_study")
def ycsb_outputs_at_one_data_size_are_a_study(tree):
    """Three devices' YCSB outputs at one data size: the first stage (device figure -> result) runs
    to the end, the report and Table 12 included; nothing to fit over data size is no error."""
    args = write_again(tree, ycsb_sources(), ycsb_files(), YCSB_FOCUS)
    code, out = finish(run(tree, *args))
    assert code == 0 and "Traceback" not in out, out[-3000:]
    table12 = (tree / "results/again/tables/table12_predictions.csv").read_text().splitlines()
    assert {ln.split(",")[1] for ln in table12[1:]} == {"S-SCM", "M-SCM", "Optane-P4800X"}, table12
    assert (tree / "results/again/charts/fig3_scatter.svg").is_file()
    # the second stage has nothing to fit, said in the run's last lines
    assert ("benchcast: studies.again.extrapolate.data_sizes: every application result of the study is at one "
            "data size (16GB): nothing to extrapolate from, Tables 13 and 14 stay empty") in out[-2000:], out[-3000:]


@scenario("test_allow_unused_card_is_warned_at_the_end")
def allow_unused_card_is_warned_at_the_end(tree):
    """A card and a feature name no source has, each kept with allow_unused: true: warned, one
    implementation for both, in the run's last lines."""
    edit_config(tree, lambda c: c["studies"]["paper"].update(
        features={**c["studies"]["paper"]["features"], "block_sizes": ["1K", "4K", "16K", "64K", "256K", "1M"],
                  "allow_unused": True},
        targets={**c["studies"]["paper"]["targets"], "X": {"allow_unused": True, "figures": [
            {"workload": "randread", "block_size": "1M", "metric": "bw", "value": "2000 MB/s"}]}}))
    code, out = finish(run(tree))
    assert code == 0, out[-3000:]
    last = "\n".join(out.strip().splitlines()[-4:])
    assert "benchcast: studies.paper.targets.X: none of its figures is measured or imported" in last, out[-2000:]
    assert ("benchcast: studies.paper.features.block_sizes[5]: '1M' is not among the block sizes the study's "
            "sources measure or import (1K, 4K, 16K, 64K, 256K) (allow_unused: true): it is no candidate feature"
            ) in last, out[-2000:]


def test_a_card_figure_no_device_has_is_warned(tree):
    """A card's figure of a block size the study has not (8K) beside one it has: the card is predicted
    from the other, and the figure named as one no model uses (it was dropped without a word)."""
    (tree / "overlay.yaml").write_text(
        "studies:\n  paper:\n    targets:\n      S-SCM:\n        figures:\n          - {workload: randwrite, "
        "block_size: 64K, metric: lat_mean, value: 50 us}\n          - {workload: randwrite, block_size: 8K, "
        "metric: lat_mean, value: 30 us}\n")
    code, out = finish(run(tree, "-n", "--configfile", "overlay.yaml"))
    assert code == 0 and "Traceback" not in out, out[-3000:]
    assert ("benchcast: studies.paper.targets.S-SCM.figures[1]: no device of the study has this figure, no model "
            "uses it (its card's other figures do)") in out, out[-3000:]


@scenario("test_a_run_in_progress_is_named_in_one_line")
def a_run_in_progress_is_named_in_one_line(tree):
    busy = run(tree, "--forcerun", "aggregate")
    try:
        while not job_running(tree, "aggregate") and busy.poll() is None:
            time.sleep(0.05)
        for args in (["-n"], []):
            code, out = finish(run(tree, *args))
            assert code != 0
            assert f"benchcast: a run is in progress in this folder (snakemake, pid {busy.pid})" in out, out[-2000:]
            assert "Traceback" not in out and "IncompleteFilesException" not in out and "LockException" not in out
    finally:
        code, out = finish(busy)
    assert code == 0, out[-2000:]


@scenario("test_a_run_after_a_killed_one_recovers_by_itself")
def a_run_after_a_killed_one_recovers_by_itself(finished, tree):
    """Snakemake itself killed (SIGKILL, a power cut of its process) leaves its lock and its job
    running: the same command, run again, stops that job, tears down what the dead run left, clears
    the lock, says so in one line naming the job and the cause, and goes on to the uninterrupted
    run's results (it refused before, naming `./benchcast.sh teardown`)."""
    from benchcast.sources.run import recover

    busy = run(tree, "--forcerun", "aggregate")
    # the job runs and Snakemake has marked its output incomplete (both, in either order)
    while not (job_running(tree, "aggregate") and "results/paper/aggregated.csv" in recover._markers(tree)):
        assert busy.poll() is None, "the run ended before its aggregate job was seen"
        time.sleep(0.05)
    for pid in job_pids(tree, "aggregate"):  # held, so that it is still there when the next run starts
        os.kill(pid, signal.SIGSTOP)
    os.kill(busy.pid, signal.SIGKILL)
    busy.wait(timeout=60)
    busy.stdout.close()  # not read to its end: the held job keeps the pipe open
    assert list((tree / ".snakemake" / "locks").glob("*.lock"))
    code, out = finish(run(tree))
    assert code == 0, out[-3000:]
    hits = [ln for ln in out.splitlines() if "a previous run in this folder was killed" in ln]
    assert len(hits) == 1 and "its lock cleared, going on" in hits[0], out[-2000:]
    assert "stopped 1 job(s) it left running (rule aggregate)" in hits[0], hits[0]
    assert "cut short, run again: results/paper/aggregated.csv" in hits[0], hits[0]
    assert "Traceback" not in out and "LockException" not in out and "cannot be locked" not in out, out[-2000:]
    assert not job_running(tree, "aggregate") and not list((tree / ".snakemake" / "locks").glob("*.lock"))
    assert analysis_outputs(tree) == analysis_outputs(finished)


# --------------------------------------------------------------------------- interruptions

def job_running(wd: Path, rule: str) -> bool:
    return bool(job_pids(wd, rule))


def job_pids(wd: Path, rule: str) -> list[int]:
    """The processes of the job of ``rule`` (Snakemake runs a rule script as .snakemake/scripts/tmpXXX.<script>.py)."""
    marker = f".{rule}.py"
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(a.endswith(marker) and a.startswith(str(wd)) for a in cmd):
            out.append(int(pid))
    return out

def kill_job(proc, wd: Path, rule: str, timeout=600) -> bool:
    """SIGKILL the job of ``rule`` (its script process) as soon as it runs; False if it never did."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        pids = job_pids(wd, rule)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        if pids:
            return True
        time.sleep(0.02)
    return False


def analysis_outputs(wd: Path) -> dict:
    return {p: h for p, h in checksums(wd / "results").items() if not p.startswith("paper/records/")}


def killed_analysis_job_is_redone_by_the_next_run(finished, tree, rule):
    proc = run(tree, "--forcerun", rule)
    killed = kill_job(proc, tree, rule)
    code, out = finish(proc)
    assert killed, f"{rule} never ran:\n{out[-2000:]}"
    assert code != 0, out[-2000:]
    code, out = finish(run(tree))  # the README's command, again
    assert code == 0, out[-3000:]
    assert "Traceback" not in out
    assert analysis_outputs(tree) == analysis_outputs(finished)
    assert not list((tree / "results").rglob(".partial*"))
    assert "Nothing to be done" in subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2"], cwd=tree, capture_output=True, text=True,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}).stdout


for _rule in ANALYSIS_RULES:
    scenario(f"test_killed_analysis_job_is_redone_by_the_next_run[{_rule}]", rule=_rule)(
        killed_analysis_job_is_redone_by_the_next_run)


@scenario("test_failed_predict_leaves_nothing_that_passes_for_done")
def failed_predict_leaves_nothing_that_passes_for_done(finished, tree):
    """The reported case: a failed predict job (a changed card), then the same command again."""
    edit_config(tree, lambda c: c["studies"]["paper"]["targets"]["S-SCM"]["figures"][0].update(value="40 us"))
    script = tree / "scripts" / "predict.py"
    good = script.read_text()
    script.write_text(good.replace("def main(sm):\n", "def main(sm):\n    raise RuntimeError('failed')\n"))
    code, out = finish(run(tree))
    assert code != 0
    script.write_text(good)
    code, out = finish(run(tree))
    assert code == 0, out[-3000:]
    assert (tree / "results/paper/predictions.csv").is_file()
    table12 = (tree / "results/paper/tables/table12_predictions.csv").read_text()
    assert table12 != (finished / "results/paper/tables/table12_predictions.csv").read_text()


@pytest.mark.root
def test_full_disk_during_the_analysis_then_the_same_command(finished, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32M", "benchcast-test-full", str(mnt)], check=True)
    try:
        wd = mnt / "wf"
        subprocess.run(["cp", "-a", str(finished), str(wd)], check=True)
        filler = mnt / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64K"], capture_output=True)
        code, out = finish(run(wd, "--forcerun", "heldout"))
        assert code != 0, out[-2000:]
        filler.unlink()
        code, out = finish(run(wd))
        assert code == 0, out[-3000:]
        assert analysis_outputs(wd) == analysis_outputs(finished)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@scenario("test_an_import_replaced_with_its_old_time_kept_is_imported_again")
def an_import_replaced_with_its_old_time_kept_is_imported_again(finished, tree):
    """A paper table replaced by one of other content but an older modification time (`cp -p` or
    `rsync -t` of a file made before the results): Snakemake's time trigger kept the old results
    (exit 0, "Nothing to be done"); the import's content is a param of its rule."""
    path = tree / PAPER_FIO
    st = path.stat()
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("nand_flash,randwrite,64K,lat_us,"))
    lines[k] = "nand_flash,randwrite,64K,lat_us," + str(2 * float(lines[k].split(",")[4]))
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (st.st_atime, st.st_mtime))
    code, out = finish(run(tree))
    assert code == 0 and "Traceback" not in out, out[-3000:]
    records = "results/paper/records/soga2018/soga2018.csv"
    assert (tree / records).read_text() != (finished / records).read_text()
    table12 = "results/paper/tables/table12_predictions.csv"
    assert (tree / table12).read_text() != (finished / table12).read_text()
    assert "Nothing to be done" in finish(run(tree, "-n"))[1]


@pytest.mark.parametrize("flag", ["-n", "-np", "--dry-run"])
def test_a_dry_run_of_the_readme_command_writes_no_report(tree, flag):
    """`./benchcast.sh run -n` plans and changes nothing: it wrote results/report.html after the dry run."""
    before = checksums(tree / "results")
    proc = readme_command(tree, flag, timeout=600)
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout + proc.stderr, proc.stderr[-3000:]
    assert checksums(tree / "results") == before and not (tree / "results" / "report.html").exists()


# --------------------------------------------------------------------------- the scenarios above, run beforehand

@pytest.fixture(scope="module")
def ran(request, finished, tmp_path_factory):
    """The scenarios (:data:`SCENARIOS`) of the tests this session runs, each on its own copy of the
    finished tree, as many at a time as there are cores: they share nothing (no device, no benchmark;
    a job is found and killed by its own tree's path). Returns the check a test calls with its name:
    it raises what the scenario raised."""
    names = [item.name for item in request.session.items if item.module is request.module and item.name in SCENARIOS]
    top = tmp_path_factory.mktemp("ran")

    def one(i: int, name: str):
        tree = top / f"s{i}" / "wf"  # its own folder: a job is found by the path of its tree
        try:
            tree.parent.mkdir()
            subprocess.run(["cp", "-a", str(finished), str(tree)], check=True)
            fn, kwargs = SCENARIOS[name]
            if "finished" in inspect.signature(fn).parameters:
                kwargs = {**kwargs, "finished": finished}
            fn(tree=tree, **kwargs)
            return name, None
        except (Exception, pytest.fail.Exception, pytest.skip.Exception) as exc:
            return name, exc

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outcomes = dict(pool.map(one, range(len(names)), names))

    def check(name: str) -> None:
        if outcomes[name] is not None:
            raise outcomes[name]

    return check


def test_ycsb_outputs_at_one_data_size_are_a_study(ran, request):
    ran(request.node.name)


def test_allow_unused_card_is_warned_at_the_end(ran, request):
    ran(request.node.name)


def test_a_run_in_progress_is_named_in_one_line(ran, request):
    ran(request.node.name)


def test_a_run_after_a_killed_one_recovers_by_itself(ran, request):
    ran(request.node.name)


@pytest.mark.parametrize("rule", ANALYSIS_RULES)
def test_killed_analysis_job_is_redone_by_the_next_run(rule, ran, request):
    ran(request.node.name)


def test_failed_predict_leaves_nothing_that_passes_for_done(ran, request):
    ran(request.node.name)


def test_an_import_replaced_with_its_old_time_kept_is_imported_again(ran, request):
    ran(request.node.name)
