"""Small real runs, made once per test session: random search, Mosaic's tree search and
successive halving with a surrogate on scikit-learn's iris (a few algorithms of auto-sklearn's
space, trials in this process), and random search on a table-lookup benchmark of our own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_engine.metastore import save_metadata
from automl_engine.pool_space import PoolSpace
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run

SPACE = {
    "name": "autosklearn-classification",
    "params": {
        "include": {
            "classifier": ["decision_tree", "k_nearest_neighbors", "lda", "random_forest"],
            "feature_preprocessor": ["no_preprocessing", "pca"],
        }
    },
}
TASK = {"dataset": "sklearn:iris", "metric": "balanced_accuracy", "test_size": 0.25}


def real_run(folder: Path, search: dict, trials: int, **extra: object) -> Path:
    pytest.importorskip("automl_sklearn")  # the space's plugin (this repository's)
    recipe = {
        "name": folder.name,
        "task": TASK,
        "space": SPACE,
        "search": search,
        "executor": "sequential",
        "budget": {"trials": trials},
        "seed": 1,
        **extra,
    }
    run(parse_recipe(recipe), folder, plugins=load_plugins())
    return folder


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="session")
def random_run(runs) -> Path:
    return real_run(runs / "random", {"strategy": "random"}, 12)


@pytest.fixture(scope="session")
def mcts_run(runs) -> Path:
    pytest.importorskip("automl_mcts")
    search = {"strategy": "mcts", "surrogate": "rf", "params": {"n_r": 100, "n_s": 10}}
    return real_run(runs / "mcts", search, 16)


@pytest.fixture(scope="session")
def halving_run(runs) -> Path:
    pytest.importorskip("automl_halving")
    search = {
        "strategy": "successive_halving",
        "surrogate": "rf",
        "params": {"eta": 3},
        "fidelity": {"kind": "iterations"},
    }
    return real_run(runs / "halving", search, 26)


@pytest.fixture(scope="session")
def lookup_run(runs) -> Path:
    """Random search through the core's ``table`` benchmark on a meta-data folder of 300
    pipelines (two stages) whose losses are known."""
    pytest.importorskip("automl_metadata")  # the `table` benchmark's plugin
    rng = np.random.default_rng(3)
    choices = rng.integers(0, 3, size=(300, 2))
    encodings = np.hstack([rng.random((300, 2)), choices])
    losses = np.sum((encodings[:, :2] - 0.4) ** 2, axis=1) + 0.1 * (choices[:, 0] != 1)
    metadata = MetaData(
        datasets=["synthetic"],
        configs=[{"candidate": j} for j in range(300)],
        performance=losses[None, :],
        space="grid",
        pool=PoolSpace("grid", encodings, ("model", "scaler"), choices),
    )
    save_metadata(metadata, runs / "meta")
    recipe = {
        "name": "lookup",
        "task": {
            "benchmark": {"name": "table", "params": {"path": str(runs / "meta")}},
            "dataset": "synthetic",
        },
        "search": "random",
        "budget": {"trials": 40},
        "seed": 1,
    }
    folder = runs / "lookup"
    run(parse_recipe(recipe), folder, plugins=load_plugins())
    return folder
