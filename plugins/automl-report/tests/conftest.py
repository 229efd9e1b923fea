"""Small real runs, made once per test session: random search, Mosaic's tree search and
successive halving with a surrogate on scikit-learn's iris (a few algorithms of auto-sklearn's
space, trials in this process), and random search on a table-lookup benchmark of our own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from automl_core import hookimpl
from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_core.space import PipelineComponent
from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_spaces.pool_space import PoolSpace

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


def real_run(
    folder: Path,
    search: dict,
    trials: int,
    space: dict = SPACE,
    extra_plugins: tuple[object, ...] = (),
    **extra: object,
) -> Path:
    pytest.importorskip("automl_sklearn")  # the space's plugin (this repository's)
    recipe = {
        "name": folder.name,
        "task": TASK,
        "space": space,
        "search": search,
        "executor": "sequential",
        "budget": {"trials": trials},
        "seed": 1,
        **extra,
    }
    run(parse_recipe(recipe), folder, plugins=load_plugins(extra=list(extra_plugins)))
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


class RefusingClassifier(ClassifierMixin, BaseEstimator):
    """Fails to fit, always: the trials that choose it are failed trials."""

    def fit(self, X: object, y: object) -> RefusingClassifier:
        raise ValueError("the refusing classifier fits nothing (a component of the tests)")


class RefusingPlugin:
    """Adds the ``refusing`` classifier to the auto-sklearn space where a run loads it."""

    @hookimpl
    def register_components(self, register: object) -> None:
        register(  # type: ignore[operator]
            PipelineComponent(
                "refusing",
                "classifier",
                lambda params, context: RefusingClassifier(),
                tasks=frozenset({"classification"}),
            )
        )


#: LDA, and a classifier that always fails: the runs below have failed and good trials.
FAILING_SPACE = {
    "name": "autosklearn-classification",
    "params": {
        "include": {"classifier": ["lda", "refusing"], "feature_preprocessor": ["no_preprocessing"]}
    },
}


@pytest.fixture(scope="session")
def setup_run(runs) -> Path:
    """A run with everything the page's set-up sections show: failed trials, a portfolio
    warm start (from meta-data made of an earlier run on iris, saved as a folder), a policy
    chosen by a selector (``task.resampling: {auto: bagged-by-rows}``) and the meta-features
    of the dataset (``metafeatures: handcrafted``), on wine."""
    pytest.importorskip("automl_warmstart_portfolio")
    pytest.importorskip("automl_policy")
    pytest.importorskip("automl_metafeatures")
    refusing = (RefusingPlugin(),)
    earlier = real_run(runs / "earlier", {"strategy": "random"}, 8, FAILING_SPACE, refusing)
    trials = [t for t in trials_of_run(earlier) if t.status == "ok"]
    save_metadata(
        MetaData(
            datasets=["sklearn:iris"],
            configs=[t.trial.config for t in trials],
            performance=np.array([[t.loss for t in trials]]),
            space="autosklearn-classification",
        ),
        runs / "earlier-meta",
    )
    recipe = {
        "name": "setup",
        "task": {**TASK, "dataset": "sklearn:wine", "resampling": {"auto": "bagged-by-rows"}},
        "space": FAILING_SPACE,
        "search": "random",
        "warmstart": {"starter": "portfolio", "params": {"metadata": str(runs / "earlier-meta"),
                                                      "size": 2}},
        "metafeatures": "handcrafted",
        "executor": "sequential",
        "budget": {"trials": 8},
        "seed": 2,
    }  # fmt: skip
    folder = runs / "setup"
    run(parse_recipe(recipe), folder, plugins=load_plugins(extra=list(refusing)))
    return folder


def trials_of_run(folder: Path) -> list:
    with RunHistory(folder / HISTORY_FILE, read_only=True) as history:
        return history.trials()
