"""The neutral interchange types of a search: what is proposed, and what came back.

Every strategy, executor, evaluator and store speaks these types and nothing else, so that
any strategy runs on any executor against any objective.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: A configuration: the values of the *active* hyper-parameters, by name. Plain data (str, int,
#: float, bool) so that it serialises to JSON unchanged.
Config = Mapping[str, Any]


class Status(str, enum.Enum):
    """How an evaluation ended. Anything but ``OK`` carries an infinite loss."""

    OK = "ok"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    MEMOUT = "memout"


@dataclass(frozen=True)
class Candidate:
    """What a strategy proposes: a configuration and, for multi-fidelity search, a budget.

    ``origin`` says where it came from (``"random"``, ``"warmstart"``, ``"model"``...); it is
    stored with the trial so that a user can see, e.g., which trials the warm start seeded.
    """

    config: Config
    budget: float | None = None
    origin: str = ""


@dataclass(frozen=True)
class Trial:
    """A candidate the run loop accepted, numbered in the order it was asked for."""

    id: int
    config: Config
    budget: float | None = None
    origin: str = ""

    @classmethod
    def from_candidate(cls, trial_id: int, candidate: Candidate) -> Trial:
        return cls(trial_id, dict(candidate.config), candidate.budget, candidate.origin)


@dataclass
class Result:
    """The outcome of evaluating one trial.

    ``loss`` is normalised so that lower is better (see :mod:`automl_engine.metrics`).
    ``predictions`` are the out-of-sample predictions on the validation rows (class
    probabilities for classification), kept for ensembling; ``None`` when not available.
    """

    status: Status
    loss: float
    metrics: dict[str, float] = field(default_factory=dict)
    fit_time: float = 0.0
    predict_time: float = 0.0
    duration: float = 0.0
    error: str | None = None
    #: CPU seconds of the fits (0: not measured), which a busy machine does not inflate
    fit_cpu_time: float = 0.0
    predictions: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK and math.isfinite(self.loss)

    @classmethod
    def failure(cls, status: Status, error: str, duration: float = 0.0) -> Result:
        """A failed evaluation: infinite loss, the reason kept as text."""
        return cls(status=status, loss=math.inf, error=error, duration=duration)

    def without_predictions(self) -> Result:
        return self if self.predictions is None else replace(self, predictions=None)
