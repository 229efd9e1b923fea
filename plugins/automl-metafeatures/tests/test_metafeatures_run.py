"""A run with ``metafeatures: handcrafted`` stores auto-sklearn's 37 meta-features of its
training data in the run's history."""

from __future__ import annotations

import math

import pytest

from automl_core.plugins import LOAD_PLUGINS_ENV, load_plugins
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_metafeatures import feature_names


def test_a_run_records_the_meta_features_of_its_training_data(tmp_path, monkeypatch):
    pytest.importorskip("automl_sklearn")  # the pipeline space; another plugin of this repo
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "metafeatures,sklearn")
    recipe = parse_recipe(
        {
            "name": "metafeatures",
            # KEEL's tic-tac-toe: 958 rows, 9 categorical columns (OpenML's twin is in
            # auto-sklearn's table)
            "task": {"dataset": "keel:tic-tac-toe", "metric": "accuracy", "test_size": 0.25},
            "space": {
                "name": "autosklearn-classification",
                "params": {"include": {"classifier": ["decision_tree"]}},
            },
            "search": {"strategy": "random"},
            "executor": "sequential",
            "metafeatures": "handcrafted",
            "budget": {"trials": 2},
            "seed": 1,
        }
    )
    run(recipe, tmp_path / "run", plugins=load_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        stored = history.get_meta("metafeatures")
    assert list(stored) == feature_names("classification")
    assert all(math.isfinite(v) for v in stored.values())
    assert stored["NumberOfCategoricalFeatures"] == 9 and stored["SymbolsSum"] == 27
    assert 600 <= stored["NumberOfInstances"] < 958  # the training rows only
