"""Repeat until stable (benchcast.sources.run.repeats): the stopping rule replayed on synthetic sequences and
computed by hand."""
import numpy as np
import pandas as pd
import pytest

from benchcast import records
from benchcast.sources.run import repeats


@pytest.mark.parametrize("values, expect", [
    ([100, 101, 99, 150, 50], 3),            # CV of the first three is 1 %: stop at the minimum
    ([100, 140, 60, 101, 99, 100], 6),       # 40 % spread never settles: the cap
    ([100, 130, 101, 100, 99, 100], 6),      # the outlier keeps the CV of all runs above 5 %
    ([100, 100, 100, 100], 3),
])
def test_runs_until_stable_on_synthetic_sequences(values, expect):
    assert repeats.runs_until_stable(values, repeats=3, max_repeats=6, stable_cv=5) == expect


def test_repeat_rule_by_hand():
    # runs 100, 110: std 7.071, mean 105 -> CV 6.73 %; with 105 added: std 5, mean 105 -> 4.76 %
    assert repeats.runs_until_stable([100, 110, 105, 300], repeats=2, max_repeats=4, stable_cv=5) == 3
    assert repeats.runs_until_stable([100, 110, 105, 300], repeats=2, max_repeats=4, stable_cv=7) == 2
    assert repeats.runs_until_stable([100, 110], repeats=2, max_repeats=2, stable_cv=0) == 2
    one = records.make([{"op": "x", "metric": "lat_mean", "unit": "us", "value": 5.0, "run": 0}],
                       study="s", source="s", device="d", benchmark="b", workload="w")
    needed, cv = repeats.needs_another_run(one, 50)
    assert needed and cv != cv  # one run: no CV yet, run again
    two = pd.concat([one, one.assign(value=5.5, run=1)])
    needed, cv = repeats.needs_another_run(two, 10)
    assert not needed and cv == pytest.approx(100 * np.std([5.0, 5.5], ddof=1) / 5.25)
