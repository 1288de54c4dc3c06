"""How many runs a measurement gets: repeat until stable.

After a source's ``repeats`` runs of a fio cell or YCSB job, another run is made while the
coefficient of variation of ``lat_mean`` over the runs so far (the largest over the measurements
of that cell or job) is above ``stable_cv`` percent, up to ``max_repeats`` runs. The measuring jobs
ask :func:`needs_another_run` with the records of the earlier runs; :func:`runs_until_stable`
replays the rule on a sequence of results (tests, documentation).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import records
from ...records import cv  # noqa: F401  (re-exported: the repeat rule's measure)


def max_cv(recs: pd.DataFrame, metric: str = "lat_mean") -> float:
    """The largest coefficient of variation (percent) over the runs of any measurement of ``metric``
    in ``recs`` (std with ddof=1); NaN when no measurement has two runs."""
    sel = recs[recs["metric"] == metric]
    stats = sel.groupby(records.KEY_COLUMNS, dropna=False)["value"].agg(["std", "mean", "size"])
    stats = stats[stats["size"] >= 2]
    if stats.empty:
        return float("nan")
    return float(np.nanmax(cv(stats["std"], stats["mean"])) * 100)


def needs_another_run(previous: pd.DataFrame, stable_cv: float, metric: str = "lat_mean") -> tuple[bool, float]:
    """The stopping rule: another run is needed while the CV of the runs so far (:func:`max_cv`)
    is above ``stable_cv`` percent. Returns (needed, CV); with fewer than two runs of every
    measurement, another run is needed."""
    c = max_cv(previous, metric)
    return (bool(np.isnan(c) or c > stable_cv), c)


def not_needed(previous: list, stable_cv: float, metric: str = "lat_mean") -> str | None:
    """Why a run beyond ``repeats`` is not needed, or None when it is: ``previous`` holds the
    earlier runs' records, None for a run that was itself not needed (then neither is this one)."""
    if any(r is None for r in previous):
        return "an earlier run was not needed either"
    needed, c = needs_another_run(pd.concat(previous, ignore_index=True), stable_cv, metric)
    return None if needed else f"stable: CV {c:.2f} % <= {stable_cv:g} % over {len(previous)} runs"


def runs_until_stable(values, repeats: int, max_repeats: int, stable_cv: float) -> int:
    """How many runs of one measurement whose successive results are ``values`` the rule takes:
    at least ``repeats``, then one more while :func:`needs_another_run`, at most ``max_repeats``."""
    n = min(repeats, max_repeats)
    while n < max_repeats:
        recs = records.make([{"op": "x", "metric": "lat_mean", "unit": "us", "value": v, "run": i}
                             for i, v in enumerate(values[:n])],
                            study="s", source="s", device="d", benchmark="b", workload="w")
        if not needs_another_run(recs, stable_cv)[0]:
            break
        n += 1
    return n
