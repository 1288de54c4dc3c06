"""Tests of benchcast.validation as a whole: run_study from a study's records or its aggregated
table, the settings read from the schema's keys, and predict importing the subpackage's public
names only (small modules and functions: tests/test_package_shape.py)."""

import ast
from dataclasses import MISSING, fields
from pathlib import Path

import pandas as pd
import pytest

from analysis_util import PAPER, paper_records
from validation_util import noisy_study
from benchcast import BenchcastError, config, validation

PKG = Path(__file__).resolve().parents[1] / "scripts" / "benchcast"


def test_settings_have_every_key_of_the_schemas_validate_and_no_default_of_their_own():
    schema = config.defaults("validate")
    s = validation.Settings.of(schema)
    assert {f.name for f in fields(s)} == set(schema)
    assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(s))  # the schema's alone
    assert s.nested_share == tuple(schema["nested_share"]) and s.alpha == pytest.approx(1 - schema["level"])
    assert s.io_paths == schema["profile_min_per_op"]  # candidates: profile
    with pytest.raises(BenchcastError, match="^validate: no level, pool"):
        validation.Settings.of({})


def test_run_study_needs_the_records_or_the_aggregated_table():
    study = validation.Study.of(PAPER)
    with pytest.raises(BenchcastError, match="one of them"):
        validation.run_study(study)
    bare = validation.Study(features=PAPER["features"], series=PAPER["series"], pairing=PAPER["pairing"],
                            settings=validation.Settings.of(PAPER["validate"]))
    with pytest.raises(BenchcastError, match="aggregate.trim"):
        validation.run_study(bare, records=pd.DataFrame())


def test_run_study_from_the_records_is_the_rules_run_from_the_aggregated_table_and_the_screening(paper_analysis):
    """benchmarks/ablation.py and acceptance.py validate from records (aggregated and screened by the
    study's settings); the rule from aggregated.csv and screen.csv: the same tables."""
    out = validation.run_study(validation.Study.of(PAPER), records=paper_records())
    assert len(out) == 12  # nested_draws among them (empty: the paper's numbers have no scatter to draw from)
    for name, table in out.items():
        pd.testing.assert_frame_equal(table, paper_analysis[name], check_exact=True)


def test_predict_imports_only_public_names_of_the_subpackage():
    tree = ast.parse((PKG / "prediction" / "predict.py").read_text())
    names = [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and (n.module or "").startswith("validation") for a in n.names]
    assert names and not [n for n in names if n[1].startswith("_")], names


def test_bagging_is_the_median_of_the_same_procedure_on_the_draws():
    """With ``bag`` 2 the nested choice's held-out prediction of each device is the median (log scale)
    of the unbagged procedure's on the study and on its draws 1 and 2 (floor.draw), and
    ``nested_draws`` holds the draws' own models on all devices."""
    from dataclasses import replace

    import numpy as np

    from benchcast.screening import floor
    from benchcast.validation import choice

    study, agg, screened = noisy_study(2)
    out = validation.run_study(study, agg=agg, screened=screened)
    plain = replace(study, settings=replace(study.settings, bag=0))

    def nested(o):
        c = o["chosen_folds"]
        return c[c["kind"] == choice.KIND_NESTED].set_index(["series", "held_out"])["prediction"]

    parts = [nested(validation.run_study(plain, agg=agg, screened=screened))]
    assert sorted(out["nested_draws"]["draw"].unique()) == [1, 2]
    for d in (1, 2):
        o = validation.run_study(plain, agg=floor.draw(agg, d), screened=screened)
        parts.append(nested(o))
        got = out["nested_draws"][out["nested_draws"]["draw"] == d].reset_index(drop=True)
        assert got[["series", "rank", "features"]].equals(o["nested_selection"][["series", "rank", "features"]])
    both = pd.concat(parts, axis=1)
    assert len(both) == 6 and not both.iloc[:, 0].equals(both.iloc[:, 1])  # the draws moved the predictions
    want = np.exp(np.log(both).median(axis=1))
    pd.testing.assert_series_equal(nested(out).sort_index(), want.sort_index(), check_names=False)
