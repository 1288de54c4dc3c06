"""How well could any device figure predict a series? A bound from the applications themselves.

A device figure is one number per device. The best figure a series could have is one shaped exactly
like it: a program that does what the application does, measured on every tier in the same run. The
series' siblings are such programs (the other workloads of the same benchmark and engine at the same
data size, e.g. STREAM's copy, scale and triad and the stencil beside STREAM's add over a mapped
file). Here each sibling is given, as the one device figure, for predicting the series on the
held-out device; the sibling and the model's form (the ratio of the two results, the ratio of their
excess over the in-memory mode, a log-log line) are chosen per fold by their leave-one-out error on
the training devices, as the nested choice chooses its models. Nothing is measured.

If the nested choice over the measured device figures already does as well as this, a better device
figure of one number cannot be expected to do much better: what is left is how each program meets
each device, not a missing figure.

    .venv/bin/python benchmarks/siblings.py TREE [TREE ...]

Per family (as ``benchmarks/model.py``) and data size, over the interior folds of the tree's
``validation/tiers.csv``: ``model``, the tree's nested choice; ``floor``; ``sibling``, the bound with
the choice made on the training devices; ``sibling_oracle``, the best sibling and form picked with
the held-out device's truth (no procedure could pick it; the lowest the bound can go).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchcast.features import series_matrix  # noqa: E402
from benchcast.report import tables  # noqa: E402
from benchcast.sources.run import ooc  # noqa: E402
from model import family  # noqa: E402

FORMS = ("ratio", "excess", "loglog")
#: the columns that make two series siblings: all of the key but the workload and the op
SIBLING_KEYS = ["benchmark", "engine", "threads", "data_size", "metric"]
#: fewest devices a series and its sibling must share: the held-out one and three to choose on
MIN_DEVICES = 4


def fit(form: str, x: np.ndarray, y: np.ndarray, base_x: float, base_y: float):
    """The sibling's result ``x`` -> the series' ``y`` on the training devices, as a callable."""
    if form == "ratio":
        k = np.median(y / x)
        return lambda v: v * k
    if form == "excess":
        k = np.median((y - base_y) / (x - base_x))
        return lambda v: base_y + k * (v - base_x)
    c1, c0 = np.polyfit(np.log(x), np.log(y), 1)
    return lambda v: np.exp(c0 + c1 * np.log(v))


def loo_error(form: str, x: pd.Series, y: pd.Series, base_x: float, base_y: float) -> float:
    """Mean absolute relative error of ``form`` over the training devices, each left out in turn."""
    errs = []
    for d in x.index:
        f = fit(form, x.drop(d).to_numpy(), y.drop(d).to_numpy(), base_x, base_y)
        errs.append(abs(f(x[d]) - y[d]) / y[d])
    return float(np.mean(errs))


def in_memory(agg: pd.DataFrame) -> pd.Series:
    """The out-of-core programs' in-memory pass (median over devices) per workload and data size: the
    base of the ``excess`` form (0 for series without one)."""
    mem = agg[(agg["benchmark"] == ooc.BENCHMARK) & (agg["engine"] == ooc.REFERENCE_MODE) & (agg["op"] == "pass")
              & (agg["metric"] == "lat_mean")]
    return mem.groupby(["workload", "data_size"])["value"].median()


def path_of(tree: Path, name: str) -> Path:
    """The tree's table ``name`` ('validation/tiers'), as written (.csv) or stored compressed (.csv.gz)."""
    path = tree / f"{name}.csv"
    return path if path.exists() else path.with_suffix(".csv.gz")


def read(tree: Path, name: str) -> pd.DataFrame:
    """The tree's table ``name`` (:func:`path_of`) as read by pandas."""
    return pd.read_csv(path_of(tree, name), low_memory=False)


def bound(tree: Path) -> pd.DataFrame:
    """Per interior fold of a mean-latency series with siblings: the family, data size, the nested
    choice's absolute error (``model``), the bound's (``sibling``) and the oracle's (``sibling_oracle``)."""
    agg, tiers = tables.read_aggregated(path_of(tree, "aggregated")), read(tree, "validation/tiers")
    y, keys = series_matrix(agg)
    mem = in_memory(agg)
    t = tiers[(tiers["position"] == "interior") & (tiers["metric"] == "lat_mean") & tiers["series"].isin(y.columns)]
    rows = []
    for _, r in t.iterrows():
        s, d = r["series"], r["held_out"]
        k = keys.loc[s]
        sib = [c for c in y.columns if c != s and (keys.loc[c, SIBLING_KEYS] == k[SIBLING_KEYS]).all()]
        base_y = mem.get((k["workload"], k["data_size"]), 0.0)
        fits, oracle = [], []
        for c in sib:
            both = y[[c, s]].dropna()
            if d not in both.index or len(both) < MIN_DEVICES:
                continue
            train = both.drop(d)
            base_x = mem.get((keys.loc[c, "workload"], keys.loc[c, "data_size"]), 0.0) if base_y else 0.0
            for form in FORMS:
                f = fit(form, train[c].to_numpy(), train[s].to_numpy(), base_x, base_y)
                err = 100 * (f(both.at[d, c]) - both.at[d, s]) / both.at[d, s]
                fits.append((loo_error(form, train[c], train[s], base_x, base_y), err))
                oracle.append(abs(err))
        if not fits:
            continue
        rows.append({"family": family(pd.DataFrame([k])).iloc[0], "data_size": k["data_size"],
                     "model": abs(r["nested_pct_error"]), "sibling": abs(min(fits, key=lambda f: f[0])[1]),
                     "sibling_oracle": min(oracle)})
    return pd.DataFrame(rows)


def summary(rows: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per family and data size (and 'all'), the folds' mean errors; per family, the floor."""
    cols = ["model", "sibling", "sibling_oracle"]
    by_size = rows.groupby(["family", "data_size"])[cols].mean()
    total = rows.groupby("family")[cols].mean()
    v = verdicts[verdicts["metric"] == "lat_mean"]
    total["floor"] = v.groupby(family(v))["interior_floor_mape"].mean()
    total.index = pd.MultiIndex.from_arrays([total.index, ["all"] * len(total)], names=["family", "data_size"])
    out = pd.concat([by_size, total])
    order = sorted(out.index, key=lambda i: (i[0], i[1] == "all", 0 if i[1] == "all" else int(i[1])))
    return out.loc[order]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trees", nargs="+", type=Path)
    args = p.parse_args(argv)
    pd.set_option("display.width", 200)
    for tree in args.trees:
        print(f"== {tree}")
        print(summary(bound(tree), read(tree, "validation/verdicts")).round(1).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
