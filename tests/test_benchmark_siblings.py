"""benchmarks/siblings.py: the bound of one device figure from the applications' own sibling series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis_util import benchmark

STORED = Path(__file__).parent / "data" / "local_expected"


@pytest.fixture(scope="module")
def sib():
    return benchmark("siblings")


def test_each_form_maps_a_sibling_that_is_a_multiple_exactly(sib):
    x = np.array([10.0, 20.0, 40.0, 80.0])
    for form, y, base_x, base_y in (("ratio", 3 * x, 0.0, 0.0), ("excess", 5 + 2 * (x - 1), 1.0, 5.0),
                                    ("loglog", 0.5 * x ** 1.5, 0.0, 0.0)):
        f = sib.fit(form, x, y, base_x, base_y)
        assert f(160.0) == pytest.approx({"ratio": 480.0, "excess": 5 + 2 * 159.0, "loglog": 0.5 * 160 ** 1.5}[form])


def test_leave_one_out_error_counts_each_device_once(sib):
    import pandas as pd

    x = pd.Series([10.0, 20.0, 40.0], index=["a", "b", "c"])
    y = pd.Series([20.0, 40.0, 120.0], index=x.index)  # c is 3x, a and b 2x
    # a left out: median of (2, 3) = 2.5 -> 25 vs 20 (25 %); b: 2.5 -> 50 vs 40 (25 %); c: 2 -> 80 vs 120 (33 %)
    assert sib.loo_error("ratio", x, y, 0.0, 0.0) == pytest.approx((0.25 + 0.25 + 1 / 3) / 3)


def test_the_stored_run_bound_per_family_and_size(sib):
    rows = sib.bound(STORED)
    tiers = sib.read(STORED, "validation/tiers")
    interior = tiers[(tiers["position"] == "interior") & (tiers["metric"] == "lat_mean")]
    # the stored run's swap series have three tiers: a held-out device leaves two to choose a
    # sibling on, fewer than the nested choice needs (MIN_DEVICES), so swap has no bound
    assert set(tiers[tiers["engine"] == "swap"]["held_out"]) == {"disk", "slow", "zram"}
    assert set(rows["family"]) == {"mmap", "mariadb read", "mariadb write", "rocksdb read", "rocksdb write"}
    assert 0 < len(rows) <= len(interior)
    # the oracle picks with the truth: never worse than the procedure that picks without it
    assert (rows["sibling_oracle"] <= rows["sibling"] + 1e-9).all()
    assert np.isfinite(rows[["model", "sibling", "sibling_oracle"]]).all().all()
    # the model's column is the tree's own nested choice, fold for fold
    mm = interior[interior["engine"] == "mmap"]["nested_pct_error"].abs()
    assert rows[rows["family"] == "mmap"]["model"].mean() == pytest.approx(mm.mean())
    table = sib.summary(rows, sib.read(STORED, "validation/verdicts"))
    assert table.loc[("mmap", "all"), "floor"] > 0
    assert {"model", "sibling", "sibling_oracle"} <= set(table.columns)
