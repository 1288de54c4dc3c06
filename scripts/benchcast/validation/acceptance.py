"""Issue 10's acceptance criteria over a study's validity tables (``validation/tiers.csv`` and
``validation/verdicts.csv``, or :func:`benchcast.validation.study.run_study`'s tables):

* write-latency series (update, insert) of every engine: nested-choice held-out error <=
  :data:`WRITE_TOLERANCE` % on every interior tier;
* read-latency series that depend on the device: <= :data:`READ_TOLERANCE` % on every interior
  tier;
* every series beats its baseline (the mean of the other devices) or is labelled
  device-independent.

``benchmarks/acceptance.py`` measures extra tiers and checks a study by them;
``benchmarks/floor.py`` scores perfect models on the tiers they judge (:func:`noise_floor`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..screening import floor
from .verdicts import DEVICE_INDEPENDENT, VERDICT_BETTER, VERDICT_PREDICTABLE

WRITE_OPS = ("update", "insert")
WRITE_TOLERANCE = 10.0
READ_TOLERANCE = 15.0


def criteria(tiers: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The interior tiers' errors per series of ``tiers`` (with the ``limit`` each is judged by, NaN
    where it is not judged, and its ``kind``: write, read or other) and the list of failed
    criteria, from the tier and verdict tables (:func:`benchcast.validation.verdicts.tiers`,
    :func:`benchcast.validation.verdicts.verdicts`)."""
    independent = set(verdicts.loc[verdicts["verdict"].isin(DEVICE_INDEPENDENT), "series"])
    inner = tiers[tiers["position"] == "interior"].copy()
    inner["kind"] = inner["op"].map(lambda op: "write" if op in WRITE_OPS else ("read" if op == "read" else "other"))
    inner["limit"] = float("nan")
    inner.loc[inner["kind"] == "write", "limit"] = WRITE_TOLERANCE
    inner.loc[(inner["kind"] == "read") & ~inner["series"].isin(independent), "limit"] = READ_TOLERANCE
    failures = []
    for row in inner[inner["limit"].notna()].itertuples():
        err = abs(row.nested_pct_error)
        if not err <= row.limit:
            failures.append(f"{row.series} on {row.held_out}: {err:.1f} % > {row.limit:g} %")
    for v in verdicts.itertuples():
        if v.verdict not in (VERDICT_PREDICTABLE, VERDICT_BETTER, *DEVICE_INDEPENDENT):
            failures.append(f"{v.series}: {v.verdict}")
    return inner, failures


def check(tree: Path) -> tuple[pd.DataFrame, list[str]]:
    """:func:`criteria` of a study tree's ``validation/tiers.csv`` and ``validation/verdicts.csv``."""
    tree = Path(tree)
    return criteria(pd.read_csv(tree / "validation" / "tiers.csv"), pd.read_csv(tree / "validation" / "verdicts.csv"))


def noise_floor(inner: pd.DataFrame) -> dict:
    """What a perfect model would score on the judged tiers, from the truths' standard errors
    alone (:mod:`benchcast.screening.floor`): cells with a standard error, expected misses, P(no miss)."""
    judged = inner[inner["limit"].notna()]
    se = judged["truth_se_pct"] if "truth_se_pct" in judged else pd.Series(float("nan"), index=judged.index)
    return floor.expected_misses(se.to_numpy(dtype=float), judged["limit"].to_numpy(dtype=float))
