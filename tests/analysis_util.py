"""Helpers of the analysis tests: the paper study as configured, its aggregated records, small
aggregated tables built by hand (:func:`make_agg`), and the scripts of benchmarks/ as modules."""
import copy
import importlib.util
import sys
from pathlib import Path

import pandas as pd
import yaml

from benchcast import aggregate, config, features
from benchcast.sources.parse import importers

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
PAPER = config.validate(copy.deepcopy(CONFIG))["studies"]["paper"]


def benchmark(name: str):
    """benchmarks/<name>.py loaded as a module (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(mod)
    return mod


def paper_records():
    return importers.soga2018(
        ROOT / "resources/soga2018/fio.csv",
        ROOT / "resources/soga2018/ycsb_mysql.csv",
        study="paper",
        source="import:soga2018",
        benchmark="ycsb",
        devices=list(PAPER["devices"]),
    )


def paper_agg():
    return aggregate.aggregate(paper_records(), trim=1)


def make_agg(features: dict, results: dict, data_size=16 * 10**9, workload="write-only", op="write"):
    """features: {device: {(rw, bs, metric): value}}; results: {device: value or {data_size: value}}."""
    rows = []
    for dev, figs in features.items():
        for (rw, bs, metric), v in figs.items():
            rows.append(dict(device=dev, benchmark="fio", engine="", workload=rw, block_size=bs, threads=0,
                             data_size=0, op="write" if "write" in rw else "read", metric=metric,
                             unit="us" if metric.startswith("lat") else "MB/s", value=v))
    for dev, res in results.items():
        res = res if isinstance(res, dict) else {data_size: res}
        for ds, v in res.items():
            rows.append(dict(device=dev, benchmark="ycsb", engine="mysql", workload=workload, block_size=0,
                             threads=0, data_size=ds, op=op, metric="lat_mean", unit="us", value=v))
    return pd.DataFrame(rows).assign(study="s", source="test", n=3)


def io_records(profile: dict, workload="write-only", data_size=16 * 10**9):
    """``device`` records of the application runs of :func:`make_agg`: {device: {metric: value}}
    (reads_per_op, read_request_size, syncs_per_op, ...)."""
    return pd.DataFrame([dict(device=dev, benchmark="ycsb", engine="mysql", workload=workload, block_size=0, threads=0,
                              data_size=data_size, op="device", metric=m, unit="1/op", value=v, study="s",
                              source="test", n=3)
                         for dev, metrics in profile.items() for m, v in metrics.items()])


def opaque_names(monkeypatch) -> None:
    """Feature names that say nothing of the figure ('F0', 'F1' ...): the one function that makes
    names swapped, so a consumer that read a name back (a queue depth, a metric suffix) would fail."""
    made: dict = {}

    def name(workload, block_size, op, metric, iodepth, engine, numjobs, setting=""):
        key = (workload, int(block_size), op, metric, int(iodepth or 1), engine or "", int(numjobs or 1), setting)
        return made.setdefault(key, f"F{len(made)}")

    from benchcast.core import workloads

    monkeypatch.setattr(workloads, "feature_name", name)  # where it is made (spec cards read it there)
    monkeypatch.setattr(features, "feature_name", name)  # and as the analysis imported it


def renamed(agg, monkeypatch) -> dict:
    """The usual name -> the opaque name of every figure of ``agg`` (joined by the feature columns)."""
    usual = features.feature_table(agg)
    opaque_names(monkeypatch)
    other = features.feature_table(agg)
    keys = [*features.FEATURE_KEYS, "device"]
    both = usual.merge(other, on=keys, suffixes=("", "_opaque"))
    assert len(both) == len(usual) == len(other)
    return dict(zip(both["feature"], both["feature_opaque"]))
