"""Shared test setup: the package on sys.path, the paper study's analysis as fixtures, and the one
cut-down measured study the workflow tests (reruns, Slurm) run."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))


#: Fixtures that provision something only root may (a tmpfs, a device): their tests are `root` tests.
ROOT_FIXTURES = {"tmpfs"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """One way to say "needs root": the `root` marker (pyproject.toml). Tests using a root fixture get
    it too; without root every `root` test is skipped, saying so."""
    is_root = os.geteuid() == 0
    for item in items:
        if ROOT_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.root)
        if not is_root and item.get_closest_marker("root"):
            item.add_marker(pytest.mark.skip(reason="needs root (marker `root`)"))


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


def paper_study_only(cfg):
    """The config cut to the paper study (no measurement at all)."""
    cfg["studies"] = {"paper": cfg["studies"]["paper"]}
    cfg.pop("run", None)


@pytest.fixture(scope="session")
def mini_study():
    return mini_local_study


@pytest.fixture(scope="session")
def paper_only():
    return paper_study_only
