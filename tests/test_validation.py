"""Tests of benchcast.validation as a whole: run_study from a study's records or its aggregated
table, the settings read from the schema's keys, and predict importing the subpackage's public
names only (small modules and functions: tests/test_package_shape.py)."""

import ast
from dataclasses import MISSING, fields
from pathlib import Path

import pandas as pd
import pytest

from analysis_util import PAPER, paper_records
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
    assert len(out) == 11
    for name, table in out.items():
        pd.testing.assert_frame_equal(table, paper_analysis[name], check_exact=True)


def test_predict_imports_only_public_names_of_the_subpackage():
    tree = ast.parse((PKG / "prediction" / "predict.py").read_text())
    names = [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and (n.module or "").startswith("validation") for a in n.names]
    assert names and not [n for n in names if n[1].startswith("_")], names
