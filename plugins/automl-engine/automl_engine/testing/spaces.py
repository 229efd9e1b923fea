"""The small spaces, objective and surrogate the conformance checks run components on.

They are real (a pipeline space of scikit-learn estimators with a conditional
hyper-parameter; a pool of encoded candidates in two stages) but small, so that every check
runs in well under a second, and they depend on no plugin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from ConfigSpace import (
    CategoricalHyperparameter,
    ConfigurationSpace,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from automl_core.contracts import Surrogate
from automl_core.space import INACTIVE, BuildContext, PipelineComponent, SearchSpace, Stage
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace

#: The space kinds a strategy may claim (``SearchStrategy.space_kinds``).
PIPELINE, POOL = "pipeline", "pool"


def _logistic_space() -> ConfigurationSpace:
    space = ConfigurationSpace()
    space.add(UniformFloatHyperparameter("C", 1e-3, 1e3, log=True, default_value=1.0))
    return space


def _tree_space() -> ConfigurationSpace:
    space = ConfigurationSpace()
    space.add(UniformIntegerHyperparameter("max_depth", 1, 12, default_value=4))
    space.add(CategoricalHyperparameter("criterion", ["gini", "entropy"]))
    return space


COMPONENTS = (
    PipelineComponent("none", "scaling", lambda params, context: "passthrough"),
    PipelineComponent("standard", "scaling", lambda params, context: StandardScaler()),
    PipelineComponent(
        "logistic",
        "model",
        lambda params, context: LogisticRegression(max_iter=200, **params),
        _logistic_space,
        frozenset({"classification"}),
    ),
    PipelineComponent(
        "tree",
        "model",
        lambda params, context: DecisionTreeClassifier(random_state=context.seed, **params),
        _tree_space,
        frozenset({"classification"}),
    ),
)


def _assemble(
    choices: dict[str, tuple[PipelineComponent, dict[str, Any]]], context: BuildContext
) -> Any:
    steps = [
        (stage, component.build(params, context)) for stage, (component, params) in choices.items()
    ]
    return Pipeline(steps)


def pipeline_space() -> PipelineSpace:
    """Two stages (scaling, model); the model's hyper-parameters are conditional on it."""
    stages = tuple(
        Stage(name, tuple(c for c in COMPONENTS if c.stage == name))
        for name in ("scaling", "model")
    )
    return PipelineSpace("kit-pipeline", "classification", stages, _assemble)


def pool_space(size: int = 40) -> PoolSpace:
    """``size`` candidates in three columns, each a choice of three models; the last
    candidate is not offered (``available``)."""
    rng = np.random.default_rng(1234)
    available = np.ones(size, dtype=bool)
    available[-1] = False
    return PoolSpace(
        "kit-pool",
        rng.random((size, 3)),
        stage_names=("model",),
        stage_choices=(np.arange(size) % 3).reshape(-1, 1),
        available=available,
    )


def space_of(kind: str) -> SearchSpace:
    return pipeline_space() if kind == PIPELINE else pool_space()


def loss_of(space: SearchSpace, config: Mapping[str, Any]) -> float:
    """A deterministic, smooth loss of a configuration: the distance of its encoding (inactive
    values as 0) to a point inside the space."""
    vector = np.asarray(space.encode([config]), dtype=float)[0]
    vector = np.where(vector == INACTIVE, 0.0, np.nan_to_num(vector))
    return float(np.abs(vector - 0.3).sum())


class NearestSurrogate(Surrogate):
    """The kit's own surrogate, for strategies that need one: the mean of the two nearest
    observations, their distance as the uncertainty. Deterministic and dependency-free."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> NearestSurrogate:
        self.X, self.y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.asarray(X, dtype=float)
        distances = np.linalg.norm(rows[:, None, :] - self.X[None, :, :], axis=2)
        nearest = np.argsort(distances, axis=1, kind="stable")[:, :2]
        mean = self.y[nearest].mean(axis=1)
        return mean, np.take_along_axis(distances, nearest, axis=1).mean(axis=1) + 1e-6
