"""benchcast.screening.floor: the standard error of a trimmed mean and what a perfect model still misses."""

import numpy as np
import pytest
from scipy.stats import norm

from benchcast import aggregate
from benchcast.screening import floor


def test_se_factor_of_an_untrimmed_mean_is_one_over_root_n():
    assert floor.se_factor(4, 0) == 0.5
    assert floor.se_factor(1, 0) == 1.0


def test_se_factor_of_the_median_of_three():
    # Var(median of 3 unit normals) = 1 - sqrt(3) / pi = 0.4487 (order statistics of the normal)
    assert floor.se_factor(3, 1) == pytest.approx(np.sqrt(1 - np.sqrt(3) / np.pi), rel=0.01)
    assert floor.se_factor(3, 1) == floor.se_factor(3, 1)  # deterministic


def test_se_factor_agrees_with_the_aggregate_trimmed_mean():
    """The factor is the spread of aggregate.trimmed_mean over samples of 5 unit normals."""
    rng = np.random.default_rng(7)
    tm = [aggregate.trimmed_mean(rng.standard_normal(5), 1) for _ in range(20000)]
    assert np.std(tm, ddof=1) == pytest.approx(floor.se_factor(5, 1), rel=0.03)
    assert floor.se_factor(5, 1) > floor.se_factor(5, 0)  # trimming costs efficiency on normal data


def test_se_factor_refuses_what_trims_everything():
    with pytest.raises(ValueError, match="cannot drop 1"):
        floor.se_factor(2, 1)


def test_se_pct_by_hand():
    se = floor.se_pct([100.0, 50.0, 10.0, 0.0], [10.0, 5.0, 1.0, 1.0], [4, 3, 1, 4], [0, 1, 0, 0])
    assert se[0] == pytest.approx(5.0)                          # 100 * 10 / sqrt(4) / 100
    assert se[1] == pytest.approx(10 * floor.se_factor(3, 1))   # 100 * 5 * 0.67 / 50
    assert np.isnan(se[2]) and np.isnan(se[3])                  # one run; a value that is not positive


def test_miss_probability_and_expected_misses_by_hand():
    p = floor.miss_probability([5.0, 0.0, np.nan], [10.0, 10.0, 10.0])
    assert p[0] == pytest.approx(2 * norm.cdf(-2)) and p[0] == pytest.approx(0.0455, abs=1e-4)
    assert p[1] == 0.0 and np.isnan(p[2])
    e = floor.expected_misses([5.0, 10.0, np.nan], [10.0, 15.0, 10.0])
    p1, p2 = 2 * norm.cdf(-2), 2 * norm.cdf(-1.5)
    assert e["cells"] == 2
    assert e["expected"] == pytest.approx(p1 + p2)
    assert e["p_none"] == pytest.approx((1 - p1) * (1 - p2))


def test_expected_abs_error_is_the_mean_absolute_normal():
    rng = np.random.default_rng(1)
    assert np.mean(np.abs(rng.normal(0, 8.0, 200000))) == pytest.approx(float(floor.expected_abs_error(8.0)), rel=0.01)


def test_truth_se_is_indexed_by_series_and_device():
    import pandas as pd

    rows = pd.DataFrame({"series": ["s", "s"], "device": ["disk", "zram"], "value": [100.0, 50.0],
                         "std": [10.0, 5.0], "n": [4, 3], "k": [0, 1]})
    se = floor.truth_se(rows)
    assert se[("s", "disk")] == pytest.approx(5.0)
    assert se[("s", "zram")] == pytest.approx(10 * floor.se_factor(3, 1))


def test_a_noisy_copy_moves_each_value_by_its_own_standard_error():
    """Of many rows of one standard error (10 runs, std 20 % of the value: se 6.3 %), the log steps
    scatter by that; a single run, a row without scatter and a published number stay as they are,
    and the corrected value moves by the same factor as the raw one."""
    import pandas as pd

    m = 4000
    rows = pd.DataFrame({"value": np.full(m, 50.0), "std": np.full(m, 10.0), "n": np.full(m, 10), "k": np.zeros(m),
                         "corrected": np.full(m, 40.0)})
    still = pd.DataFrame({"value": [7.0, 8.0, 9.0], "std": [1.0, 0.0, np.nan], "n": [1, 3, 1], "k": [0, 1, 0],
                          "corrected": [6.0, 7.0, np.nan]})
    out = floor.noisy(pd.concat([rows, still], ignore_index=True), np.random.default_rng(3))
    step = np.log(out["value"].iloc[:m] / 50.0)
    assert step.std() == pytest.approx(0.2 / np.sqrt(10), rel=0.05) and abs(step.mean()) < 0.005
    assert np.allclose(out["corrected"].iloc[:m] / 40.0, out["value"].iloc[:m] / 50.0)
    assert list(out["value"].iloc[m:]) == [7.0, 8.0, 9.0]


def test_the_same_draw_is_the_same_copy_and_a_table_without_scatter_has_none():
    import pandas as pd

    agg = pd.DataFrame({"value": [50.0, 60.0], "std": [5.0, 6.0], "n": [3, 3], "k": [1, 1]})
    one, again, two = floor.draw(agg, 1), floor.draw(agg.copy(), 1), floor.draw(agg, 2)
    assert one["value"].tolist() == again["value"].tolist() and one["value"].tolist() != two["value"].tolist()
    assert floor.has_noise(agg)
    published = agg.assign(std=np.nan, n=1)
    assert not floor.has_noise(published) and floor.draw(published, 1)["value"].tolist() == [50.0, 60.0]


def test_the_procedure_s_scatter_and_what_the_noise_alone_costs_it_by_hand():
    import pandas as pd
    draws = [pd.Series([100.0, 10.0], index=["a", "b"]), pd.Series([110.0, -1.0], index=["a", "b"]),
             pd.Series([90.0, np.nan], index=["a", "b"])]
    s = floor.scatter_pct(draws)
    assert s["a"] == pytest.approx(100 * np.std(np.log([100.0, 110.0, 90.0]), ddof=1))
    assert np.isnan(s["b"])  # one positive prediction: no scatter to tell
    assert floor.scatter_pct(draws[:1]).empty
    assert floor.noise_only(3.0, 4.0) == pytest.approx(5 * np.sqrt(2 / np.pi))
    assert floor.noise_only(0.0, 4.0) == pytest.approx(floor.expected_abs_error(4.0))  # no scatter: the floor
