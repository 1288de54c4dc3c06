"""Shared test setup: the package on sys.path, the paper study's analysis as fixtures, and the one
cut-down measured study the workflow tests (reruns, refusals, Slurm) run, and the finished trees the
modules start from, each run once a session: the paper study (:func:`paper_tree`), the paper study
beside the measured one (:func:`finished_tree`)."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from workflow_util import paper_study_only  # noqa: E402 (benchmarks/harness/scratch.py's)
from ycsb_util import ycsb_jar  # noqa: E402,F401 (fixture: finished_tree's)


#: Fixtures that provision something only root may (a tmpfs, a device): their tests are `root` tests.
ROOT_FIXTURES = {"tmpfs", "finished_tree"}
#: Fixtures that build or run a benchmark or a server (the YCSB bindings, the out-of-core programs, fio's
#: outputs made for real, a headless browser and its driver): `bench` tests.
BENCH_FIXTURES = {"ycsb_jar", "binaries", "bench_fio_tree", "sweep_tree", "browser"}

#: The markers of the tests plain `pytest` leaves out (pyproject.toml): whatever runs Snakemake, mounts
#: a device or runs a benchmark or a server. `./benchcast.sh test` runs them all.
SLOW_MARKERS = ("workflow", "root", "bench")

#: The two lanes of `./benchcast.sh test`, run at once: the environment variable names the lane a
#: pytest run keeps (:func:`in_lane`); without it a run keeps every test its `-m` selects.
LANE_ENV = "BENCHCAST_TEST_LANE"
LANES = ("imported", "rest")


def in_lane(item) -> bool:
    """Whether a test belongs to the lane `imported`, run at nice 19 beside the other: the workflow on
    imported results alone (marker `imported`) and the fast tier, but for what provisions, runs a
    benchmark or times things (`root`, `bench`, `timing`: a niced test may wait for a core, and a
    spinner it starts is niced too). Its run sets BENCHCAST_TEST_LANE=imported, and every device or
    benchmark tool it starts fails (:func:`lane_guard`); every other test is in the lane `rest`."""
    has = lambda name: item.get_closest_marker(name) is not None  # noqa: E731
    return (has("imported") or not has("workflow")) and not (has("root") or has("bench") or has("timing"))

#: What a test without those markers may not start, and the marker that says it does: the fast tier
#: touches no workflow, device, benchmark or server (:func:`_fast_tier_guard`).
GUARDED = {
    "snakemake": "workflow", "sbatch": "workflow", "srun": "workflow", "slurmctld": "workflow",
    "mount": "root", "umount": "root", "losetup": "root", "zramctl": "root", "mkswap": "root", "swapon": "root",
    "swapoff": "root", "mkfs.ext4": "root", "mkfs.xfs": "root", "ndctl": "root",
    "fio": "bench", "java": "bench", "mvn": "bench", "cc": "bench", "gcc": "bench", "mariadbd": "bench",
    "mysqld": "bench", "mariadb-install-db": "bench", "stream": "bench", "stencil": "bench", "himeno": "bench",
    "delayfs": "bench", "chromium": "bench", "chromedriver": "bench",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """One way to say "needs root": the `root` marker (pyproject.toml). Tests using a root fixture get
    it too, those using a benchmark's fixture `bench`; without root every `root` test is skipped,
    saying so."""
    is_root = os.geteuid() == 0
    for item in items:
        if ROOT_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.root)
        if BENCH_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.bench)
        if not is_root and item.get_closest_marker("root"):
            item.add_marker(pytest.mark.skip(reason="needs root (marker `root`)"))
        if item.get_closest_marker("imported") and not item.get_closest_marker("workflow"):
            raise pytest.UsageError(f"{item.nodeid}: marker `imported` without `workflow` (pyproject.toml)")
    lane = os.environ.get(LANE_ENV)
    if lane:
        if lane not in LANES:
            raise pytest.UsageError(f"{LANE_ENV}={lane!r}: a lane is one of {', '.join(LANES)}")
        keep, drop = [], []
        for item in items:
            (keep if in_lane(item) == (lane == "imported") else drop).append(item)
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    # what needs the machine to itself runs last: in ./benchcast.sh test, once the niced lane is done
    items[:] = [i for i in items if not i.get_closest_marker("quiet")] + [i for i in items if i.get_closest_marker("quiet")]


def lane_guard(folder: Path) -> Path:
    """Stand-ins for every device and benchmark tool (:data:`GUARDED` but Snakemake) in ``folder``, to
    go first on PATH: each only asks the real tool (:data:`ASKING`, e.g. ``fio --version``) and for
    anything else writes its command line to ``folder/started`` and fails. Returns that file."""
    import shutil

    started = folder / "started"
    asking = " | ".join(sorted(a for a in ASKING if a.startswith("-")))
    for prog in GUARDED:
        if prog == "snakemake":
            continue
        real = shutil.which(prog) or "false"
        stand_in = folder / prog
        stand_in.write_text(
            "#!/bin/bash\n# benchcast's test lane `imported` starts no device or benchmark tool\n"
            'ask=1\nfor a in "$@"; do case "$a" in ' + asking + ') ;; *) ask=0 ;; esac; done\n'
            f'if [ "$ask" = 1 ]; then\n    PATH="${{PATH//{folder}:/}}" exec {real} "$@"\nfi\n'
            f'echo "{prog} $*" >> {started}\n'
            f'echo "benchcast: the test lane imported started {prog} (a test of it may not: tests/conftest.py in_lane)" >&2\n'
            "exit 97\n")
        stand_in.chmod(0o755)
    return started


def pytest_configure(config):
    """In the lane run (BENCHCAST_TEST_LANE=imported) the stand-ins of :func:`lane_guard` go first on
    PATH, for this process and every one it starts."""
    if os.environ.get(LANE_ENV) != "imported":
        return
    import tempfile

    # beside the run's --basetemp (./benchcast.sh removes its folder even after a signal, when this
    # run's own end below never comes), else a folder of its own
    beside = Path(config.option.basetemp).resolve().parent if config.option.basetemp else None
    if beside:
        beside.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="benchcast-lane-", dir=beside))
    config._lane_started = lane_guard(folder)
    os.environ["PATH"] = f"{folder}:{os.environ.get('PATH', '')}"


def pytest_sessionfinish(session, exitstatus):
    """The lane run fails if a test of it started a device or benchmark tool, naming it."""
    started = getattr(session.config, "_lane_started", None)
    if started is None:
        return
    if started.exists():
        print(f"\nbenchcast: the lane `imported` started device or benchmark tools:\n{started.read_text()}")
        session.exitstatus = 1
    import shutil

    shutil.rmtree(started.parent, ignore_errors=True)


#: What only asks: a tool's version, or the devices and mounts there are (nothing made or measured).
ASKING = {"--version", "-version", "-v", "-V", "-dumpfullversion", "--help", "-l", "--list", "-J", "--json", "-a", "--all", "-n", "--noheadings"}


def _started(args) -> str | None:
    """The guarded program a Popen's ``args`` start, if any (``python -m snakemake`` counts as snakemake);
    None where it only asks (:data:`ASKING`: ``fio --version``, ``losetup -J -l``, a bare ``mount``)."""
    argv = [str(a) for a in ([args] if isinstance(args, (str, bytes, os.PathLike)) else list(args))]
    if not argv:
        return None
    words = argv[0].split() if len(argv) == 1 else argv  # a shell string: its first word
    prog = os.path.basename(words[0])
    if prog.startswith("python") and "-m" in words and words[words.index("-m") + 1:][:1] == ["snakemake"]:
        return "snakemake"
    if prog not in GUARDED or (len(words) > 1 and set(words[1:]) <= ASKING) or (prog == "mount" and len(words) == 1):
        return None
    return prog


@pytest.fixture(autouse=True)
def _fast_tier_guard(request, monkeypatch):
    """A test without the slow markers that starts Snakemake, a device's tool, a benchmark or a server
    fails, naming the marker it needs: plain `pytest` stays the fast tier."""
    if any(request.node.get_closest_marker(m) for m in SLOW_MARKERS):
        return
    import subprocess

    real = subprocess.Popen.__init__

    def guarded(self, args, *a, **k):
        prog = _started(args)
        if prog is not None:
            pytest.fail(f"{request.node.nodeid} starts {prog} without the marker `{GUARDED[prog]}` "
                        f"(plain pytest is the fast tier: tests/conftest.py GUARDED)", pytrace=False)
        real(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (tests/browser_util.py); the modules using it skip
    when none can be started (``browser_util.missing``)."""
    from browser_util import Browser

    b = Browser()
    yield b
    b.close()


@pytest.fixture(scope="session")
def paper_analysis():
    """The paper study analysed in memory, as the workflow's rules do: aggregated records, the
    screening, predictions, extrapolation and held-out validation (a dict of tables)."""
    from analysis_util import PAPER, paper_agg
    from benchcast import features, validation
    from benchcast.prediction import predict
    from benchcast.screening import screen

    agg = paper_agg()
    screened = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    pred = predict.predict(screened, PAPER["targets"])
    measured = features.series_table(agg, PAPER["features"], PAPER["series"])
    fits, points = predict.extrapolate(measured, pred, PAPER["extrapolate"]["data_sizes"])
    val = validation.run_study(validation.Study.of(PAPER), agg=agg, screened=screened)
    chosen = predict.Selections(val["simple_selection"], val["multiple_selection"], val["nested_selection"])
    preds, skipped = predict.with_intervals(agg, PAPER["features"], PAPER["series"], chosen, PAPER["targets"],
                                            PAPER["validate"], PAPER["extrapolate"]["data_sizes"])
    return {"agg": agg, "features": features.feature_table(agg, PAPER["features"]), "screen": screened,
            "best": screen.best(screened), "predictions": pred, "fits": fits, "points": points, **val,
            "target_predictions": preds, "target_skipped": skipped}


def mini_local_study(cfg):
    """The `local` study cut down (the one small measured study of the workflow tests): two tmpfs
    devices and two directories in the scratch copy (four devices: target intervals need figures
    <= devices - 2), fio 4K and 64K x randread/randwrite x 2 repeats (1 s, 4M), one tiny RocksDB
    YCSB series at 1, 2 and 4 MB."""
    local = cfg["studies"]["local"]
    local["devices"] = {
        "dram": {"kind": "tmpfs", "size": "64M"},
        "dram2": {"kind": "tmpfs", "size": "64M", "label": "a second tmpfs"},
        "disk": {"kind": "dir", "path": "."},
        "disk2": {"kind": "dir", "path": "resources", "label": "a second directory"},
    }
    local["sources"] = {
        "fio": {"type": "fio", "rw": ["randread", "randwrite"], "block_sizes": ["4K", "64K"], "repeats": 2,
                "ioengine": "psync", "size": "4M", "runtime": 1, "ramp_time": 0, "direct": False},
        "ycsb": {"type": "ycsb", "engines": ["rocksdb"], "workloads": ["write-only", "read-only"],
                 "data_sizes": ["1MB", "2MB", "4MB"], "operationcount": 200, "repeats": 1},
    }
    local["features"]["block_sizes"] = ["4K", "64K"]
    local["features"]["workloads"] = ["randread", "randwrite"]  # the commit source (write) is left out
    local["report"] = {"focus": {"engine": "rocksdb", "workload": "write-only", "op": "update"},
                       "focus_data_size": "2MB"}
    local["extrapolate"] = {"data_sizes": ["8MB"]}
    cfg["studies"] = {"local": local}
    cfg.pop("run", None)


@pytest.fixture(scope="session")
def mini_study():
    return mini_local_study


@pytest.fixture(scope="session")
def paper_only():
    return paper_study_only


@pytest.fixture(scope="session")
def paper_tree(tmp_path_factory):
    """A scratch workflow of the paper study alone (:func:`paper_study_only`) run to completion, once a
    session: no measuring. Not for changing: a module that changes it takes its own copy
    (:func:`copy_tree`)."""
    from workflow_util import copy_workflow, edit_config, snakemake

    wd = copy_workflow(tmp_path_factory.mktemp("paper") / "base")
    edit_config(wd, paper_study_only)
    snakemake(wd)
    return wd


def paper_and_mini_local(cfg):
    """The paper study (imported tables, spec cards) beside the cut-down measured one
    (:func:`mini_local_study`)."""
    paper = cfg["studies"]["paper"]
    mini_local_study(cfg)
    cfg["studies"] = {"paper": paper, **cfg["studies"]}


@pytest.fixture(scope="session")
def finished_tree(tmp_path_factory, ycsb_jar):
    """A scratch workflow of :func:`paper_and_mini_local` run to completion, once a session: real
    tmpfs and directory devices, real fio and YCSB. Not for changing: a module takes its own copy
    (:func:`copy_tree`); a copy of a finished tree measures nothing again (tests/test_precious.py)."""
    import subprocess

    from workflow_util import measured_tree

    if os.geteuid() != 0:
        pytest.skip("provisioning tmpfs devices needs root")
    wd = measured_tree(tmp_path_factory.mktemp("finished") / "base", paper_and_mini_local, ycsb_jar)
    yield wd
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "teardown"], cwd=wd, capture_output=True,
                   timeout=600)


def copy_tree(src: Path, dest: Path) -> Path:
    """``src`` copied to ``dest`` as ``cp -a`` copies (times, modes: the raw outputs stay read-only)."""
    import subprocess

    subprocess.run(["cp", "-a", str(src), str(dest)], check=True)
    return dest
