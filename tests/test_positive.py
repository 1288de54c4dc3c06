"""benchcast.fits.positive: a result that cannot be zero is never shown at or below zero."""
import numpy as np
import pandas as pd
import pytest

from benchcast.fits import positive


def test_a_lower_bound_below_zero_is_mirrored_on_the_log_scale():
    p, lo, hi, flag = positive.positive([100.0, 100.0, 50.0], [-20.0, 0.0, 10.0], [220.0, 400.0, 90.0],
                                        ["", "zero residual df", ""])
    assert p.tolist() == [100.0, 100.0, 50.0]
    # 100^2 / 220 and 100^2 / 400; the third interval was above zero: kept
    assert lo == pytest.approx([10000 / 220, 25.0, 10.0])
    assert hi.tolist() == [220.0, 400.0, 90.0]
    assert flag[0] == positive.FLAG_MIRRORED and flag[2] == ""
    assert flag[1] == "zero residual df; " + positive.FLAG_MIRRORED
    assert (lo > 0).all() and (lo <= p).all() and (p <= hi).all()


def test_a_prediction_at_or_below_zero_is_refused_with_its_interval():
    p, lo, hi, flag = positive.positive([-91143.0, 0.0, np.nan], [-173348.0, -5.0, np.nan], [-8938.0, 5.0, np.nan])
    assert np.isnan(p).all() and np.isnan(lo).all() and np.isnan(hi).all()
    assert list(flag[:2]) == [positive.FLAG_REFUSED] * 2 and flag[2] == ""  # missing stays missing, unflagged


def test_a_missing_upper_bound_leaves_no_lower_bound():
    p, lo, hi, flag = positive.positive([10.0], [-1.0], [np.nan])
    assert p[0] == 10.0 and np.isnan(lo[0]) and flag[0] == positive.FLAG_MIRRORED


def test_rows_recompute_errors_and_coverage():
    rows = pd.DataFrame({"truth": [80.0, 100.0], "prediction": [100.0, -5.0], "lower": [-10.0, -50.0],
                         "upper": [200.0, 40.0], "interval_flag": ["", ""], "abs_error": [20.0, 105.0],
                         "pct_error": [25.0, -105.0], "covered": [True, True]})
    out = positive.positive_rows(rows)
    assert out["lower"].iloc[0] == pytest.approx(50.0) and bool(out["covered"].iloc[0])
    assert np.isnan(out["prediction"].iloc[1]) and np.isnan(out["pct_error"].iloc[1])
    assert out["covered"].isna().iloc[1] and out["interval_flag"].iloc[1] == positive.FLAG_REFUSED
    assert rows["lower"].iloc[0] == -10.0  # the input untouched
