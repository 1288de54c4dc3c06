"""benchmarks/acceptance.py: issue 10's criteria over a small validity table made by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

from benchcast import heldout

ROOT = Path(__file__).resolve().parents[1]


def _acceptance():
    spec = importlib.util.spec_from_file_location("acceptance", ROOT / "benchmarks" / "acceptance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_criteria_count_tiers_over_the_tolerance_and_unlabelled_series(tmp_path):
    (tmp_path / "validation").mkdir()
    tiers = pd.DataFrame([
        # series, op, held_out, position, nested_pct_error
        ("w", "update", "disk", "interior", -9.9),      # within 10 %
        ("w", "update", "zram", "interior", 12.0),      # a write over 10 %: fails
        ("w", "update", "dram", "extreme", 80.0),       # extremes are not judged
        ("r", "read", "disk", "interior", 14.0),        # a read within 15 %
        ("r", "read", "slow", "interior", -16.0),       # over 15 %: fails
        ("off", "read", "slow", "interior", 40.0),      # off the device's path: not judged
        ("flat", "read", "slow", "interior", 30.0),     # device-independent by its results
    ], columns=["series", "op", "held_out", "position", "nested_pct_error"])
    verdicts = pd.DataFrame({"series": ["w", "r", "off", "flat", "few"], "verdict": [
        heldout.VERDICT_BETTER, heldout.VERDICT_PREDICTABLE, heldout.VERDICT_OFF_PATH,
        heldout.VERDICT_INDEPENDENT, heldout.VERDICT_FEW]})
    tiers.to_csv(tmp_path / "validation" / "tiers.csv", index=False)
    verdicts.to_csv(tmp_path / "validation" / "verdicts.csv", index=False)
    inner, failures = _acceptance().check(tmp_path)
    assert len(inner) == 6
    assert failures == ["w on zram: 12.0 % > 10 %", "r on slow: 16.0 % > 15 %", f"few: {heldout.VERDICT_FEW}"]
