"""The local study's analysis on a stored set of its records (one real default run of this machine,
tests/data/local_records/): every analysis output equals the one the code wrote from the same records
before the restructuring of issue 38, with the model's outputs as issue 48 made them (no number at or
below zero, the anchored lines, the size stage's nearest fallback; tests/data/local_expected/, gzipped; the per-fold tables
are left out for their size: the summaries, selections and verdicts made from them are in). A change
that alters a number of the measured study's analysis fails here, as a change to the paper's tables
fails test_tables."""
import gzip
import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workflow_util import copy_workflow, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.imported]

DATA = Path(__file__).resolve().parent / "data"
EXPECTED = DATA / "local_expected"
#: columns gained after the expected outputs were written (issue 38: a feature's meaning as columns
#: beside its name; what a chosen model is, its form and feature keys, beside its label; issue 39:
#: the miss form's footprint beside each second-stage form; issue 50: the trimmed means stated at the
#: reference speed, other I/O and the speed probe in the quality table; issue 64: the nested choice's
#: scatter over noisy copies beside each tier, what the noise alone costs it beside each verdict)
ADDED = {"features.csv": ["engine", "setting"], "validation/nested_selection.csv": ["form", "figures"],
         "validation/multiple_selection.csv": ["selected_figures"], "validation/size_forms.csv": ["footprint"],
         "aggregated.csv": ["corrected"],
         "tables/quality.csv": ["io_counters", "other_mbps_median", "other_mbps_max", "cpu_ms_median",
                                "mem_ms_median"],
         "validation/tiers.csv": ["nested_scatter_pct"], "tables/validity_tiers.csv": ["nested_scatter_pct"],
         "validation/verdicts.csv": ["interior_noise_mape"],
         "tables/validity_verdicts.csv": ["interior_noise_mape"]}


def expected_files() -> list[str]:
    return sorted(str(p.relative_to(EXPECTED))[:-len(".gz")] for p in EXPECTED.rglob("*.csv.gz"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("stored") / "wf")
    shutil.copytree(DATA / "local_records", wd / "tests" / "data" / "local_records")
    snakemake(wd, "--configfile", "tests/data/local_records/study.yaml", timeout=1800)
    return wd / "results" / "stored"


def test_the_expected_outputs_are_there():
    names = expected_files()
    assert {"aggregated.csv", "features.csv", "screen.csv", "best.csv", "predictions.csv",
            "validation/verdicts.csv", "tables/validity_tiers.csv"} <= set(names)


#: Numbers written by another machine's floating point (another BLAS kernel, another SIMD path: the
#: same analysis, the last digits apart; a nearly singular multiple regression moves its eighth
#: digit) count as the same within this relative difference, or this absolute one (a percent error
#: near zero is a difference of two near-equal numbers).
RTOL, ATOL = 1e-7, 1e-9


def same_table(new: pd.DataFrame, old: pd.DataFrame) -> list[str]:
    """The columns of ``new`` that differ from ``old`` (both read as text): text equal, or numbers
    equal within :data:`RTOL` or :data:`ATOL`, empty cells where the other is empty."""
    if list(new.columns) != list(old.columns) or len(new) != len(old):
        return [f"shape {new.shape} columns {list(new.columns)} against {old.shape} {list(old.columns)}"]
    bad = []
    for c in new.columns:
        a, b = new[c].to_numpy(), old[c].to_numpy()
        if (a == b).all():
            continue
        x, y = pd.to_numeric(pd.Series(a), errors="coerce"), pd.to_numeric(pd.Series(b), errors="coerce")
        text = (a != b) & (x.isna().to_numpy() | y.isna().to_numpy())  # not a number on one side
        near = np.isclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True)
        if text.any() or not near[~text].all():
            bad.append(c)
    return bad


@pytest.mark.parametrize("name", expected_files())
def test_analysis_output_unchanged(stored, name):
    got, want = (stored / name).read_bytes(), gzip.decompress((EXPECTED / f"{name}.gz").read_bytes())
    if got == want:
        return
    new = pd.read_csv(io.BytesIO(got), keep_default_na=False, dtype=str)
    old = pd.read_csv(io.BytesIO(want), keep_default_na=False, dtype=str)
    if name in ADDED:
        assert set(ADDED[name]) <= set(new.columns)
        new = new.drop(columns=ADDED[name])
    differ = same_table(new, old)
    assert not differ, (name, differ)


def test_a_number_changed_is_seen_and_the_last_digits_are_not():
    """The comparison: a result moved by a millionth fails it, in its fifteenth digit it does not."""
    old = pd.DataFrame({"series": ["a", "b"], "mape": ["12.345678901234567", ""], "n": ["3", "4"]})
    assert not same_table(old.assign(mape=["12.345678901234569", ""]), old)
    assert same_table(old.assign(mape=["12.34569", ""]), old) == ["mape"]
    assert same_table(old.assign(mape=["12.345678901234567", "1.0"]), old) == ["mape"]
    assert same_table(old.assign(series=["a", "c"]), old) == ["series"]
    assert same_table(old.drop(columns="n"), old)
