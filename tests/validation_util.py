"""Small studies built by hand for the tests of benchcast.validation, and leave-one-out by the
closed-form formulas."""

import copy

import numpy as np
from scipy import stats

from analysis_util import CONFIG, make_agg
from benchcast import config, validation
from benchcast.screening import screen

F64 = ("randwrite", 65536, "lat_mean")
F4 = ("randwrite", 4096, "lat_mean")
FBW = ("randwrite", 65536, "bw")


def hand_loo(x, y, alpha=0.05):
    """Leave-one-out predictions and intervals of y = a + b x, by the closed-form formulas."""
    out = []
    for i in range(len(x)):
        xs, ys = np.delete(x, i), np.delete(y, i)
        n = len(xs)
        xbar, ybar = xs.mean(), ys.mean()
        sxx = ((xs - xbar) ** 2).sum()
        b = ((xs - xbar) * (ys - ybar)).sum() / sxx
        a = ybar - b * xbar
        pred = a + b * x[i]
        if n > 2:
            s = np.sqrt(((ys - a - b * xs) ** 2).sum() / (n - 2))
            half = stats.t.ppf(1 - alpha / 2, n - 2) * s * np.sqrt(1 + 1 / n + (x[i] - xbar) ** 2 / sxx)
        else:
            half = np.nan
        out.append((pred, pred - half, pred + half))
    return np.array(out)


def four_devices():
    x64 = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 25.0}
    x4 = {"a": 3.0, "b": 1.0, "c": 7.0, "d": 2.0}
    bw = {"a": 900.0, "b": 500.0, "c": 300.0, "d": 350.0}
    y = {"a": 130.0, "b": 190.0, "c": 430.0, "d": 270.0}
    feats = {d: {F64: x64[d], F4: x4[d], FBW: bw[d]} for d in x64}
    return make_agg(feats, y), x64, x4, y


def pooled(n_dev, sizes=(2, 8, 32), noise=1.0, seed=5):
    rng = np.random.default_rng(seed)
    devs = [f"d{i}" for i in range(n_dev)]
    x1 = dict(zip(devs, rng.uniform(10, 100, n_dev)))
    x2 = dict(zip(devs, rng.uniform(1, 10, n_dev)))
    feats = {d: {F64: x1[d], F4: x2[d]} for d in devs}
    res = {d: {s * 10**9: 100 + 5 * x1[d] + 2 * s + rng.normal(0, noise) for s in sizes} for d in devs}
    return make_agg(feats, res), devs


def six_tiers():
    """Six devices; y = 50 + 2 x64 exactly except on device e (+20 %), so x64 predicts well; x4 is noise."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0}
    x4 = {"a": 5.0, "b": 1.0, "c": 4.0, "d": 2.0, "e": 6.0, "f": 3.0}
    y = {d: 50 + 2 * x64[d] for d in x64}
    y["e"] *= 1.2
    feats = {d: {F64: x64[d], F4: x4[d]} for d in x64}
    return make_agg(feats, y), x64, x4, y


def noisy_study(bag: int):
    """Six devices, one figure, a YCSB series along it with runs' scatter (std 8 % of each value, three
    runs, one trimmed): the study, its aggregated table and its screening, ``validate.bag`` ``bag``."""
    fig = {"a": 5.0, "b": 40.0, "c": 90.0, "d": 150.0, "e": 260.0, "f": 400.0}
    agg = make_agg({d: {("randread", 16384, "lat_mean"): v} for d, v in fig.items()},
                   {d: 30 + 1.8 * v + (7.0 if i % 2 else -7.0) for i, (d, v) in enumerate(fig.items())})
    agg = agg.assign(std=0.08 * agg["value"], k=1)
    settings = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]["validate"]
    feats = {"workloads": ["randread"], "block_sizes": ["16K"], "metrics": ["lat_mean"]}
    study = validation.Study(features=feats, series=None, pairing=[{"when": {}, "workloads": ["randread"]}],
                             settings=validation.Settings.of({**settings, "bag": bag}))
    return study, agg, screen.screen(agg, feats, None, study.pairing, 3)
