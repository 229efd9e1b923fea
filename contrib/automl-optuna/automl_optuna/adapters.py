"""How Optuna's define-by-run trials describe the configurations of a space.

* :class:`PipelineAdapter` walks a PipelineSpace's conditional ConfigurationSpace and suggests
  each hyper-parameter only when its conditions hold, parents before children, so that Optuna
  sees exactly the active hyper-parameters of every configuration (its TPE models each
  parameter from the trials in which it was suggested).
* :class:`PoolAdapter` searches a pool's box (one ``FloatDistribution`` per varying encoding
  column) and snaps to the nearest candidate not yet proposed (:mod:`automl_spaces.snapping`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from ConfigSpace import ConfigurationSpace
from ConfigSpace.conditions import Condition, Conjunction, OrConjunction
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    FloatHyperparameter,
    Hyperparameter,
    IntegerHyperparameter,
    OrdinalHyperparameter,
)
from optuna.distributions import BaseDistribution, FloatDistribution
from optuna.trial import Trial as OptunaTrial

from automl_core.space import by_kind
from automl_core.trial import Config
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace
from automl_spaces.snapping import PoolSnapper


def topological_order(configspace: ConfigurationSpace) -> list[str]:
    """Hyper-parameter names with every parent before its children (ConfigSpace's own order
    among those that are free to go next), so conditions can be checked while suggesting."""
    names = list(configspace.keys())
    parents = {name: {p.name for p in configspace.parents_of[name]} for name in names}
    placed: set[str] = set()
    order: list[str] = []
    while len(order) < len(names):
        ready = [n for n in names if n not in placed and parents[n] <= placed]
        if not ready:
            raise ValueError("the ConfigurationSpace's conditions form a cycle")
        order.extend(ready)
        placed.update(ready)
    return order


def condition_holds(condition: Condition | Conjunction, values: Mapping[str, Any]) -> bool:
    """Whether ``condition`` holds for the values chosen so far; a condition on a parent that
    is not active (not in ``values``) does not hold."""
    if isinstance(condition, Conjunction):
        results = (condition_holds(c, values) for c in condition.components)
        return any(results) if isinstance(condition, OrConjunction) else all(results)
    if condition.parent.name not in values:
        return False
    return bool(condition.satisfied_by_value(values))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class PipelineAdapter:
    """Define-by-run suggestions for a :class:`PipelineSpace`; see the module docstring.

    Floats and integers keep their bounds and log scale (a normal or beta prior is dropped: TPE
    brings its own); categoricals keep their choices (weights are dropped); an ordinal is
    suggested as the integer index of its value, so that TPE sees its order; constants are not
    suggested at all.
    """

    fixed_distributions: dict[str, BaseDistribution] | None = None

    def __init__(self, space: PipelineSpace) -> None:
        self.space = space
        configspace = space.configspace
        self.hyperparameters: list[Hyperparameter] = [
            configspace[name] for name in topological_order(configspace)
        ]
        self.conditions = {
            name: list(configspace.parent_conditions_of[name]) for name in configspace
        }
        for hyperparameter in self.hyperparameters:
            _check_supported(hyperparameter)

    def suggest(self, trial: OptunaTrial) -> dict[str, Any]:
        """The active hyper-parameters' values, suggested through ``trial`` (not yet validated:
        a forbidden combination is possible)."""
        values: dict[str, Any] = {}
        for hyperparameter in self.hyperparameters:
            name = hyperparameter.name
            if all(condition_holds(c, values) for c in self.conditions[name]):
                values[name] = _suggest(trial, hyperparameter)
        return values

    def params_of(self, config: Config) -> dict[str, Any]:
        """The Optuna parameters that make ``suggest`` return ``config`` (for enqueueing)."""
        params: dict[str, Any] = {}
        for hyperparameter in self.hyperparameters:
            name = hyperparameter.name
            if name not in config or isinstance(hyperparameter, Constant):
                continue
            value = config[name]
            if isinstance(hyperparameter, OrdinalHyperparameter):
                value = [_plain(v) for v in hyperparameter.sequence].index(value)
            params[name] = value
        return params


def _check_supported(hyperparameter: Hyperparameter) -> None:
    supported = (
        Constant,
        CategoricalHyperparameter,
        OrdinalHyperparameter,
        FloatHyperparameter,
        IntegerHyperparameter,
    )
    if not isinstance(hyperparameter, supported):
        raise TypeError(
            f"optuna-tpe cannot suggest {type(hyperparameter).__name__} {hyperparameter.name!r}"
        )


def _suggest(trial: OptunaTrial, hyperparameter: Hyperparameter) -> Any:
    name = hyperparameter.name
    if isinstance(hyperparameter, Constant):
        return _plain(hyperparameter.value)
    if isinstance(hyperparameter, CategoricalHyperparameter):
        return trial.suggest_categorical(name, [_plain(c) for c in hyperparameter.choices])
    if isinstance(hyperparameter, OrdinalHyperparameter):
        index = trial.suggest_int(name, 0, len(hyperparameter.sequence) - 1)
        return _plain(hyperparameter.sequence[index])
    if isinstance(hyperparameter, IntegerHyperparameter):
        low, high = int(hyperparameter.lower), int(hyperparameter.upper)
        return trial.suggest_int(name, low, high, log=bool(hyperparameter.log))
    assert isinstance(hyperparameter, FloatHyperparameter)
    low, high = float(hyperparameter.lower), float(hyperparameter.upper)
    return trial.suggest_float(name, low, high, log=bool(hyperparameter.log))


class PoolAdapter:
    """A :class:`PoolSpace` searched as a box; see the module docstring."""

    def __init__(self, space: PoolSpace) -> None:
        self.snapper = PoolSnapper(space)
        self.fixed_distributions: dict[str, BaseDistribution] = {
            name: FloatDistribution(low, high) for name, low, high in self.snapper.box("optuna-tpe")
        }

    def params_of(self, config: Config) -> dict[str, Any]:
        """The box point of a candidate (raises InvalidConfigurationError for a bad one)."""
        return self.snapper.point_of_config(config)

    def snap(self, params: Mapping[str, float]) -> dict[str, Any] | None:
        """The nearest candidate not yet proposed (claimed now); None when none is left."""
        candidate = self.snapper.snap(params)
        return None if candidate is None else {"candidate": candidate}

    def claim(self, config: Config) -> None:
        """A candidate proposed without snapping (warm start, replay) is not offered again."""
        self.snapper.claim_config(config)


def make_adapter(space: object) -> PipelineAdapter | PoolAdapter:
    """The adapter for ``space``; a clear error for a kind of space Optuna cannot search."""

    def unsupported() -> PipelineAdapter | PoolAdapter:
        raise TypeError(
            f"optuna-tpe searches a PipelineSpace or a PoolSpace, got {type(space).__name__}: "
            "it needs a ConfigurationSpace (or a pool's numeric encodings) to search"
        )

    return by_kind(space, PipelineAdapter, PoolAdapter, unsupported)
