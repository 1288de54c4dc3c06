"""The noise floor of a held-out error: how far even a perfect model's prediction lies from a
measured result, because the result itself is measured with noise.

A device's result is the trimmed mean of ``n`` runs (``k`` dropped at each end). Its standard error
is ``std * factor(n, k)``, where ``std`` is the runs' standard deviation and ``factor`` the standard
error of the trimmed mean of ``n`` draws from a unit normal (``1 / sqrt(n)`` with nothing trimmed;
about 0.67 for the median of 3). A model that predicts the device's true mean still misses the
measured result by more than ``limit`` % with probability ``2 * Phi(-limit / se_pct)`` (normal
errors). Summed over the cells a criterion checks, that is the number of misses to expect from the
measurement alone, and the product of ``1 - p`` the chance that none misses.

The floor counts only the scatter between the runs of one study; drift between studies (the machine
is faster one hour than the next) comes on top of it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import special

#: Draws of the Monte Carlo estimate of a trimmed mean's standard error (fixed seed: deterministic).
DRAWS = 200_000


@lru_cache(maxsize=None)
def se_factor(n: int, k: int = 0) -> float:
    """The standard error of the mean of the middle ``n - 2k`` of ``n`` unit-normal draws."""
    n, k = int(n), int(k)
    if n < 1 or k < 0 or n - 2 * k < 1:
        raise ValueError(f"a trimmed mean of {n} runs cannot drop {k} at each end")
    if k == 0:
        return float(1 / np.sqrt(n))
    x = np.sort(np.random.default_rng(0).standard_normal((DRAWS, n)), axis=1)
    return float(x[:, k:n - k].mean(axis=1).std(ddof=1))


def se_pct(value, std, n, k) -> np.ndarray:
    """Standard error of each trimmed mean ``value`` (of ``n`` runs, ``k`` trimmed, runs' ``std``),
    in percent of it. NaN for a single run (no scatter to measure) or a value that is not positive."""
    value, std = np.asarray(value, dtype=float), np.asarray(std, dtype=float)
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    factor = np.array([se_factor(int(a), int(b)) if a >= 2 and a - 2 * b >= 1 else np.nan
                       for a, b in zip(np.ravel(n), np.ravel(k))]).reshape(np.shape(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(value > 0, 100 * std * factor / value, np.nan)


def truth_se(results: pd.DataFrame) -> pd.Series:
    """:func:`se_pct` of every application result (the rows of
    :func:`benchcast.features.series_table`: ``value``, ``std``, ``n``, ``k``), indexed by
    (series label, device) as the held-out tiers are."""
    return pd.Series(se_pct(results["value"], results["std"], results["n"], results["k"]),
                     index=pd.MultiIndex.from_arrays([results["series"], results["device"]]))


def miss_probability(se, limit) -> np.ndarray:
    """Probability that a perfect prediction misses a result with standard error ``se`` % by more
    than ``limit`` %: ``2 * Phi(-limit / se)``. NaN where ``se`` is NaN; 0 where ``se`` is 0."""
    se, limit = np.asarray(se, dtype=float), np.asarray(limit, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, 2 * special.ndtr(-limit / se), np.where(se == 0, 0.0, np.nan))


def scatter_pct(draws: list[pd.Series]) -> pd.Series:
    """Per index label, how much a procedure's prediction moves between noisy copies of the
    measurement (``draws``: its predictions on each copy, :func:`draw`): the standard deviation of
    the log prediction, in percent. NaN with fewer than two positive predictions; empty without two
    draws."""
    if len(draws) < 2:
        return pd.Series(dtype=float)
    p = pd.concat(draws, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * np.log(p.where(p > 0)).std(axis=1, ddof=1)


def noise_only(scatter, se) -> np.ndarray:
    """The mean absolute percent error of a procedure with no bias of its own whose predictions
    scatter by ``scatter`` % between noisy copies of the measurement (:func:`scatter_pct`), against
    results with standard errors ``se`` %: ``sqrt(2 / pi) * sqrt(scatter^2 + se^2)``, what the
    measured noise alone costs that procedure (at least :func:`expected_abs_error`)."""
    scatter, se = np.asarray(scatter, dtype=float), np.asarray(se, dtype=float)
    return np.sqrt(2 / np.pi) * np.sqrt(scatter**2 + se**2)


def expected_abs_error(se) -> np.ndarray:
    """The mean absolute percent error of a perfect prediction of results with standard errors
    ``se`` %: ``se * sqrt(2 / pi)`` (the mean of a normal's absolute value); comparable with a MAPE."""
    return np.asarray(se, dtype=float) * np.sqrt(2 / np.pi)


def expected_misses(se, limit) -> dict:
    """Over a set of checked cells (standard errors ``se`` %, limits ``limit`` %): how many
    ``cells`` carry a standard error, the ``expected`` number a perfect model misses, and
    ``p_none``, the chance it misses none."""
    p = pd.Series(np.broadcast_to(miss_probability(se, limit), np.shape(se))).dropna()
    return {"cells": int(len(p)), "expected": float(p.sum()), "p_none": float(np.prod(1 - p.to_numpy()))}


def noisy(agg: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A copy of an aggregated table (``value``, ``std``, ``n``, ``k`` per row) as another draw of
    the same measurement might have given it: every value moved by a normal draw of its own
    standard error (:func:`se_pct`) on the log scale, ``corrected`` by the same factor; rows without
    one (a single run, no scatter, a published number; a table without ``std``, ``n`` and ``k``) as
    they are."""
    se = _se(agg)
    if se is None:
        return agg.copy()
    step = np.exp(np.where(np.isfinite(se), se / 100, 0.0) * rng.standard_normal(len(agg)))
    out = agg.assign(value=agg["value"] * step)
    return out.assign(corrected=pd.to_numeric(out["corrected"], errors="coerce") * step) if "corrected" in out else out


def has_noise(agg: pd.DataFrame) -> bool:
    """Whether any value of ``agg`` has a standard error (:func:`se_pct`): a table of single runs or
    published numbers (or without the columns ``std``, ``n`` and ``k``) has none, and every noisy
    copy of it is the table itself."""
    return _se(agg) is not None


def _se(agg: pd.DataFrame) -> np.ndarray | None:
    """:func:`se_pct` of every row of ``agg``; None where no row has one (or the columns are missing)."""
    if not {"value", "std", "n", "k"} <= set(agg.columns):
        return None
    se = se_pct(agg["value"], agg["std"], agg["n"], agg["k"])
    return se if np.isfinite(se).any() else None


def draw(agg: pd.DataFrame, d: int, seed: int = 0) -> pd.DataFrame:
    """The ``d``-th noisy copy of ``agg`` (:func:`noisy`), the same wherever it is made from the
    same table: its generator is seeded by (``seed``, ``d``), so that the rule that validates and
    the rule that predicts the cards draw the same copies."""
    return noisy(agg, np.random.default_rng([seed, d]))
