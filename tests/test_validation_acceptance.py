"""benchcast.validation.acceptance: issue 10's criteria over a small validity table made by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from benchcast.validation import acceptance, verdicts


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
    labels = pd.DataFrame({"series": ["w", "r", "off", "flat", "few"], "verdict": [
        verdicts.VERDICT_BETTER, verdicts.VERDICT_PREDICTABLE, verdicts.VERDICT_OFF_PATH,
        verdicts.VERDICT_INDEPENDENT, verdicts.VERDICT_FEW]})
    tiers.to_csv(tmp_path / "validation" / "tiers.csv", index=False)
    labels.to_csv(tmp_path / "validation" / "verdicts.csv", index=False)
    inner, failures = acceptance.check(tmp_path)
    assert len(inner) == 6
    assert failures == ["w on zram: 12.0 % > 10 %", "r on slow: 16.0 % > 15 %", f"few: {verdicts.VERDICT_FEW}"]


def test_noise_floor_counts_the_judged_tiers_only(tmp_path):
    """Expected misses of a perfect model over the judged tiers, by hand: a write with a 5 %
    standard error against 10 % (p = 2 Phi(-2)), a read with 10 % against 15 % (2 Phi(-1.5)); the
    extreme tier, the device-independent read and a tier without a standard error do not count."""
    from scipy.stats import norm

    (tmp_path / "validation").mkdir()
    pd.DataFrame([
        ("w", "update", "disk", "interior", 1.0, 5.0),
        ("w", "update", "dram", "extreme", 1.0, 50.0),
        ("w", "update", "zram", "interior", 1.0, float("nan")),
        ("r", "read", "disk", "interior", 1.0, 10.0),
        ("flat", "read", "disk", "interior", 1.0, 40.0),
    ], columns=["series", "op", "held_out", "position", "nested_pct_error", "truth_se_pct"]).to_csv(
        tmp_path / "validation" / "tiers.csv", index=False)
    pd.DataFrame({"series": ["w", "r", "flat"], "verdict": [
        verdicts.VERDICT_BETTER, verdicts.VERDICT_PREDICTABLE, verdicts.VERDICT_INDEPENDENT]}).to_csv(
        tmp_path / "validation" / "verdicts.csv", index=False)
    inner, failures = acceptance.check(tmp_path)
    assert failures == []
    f = acceptance.noise_floor(inner)
    p1, p2 = 2 * norm.cdf(-2), 2 * norm.cdf(-1.5)
    assert f["cells"] == 2
    assert f["expected"] == pytest.approx(p1 + p2)
    assert f["p_none"] == pytest.approx((1 - p1) * (1 - p2))
