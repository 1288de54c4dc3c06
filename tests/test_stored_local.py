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

import pandas as pd
import pytest

from workflow_util import copy_workflow, snakemake

pytestmark = pytest.mark.workflow

DATA = Path(__file__).resolve().parent / "data"
EXPECTED = DATA / "local_expected"
#: columns gained after the expected outputs were written (issue 38: a feature's meaning as columns
#: beside its name; what a chosen model is, its form and feature keys, beside its label; issue 39:
#: the miss form's footprint beside each second-stage form; issue 50: the trimmed means stated at the
#: reference speed, other I/O and the speed probe in the quality table)
ADDED = {"features.csv": ["engine", "setting"], "validation/nested_selection.csv": ["form", "figures"],
         "validation/multiple_selection.csv": ["selected_figures"], "validation/size_forms.csv": ["footprint"],
         "aggregated.csv": ["corrected"],
         "tables/quality.csv": ["io_counters", "other_mbps_median", "other_mbps_max", "cpu_ms_median",
                                "mem_ms_median"]}


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


@pytest.mark.parametrize("name", expected_files())
def test_analysis_output_unchanged(stored, name):
    got, want = (stored / name).read_bytes(), gzip.decompress((EXPECTED / f"{name}.gz").read_bytes())
    if name not in ADDED:
        assert got == want, name
        return
    new = pd.read_csv(io.BytesIO(got), keep_default_na=False, dtype=str)
    old = pd.read_csv(io.BytesIO(want), keep_default_na=False, dtype=str)
    assert set(ADDED[name]) <= set(new.columns)
    assert new.drop(columns=ADDED[name]).equals(old), name
