"""benchmarks/floor.py: the measure-again oracle over trees made by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis_util import benchmark
from benchcast.validation import verdicts


def _tree(path: Path, truths: dict, errors: dict) -> Path:
    (path / "validation").mkdir(parents=True)
    pd.DataFrame([("w", "e", "update", d, "interior", truths[d], errors[d], 3.0) for d in truths],
                 columns=["series", "engine", "op", "held_out", "position", "truth", "nested_pct_error", "truth_se_pct"]
                 ).to_csv(path / "validation" / "tiers.csv", index=False)
    pd.DataFrame({"series": ["w"], "verdict": [verdicts.VERDICT_BETTER]}).to_csv(
        path / "validation" / "verdicts.csv", index=False)
    return path


def test_other_runs_predicts_each_tree_by_the_geometric_mean_of_the_others(tmp_path):
    a = _tree(tmp_path / "a", {"disk": 100.0, "zram": 50.0}, {"disk": 5.0, "zram": 20.0})
    b = _tree(tmp_path / "b", {"disk": 100.0, "zram": 40.0}, {"disk": -12.0, "zram": 1.0})
    c = _tree(tmp_path / "c", {"disk": 110.25, "zram": 40.0}, {"disk": 0.0, "zram": 0.0})
    fl = benchmark("floor")
    out = fl.other_runs({str(t): fl.judged(t) for t in (a, b, c)}).set_index("tree")
    # a on disk: sqrt(100 * 110.25) = 105 -> +5 %; a on zram: 40 -> -20 % (a miss)
    # b on disk: 105 -> +5 %; b on zram: sqrt(50 * 40) = 44.7 -> +11.8 % (a miss)
    # c on disk: 100 -> -9.3 %; c on zram: 44.7 -> +11.8 % (a miss)
    assert out["other_runs_misses"].to_dict() == {str(a): 1, str(b): 1, str(c): 1}
    assert out.loc[str(c), "other_runs_mape"] == pytest.approx(
        50 * (abs(100 / 110.25 - 1) + abs(np.sqrt(2000) / 40 - 1)))
    assert out["nested_misses"].to_dict() == {str(a): 1, str(b): 1, str(c): 0}
    assert out["judged"].tolist() == [2, 2, 2]
    # one series: each (engine, kind, tier) family is one tier, so the family counts are the same
    assert out["other_runs_family_misses"].tolist() == out["other_runs_misses"].tolist()
    assert out["families"].tolist() == [2, 2, 2]


def test_family_misses_average_the_series_of_an_engine_kind_and_tier():
    """Two write series of one engine on one tier: one is missed by 20 %, the other by 0 %; their
    family's mean (10 %) is within the 10 % limit, so the lenient reading counts no miss."""
    def table(t1, t2, e1, e2):
        return pd.DataFrame({"series": ["s1", "s2"], "engine": "e", "kind": "write", "held_out": "disk",
                             "truth": [t1, t2], "limit": 10.0, "nested_pct_error": [e1, e2]})
    tabs = {"a": table(100.0, 50.0, 25.0, 0.0), "b": table(120.0, 50.0, 1.0, 1.0), "c": table(120.0, 50.0, 1.0, 1.0)}
    out = benchmark("floor").other_runs(tabs).set_index("tree")
    # a: s1 predicted by 120 -> +20 % (a miss), s2 by 50 -> 0 %: family mean 10 %, not over 10
    assert out.loc["a", "other_runs_misses"] == 1 and out.loc["a", "other_runs_family_misses"] == 0
    assert out.loc["a", "nested_misses"] == 1 and out.loc["a", "nested_family_misses"] == 1  # (25 + 0) / 2
    # b: s1 predicted by sqrt(100 * 120) = 109.5 -> -8.7 %: no miss either way
    assert out.loc["b", "other_runs_misses"] == 0 and out.loc["b", "families"] == 1
