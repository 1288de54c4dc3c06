"""A refusal for every bad input: config keys, types, sizes and units; devices; corrupt raw outputs;
bad imported tables; a read-only results folder. Each case runs the real workflow on a copy of a
finished tree (the paper study and the one cut-down measured study of conftest) and must exit non-zero with one line
naming the key or the file, leave every earlier result byte-identical and leave nothing mounted."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devices_util import mounts_under
from workflow_util import checksums, edit_config

pytestmark = [pytest.mark.workflow, pytest.mark.root]


@pytest.fixture(scope="module")
def base(finished_tree):
    """The finished tree every case starts from (conftest.paper_and_mini_local, measured once a
    session; tests marked root: skipped without root). Each case copies it."""
    return finished_tree


# --------------------------------------------------------------------------- the cases


def cfg(fn):
    """A case that edits the config."""
    return ("config", fn)


def local(**kw):
    return cfg(lambda c: c["studies"]["local"].update(kw))


def fio_src(**kw):
    return cfg(lambda c: c["studies"]["local"]["sources"]["fio"].update(kw))


def ycsb_src(**kw):
    return cfg(lambda c: c["studies"]["local"]["sources"]["ycsb"].update(kw))


def device(**spec):
    return cfg(lambda c: c["studies"]["local"]["devices"].update(spec))


def target(fig):
    return cfg(lambda c: c["studies"]["paper"]["targets"].update(
        {"T": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", **fig}]}}))


def edit_file(pattern, fn):
    """A case that edits an existing file of the tree (a raw output or an imported table)."""
    return ("file", (pattern, fn))


def truncate(text):
    return text[: len(text) // 2]


def csv_cell(row, col, value):
    def fn(text):
        lines = text.splitlines()
        head = lines[0].split(",")
        cells = lines[row].split(",")
        cells[head.index(col)] = value
        lines[row] = ",".join(cells)
        return "\n".join(lines) + "\n"
    return fn


def json_edit(fn):
    def edit(text):
        data = json.loads(text)
        fn(data)
        return json.dumps(data)
    return edit


FIO_JSON = "results/local/fio/fio/dram/randread-4K-*/run0.json"
YCSB_CSV = "results/local/ycsb/ycsb/dram/rocksdb/1000000/run0.csv"
PAPER_FIO = "resources/soga2018/fio.csv"
PAPER_APP = "resources/soga2018/ycsb_mysql.csv"

CASES = {
    # config: keys, types, sizes, units, cross-key checks
    "unknown top-level key": (cfg(lambda c: c.update(studys={})), "unknown key 'studys'"),
    "unknown study key": (local(screan={}), "studies.local: unknown key 'screan'"),
    "size with a bad unit": (fio_src(size="4Q"), "studies.local.sources.fio.size: '4Q' is not a size above 0 with its unit, such as 4K"),
    "device size not a size": (device(dram={"kind": "tmpfs", "size": "lots"}),
                               "studies.local.devices.dram.size: 'lots' is not a size"),
    "negative block size": (fio_src(block_sizes=["-4K"]), "studies.local.sources.fio.block_sizes[0]"),
    "trim drops every run": (cfg(lambda c: (c["studies"]["local"]["sources"]["fio"].update(repeats=3),
                                            c["studies"]["local"].update(aggregate={"trim": 2}))),
                             "studies.local.aggregate.trim: 2 drops all 3 runs"),
    "zero repeats": (fio_src(repeats=0), "studies.local.sources.fio.repeats"),
    "fewer max_repeats than repeats": (fio_src(repeats=3, max_repeats=2),
                                      "studies.local.sources.fio.max_repeats: 2 is below repeats (3)"),
    "negative stable_cv": (ycsb_src(stable_cv=-1), "studies.local.sources.ycsb.stable_cv"),
    "delayed device without a delay": (device(dram={"kind": "delayed", "backing": {"kind": "tmpfs", "size": "8M"}}),
                                       "studies.local.devices.dram"),
    "unknown fio rw": (fio_src(rw=["randomread"]), "studies.local.sources.fio.rw"),
    "runtime not a number": (fio_src(runtime="fast"), "studies.local.sources.fio.runtime"),
    "iodepth zero": (fio_src(iodepth=0), "studies.local.sources.fio.iodepth"),
    "unknown engine": (ycsb_src(engines=["postgres"]), "studies.local.sources.ycsb.engines"),
    "unknown workload": (ycsb_src(workloads=["write-mostly"]), "studies.local.sources.ycsb.workloads"),
    "ycsb data size not a size": (ycsb_src(data_sizes=["2 megs"]), "studies.local.sources.ycsb.data_sizes[0]"),
    "buffer pool below InnoDB's minimum": (ycsb_src(engines=["mariadb"], mariadb={"buffer_pool_size": "4M"}),
                                           "mariadb.buffer_pool_size: 4M is below"),
    "unknown device kind": (device(nv={"kind": "nvme"}), "studies.local.devices.nv.kind"),
    "device lacks a required key": (device(lp={"kind": "loop"}), "studies.local.devices.lp"),
    "device key of another kind": (device(dram={"kind": "tmpfs", "size": "64M", "disksize": "1G"}),
                                   "studies.local.devices.dram: unknown key 'disksize'"),
    "per_device names no device": (fio_src(per_device={"ghost": {"iodepth": 2}}), "per_device.ghost"),
    "source names no device": (ycsb_src(devices=["ghost"]), "studies.local.sources.ycsb.devices"),
    "target figure of no metric": (target({"metric": "speed", "value": 3}), "studies.paper.targets.T"),
    "target figure value not a number": (target({"value": "fast"}), "studies.paper.targets.T.figures[0].value"),
    "run selects no such study": (cfg(lambda c: c.update(run={"studies": ["nope"]})), "run.studies: unknown study 'nope'"),
    "extrapolate size not a size": (cfg(lambda c: c["studies"]["paper"]["extrapolate"].update(data_sizes=["12Q"])),
                                    "studies.paper.extrapolate.data_sizes[0]"),
    "remeasure not a list": (cfg(lambda c: c.update(remeasure="everything")), "remeasure"),
    "features without metrics": (cfg(lambda c: c["studies"]["paper"]["features"].pop("metrics")),
                                 "studies.paper.features: 'metrics' is a required property"),
    # devices
    "root disk as a disposable blockdev": (device(root={"kind": "blockdev", "path": "ROOTDEV", "disposable": True}),
                                           "device root: path: ROOTDEV holds the root file system"),
    "blockdev not marked disposable": (device(bd={"kind": "blockdev", "path": "LOOPDEV"}),
                                       "path: LOOPDEV is not marked disposable"),
    "blockdev that is mounted": (device(bd={"kind": "blockdev", "path": "MOUNTEDDEV", "disposable": True,
                                            "overwrite": True}), "path: MOUNTEDDEV is mounted"),
    "blockdev holding a filesystem": (device(bd={"kind": "blockdev", "path": "EXT4DEV", "disposable": True}),
                                      "EXT4DEV holds a signature"),
    "dir device whose path is missing": (device(gone={"kind": "dir", "path": "/nonexistent/benchcast"}),
                                         "device gone: path: /nonexistent/benchcast is not an existing directory"),
    "dir device on a full file system": (device(full={"kind": "dir", "path": "FULLDIR"}), "device full"),
    # raw outputs and imported tables
    "truncated fio JSON": (edit_file(FIO_JSON, truncate), "fio JSON is truncated or malformed"),
    "fio output that is not JSON": (edit_file(FIO_JSON, lambda t: "fio: oops\n"), "not fio JSON output"),
    "fio JSON without jobs": (edit_file(FIO_JSON, json_edit(lambda d: d.update(jobs=[]))), "fio JSON has no jobs"),
    "fio JSON of a job that failed": (edit_file(FIO_JSON, json_edit(lambda d: d["jobs"][0].update(error=5))),
                                      "ended with error 5"),
    "truncated YCSB records": (edit_file(YCSB_CSV, lambda t: t[: t.index("\n") + 40]), YCSB_CSV),
    "YCSB value not a number": (edit_file(YCSB_CSV, csv_cell(1, "value", "fast")), "is not a number: 'fast'"),
    "YCSB value negative": (edit_file(YCSB_CSV, csv_cell(1, "value", "-3.5")), "value is negative"),
    "imported value NaN": (edit_file(PAPER_FIO, csv_cell(1, "value", "NaN")), "column value is not a number"),
    "imported value inf": (edit_file(PAPER_FIO, csv_cell(1, "value", "inf")), "value is not finite"),
    "imported value negative": (edit_file(PAPER_APP, csv_cell(1, "latency_us", "-4616")), "value is negative"),
    "imported value not a number": (edit_file(PAPER_APP, csv_cell(1, "latency_us", "slow")),
                                    "column latency_us is not a number: 'slow'"),
    "imported table lacks a column": (edit_file(PAPER_FIO, lambda t: t.replace("metric,", "metrik,", 1)),
                                      "missing column(s) metric"),
    "imported row of an unknown device": (edit_file(PAPER_FIO, csv_cell(1, "device", "optane")),
                                          "unknown device 'optane'"),
    "read-only results folder": (("readonly", None), "results folder is not writable (read-only file system)"),
}


def root_device() -> str:
    st = os.stat("/")
    uevent = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/uevent").read_text()
    return "/dev/" + next(ln.split("=", 1)[1] for ln in uevent.splitlines() if ln.startswith("DEVNAME="))


@pytest.fixture
def scratch(base, tmp_path):
    """A copy of the finished tree, plus what device cases need (loop devices, a full tmpfs), all
    undone afterwards."""
    wd = tmp_path / "wf"
    subprocess.run(["cp", "-a", str(base), str(wd)], check=True)
    undo = []
    subst = {"ROOTDEV": root_device()}

    def loop(fs=None, mount=False):
        img = tmp_path / f"img{len(undo)}"
        with open(img, "wb") as fh:
            fh.truncate(16 << 20)
        dev = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True,
                             check=True).stdout.strip()
        undo.append(["losetup", "-d", dev])
        if fs:
            subprocess.run([f"mkfs.{fs}", "-q", "-F", dev], check=True, capture_output=True)
        if mount:
            mp = tmp_path / f"mnt{len(undo)}"
            mp.mkdir()
            subprocess.run(["mount", dev, str(mp)], check=True)
            undo.append(["umount", str(mp)])
        return dev

    def prepare(text: str) -> str:
        if "LOOPDEV" in text and "LOOPDEV" not in subst:
            subst["LOOPDEV"] = loop()
        if "EXT4DEV" in text and "EXT4DEV" not in subst:
            subst["EXT4DEV"] = loop(fs="ext4")
        if "MOUNTEDDEV" in text and "MOUNTEDDEV" not in subst:
            subst["MOUNTEDDEV"] = loop(fs="ext4", mount=True)
        if "FULLDIR" in text and "FULLDIR" not in subst:
            full = tmp_path / "full"
            full.mkdir()
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "benchcast-test-full", str(full)], check=True)
            undo.append(["umount", str(full)])
            subprocess.run(["dd", "if=/dev/zero", f"of={full}/filler", "bs=64K"], capture_output=True)
            subst["FULLDIR"] = str(full)
        for key, val in subst.items():
            text = text.replace(key, val)
        return text

    yield wd, prepare, undo
    for cmd in reversed(undo):
        subprocess.run(cmd, capture_output=True)


#: The cases that need a device or a mount of their own (the `scratch` fixture makes them and undoes
#: them after the case): run one at a time, in their own test. Every other case runs beforehand, as
#: many at a time as there are cores (:func:`refused`): each on its own copy, they share nothing.
MACHINE = {"blockdev not marked disposable", "blockdev that is mounted", "blockdev holding a filesystem",
           "dir device on a full file system", "read-only results folder"}
#: What only the `scratch` fixture makes (a case outside :data:`MACHINE` naming one fails, saying so).
PLACEHOLDERS = ("LOOPDEV", "EXT4DEV", "MOUNTEDDEV", "FULLDIR")


def refuse(wd: Path, name: str, prepare, undo: list) -> tuple[str, subprocess.CompletedProcess, dict, dict, list]:
    """Case ``name`` made in the finished tree ``wd`` and the workflow run there: the line expected,
    what the run printed, results/ before (after the edit: the edited file is the bad input itself)
    and after, and the mounts under ``wd`` after it."""
    (kind, what), expected = CASES[name]
    if kind == "config":
        def mutate(c):
            what(c)
            # device paths named by placeholders become the real ones
            for dev in c["studies"].get("local", {}).get("devices", {}).values():
                if isinstance(dev.get("path"), str):
                    dev["path"] = prepare(dev["path"])
        edit_config(wd, mutate)
    elif kind == "file":
        pattern, fn = what
        matches = sorted(wd.glob(pattern))
        assert matches, pattern
        path = matches[0]
        path.chmod(0o644)
        path.write_text(fn(path.read_text()))
        expected = expected.replace(YCSB_CSV, str(path.relative_to(wd)))
    before = checksums(wd / "results")  # after the edit: the edited file is the bad input itself
    if kind == "readonly":
        # something to do: an analysis setting changes, so the run wants to write results
        edit_config(wd, lambda c: c["studies"]["paper"]["aggregate"].update(trim=0))
        subprocess.run(["mount", "--bind", str(wd / "results"), str(wd / "results")], check=True)
        undo.append(["umount", str(wd / "results")])
        subprocess.run(["mount", "-o", "remount,bind,ro", str(wd / "results")], check=True)
    expected = prepare(expected)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2"], cwd=wd, capture_output=True,
                          text=True, timeout=600,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    return expected, proc, before, checksums(wd / "results"), mounts_under(wd)


@pytest.fixture(scope="module")
def refused(request, base, tmp_path_factory):
    """The cases outside :data:`MACHINE` this session runs (all, or those -k selects), each on its own
    copy of the finished tree, as many at a time as there are cores. Case name -> what
    :func:`refuse` returned, or the exception it raised."""
    names = [item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_bad_input_is_refused_in_one_line_and_loses_nothing"
             and item.module is request.module and item.callspec.params["name"] not in MACHINE]
    top = tmp_path_factory.mktemp("refused")
    rootdev = root_device()

    def prepare(text: str) -> str:
        if any(p in text for p in PLACEHOLDERS):
            raise AssertionError(f"{text!r} names a device or mount of its own: its case belongs in MACHINE")
        return text.replace("ROOTDEV", rootdev)

    def one(i: int, name: str):
        wd = top / f"case{i}"
        try:
            subprocess.run(["cp", "-a", str(base), str(wd)], check=True)
            return name, refuse(wd, name, prepare, [])
        except Exception as exc:  # noqa: BLE001 (raised again by the case's own test)
            return name, exc

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(one, range(len(names)), names))


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_refused_in_one_line_and_loses_nothing(name, base, request):
    if name in MACHINE:
        wd, prepare, undo = request.getfixturevalue("scratch")
        result = refuse(wd, name, prepare, undo)
    else:
        wd, result = None, request.getfixturevalue("refused")[name]
        if isinstance(result, Exception):
            raise result
    expected, proc, before, after, mounts = result
    kind = CASES[name][0][0]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    hits = [ln for ln in out.splitlines() if expected in ln]
    assert hits, f"expected a line with {expected!r}:\n{out[-3000:]}"
    assert all(len(ln) < 1500 for ln in hits)
    changed = [p for p, h in before.items() if after.get(p) != h]
    assert not changed, f"earlier results changed or lost: {changed[:5]}"
    assert mounts == [] or kind == "readonly" and mounts == [str(wd / "results")]


def test_the_table_has_at_least_30_cases():
    assert len(CASES) >= 30
