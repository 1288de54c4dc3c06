"""How much faster is the vectorised screening than one scikit-learn fit per (series, feature)?

Synthetic grid: 10,000 series x 20 features over 6 devices (some values missing). Prints both
timings, the ratio, and the largest differences in a, b and R^2 between the two.

    .venv/bin/python benchmarks/screen_speed.py [--series 10000 --features 20 --devices 6]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from benchcast import fits  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--devices", type=int, default=6)
    args = ap.parse_args()
    rng = np.random.default_rng(42)
    X = rng.lognormal(3, 1.5, size=(args.features, args.devices))
    coef = rng.normal(10, 3, size=(args.series, 1))
    Y = coef * X[rng.integers(0, args.features, args.series)] + rng.normal(1000, 200, size=(args.series, args.devices))
    Y[rng.random(Y.shape) < 0.02] = np.nan  # a few missing results

    t0 = time.perf_counter()
    f = fits.simple(Y, X, min_n=3)
    a, b, r2 = f.a, f.b, f.r2
    t_vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    ra = np.full_like(a, np.nan)
    rb = np.full_like(a, np.nan)
    rr = np.full_like(a, np.nan)
    for t in range(args.series):
        for f in range(args.features):
            m = ~np.isnan(Y[t]) & ~np.isnan(X[f])
            if m.sum() < 3:
                continue
            x = X[f, m][:, None]
            model = LinearRegression().fit(x, Y[t, m])
            ra[t, f], rb[t, f], rr[t, f] = model.coef_[0], model.intercept_, model.score(x, Y[t, m])
    t_loop = time.perf_counter() - t0

    def maxrel(u, v):
        ok = ~np.isnan(v)
        assert (np.isnan(u) == np.isnan(v)).all(), "the two disagree on which pairs can be fitted"
        return float(np.max(np.abs(u[ok] - v[ok]) / np.maximum(np.abs(v[ok]), 1e-12)))

    pairs = args.series * args.features
    print(f"grid: {args.series} series x {args.features} features x {args.devices} devices = {pairs} fits")
    print(f"vectorised closed form: {t_vec:.3f} s")
    print(f"scikit-learn loop:      {t_loop:.3f} s")
    print(f"speed-up:               {t_loop / t_vec:.0f}x")
    dr2 = float(np.nanmax(np.abs(r2 - rr)))  # R^2 lies in [0, 1]: absolute difference
    print(f"max relative difference: a {maxrel(a, ra):.1e}, b {maxrel(b, rb):.1e}; max |R^2 difference| {dr2:.1e}")
    same = maxrel(a, ra) < 1e-8 and maxrel(b, rb) < 1e-8 and dr2 < 1e-10
    print("same a, b and R^2:", "yes" if same else "NO")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
