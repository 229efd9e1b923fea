"""Small spaces whose every property the tests can work out by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
from ConfigSpace import ConfigurationSpace, Float, Integer

from automl_core.contracts import SearchContext, Surrogate
from automl_core.space import PipelineComponent, Stage
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace


def _depth() -> ConfigurationSpace:
    return ConfigurationSpace({"max_depth": Integer("max_depth", (1, 12))})


def _c() -> ConfigurationSpace:
    return ConfigurationSpace({"C": Float("C", (1e-3, 1e3), log=True)})


def _component(name: str, stage: str, space: Any = ConfigurationSpace) -> PipelineComponent:
    return PipelineComponent(name, stage, lambda p, c: (name, p), space)


#: Three stages in pipeline order; the model (3 options) is the root decision.
STAGES = (
    Stage("encoding", (_component("one_hot", "encoding"), _component("ordinal", "encoding"))),
    Stage(
        "rescaling",
        (
            _component("none", "rescaling"),
            _component("standardize", "rescaling"),
            _component("quantile", "rescaling", _c),
        ),
    ),
    Stage(
        "classifier",
        (
            _component("tree", "classifier", _depth),
            _component("logistic", "classifier", _c),
            _component("knn", "classifier"),
        ),
    ),
)
#: logistic regression never without rescaling
FORBIDDEN = ((("rescaling", "none"), ("classifier", "logistic")),)


def pipeline_space(forbidden: tuple = FORBIDDEN) -> PipelineSpace:
    return PipelineSpace(
        "hand-built", "classification", STAGES, lambda c, ctx: c, forbidden=forbidden
    )


def pool_space(n_models: int = 3, n_preprocessors: int = 4, per_pair: int = 5) -> PoolSpace:
    """Candidates of every (preprocessor, model) pair, ``per_pair`` hyper-parameter values each."""
    rows, choices = [], []
    for model in range(n_models):
        for preprocessor in range(n_preprocessors):
            for value in np.linspace(0, 1, per_pair):
                rows.append([model, preprocessor, value])
                choices.append([preprocessor, model])
    return PoolSpace(
        "hand-built-pool",
        np.asarray(rows, dtype=float),
        stage_names=("preprocessor", "estimator"),
        stage_choices=np.asarray(choices),
    )


class ColumnSurrogate(Surrogate):
    """Predicts the loss ``weights[value of column]`` with a fixed spread: a model whose every
    prediction is known in advance."""

    def __init__(self, column: int, weights: dict[int, float], std: float = 0.1) -> None:
        self.column, self.weights, self.std = column, weights, std
        self.fits = 0

    def fit(self, X: np.ndarray, y: np.ndarray) -> ColumnSurrogate:
        self.fits += 1
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean = np.array([self.weights.get(round(v), 1.0) for v in X[:, self.column]])
        return mean, np.full(len(X), self.std)


def context(space: Any, surrogate: Surrogate, seed: int = 0, **more: Any) -> SearchContext:
    return SearchContext(space=space, seed=seed, surrogate_factory=lambda: surrogate, **more)
