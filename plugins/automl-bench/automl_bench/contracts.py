"""The harness's contract: a whole AutoML system run as a peer beside the recipes of an
ablation (``automl ablate --peer flaml``). Peers (contrib/automl-flaml, automl-tpot,
automl-baselines) implement :class:`System` and register it with ``register_systems``."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_engine.metrics import Metric


@dataclass
class SystemResult:
    """What a whole AutoML system (a peer such as FLAML or TPOT) returns from a fit.

    ``model`` predicts the rows it is given as a scikit-learn estimator does: for
    classification, ``classes_`` are the labels it was trained on (sorted) and
    ``predict_proba(X)`` has one column per label, in that order (the core places them among
    all the dataset's classes, so a class missing from the training rows is no concern of the
    system's); ``predict(X)`` for regression. ``curve`` is the anytime record of its own
    search: one ``(seconds since the fit began, validation loss)`` per configuration it
    evaluated, in order, with losses in the core's convention (:mod:`automl_engine.metrics`:
    lower is better; ``inf`` for a failure). ``validation_loss`` is the loss of the
    configuration it returned, by its own validation; ``info`` is anything worth keeping (the
    chosen pipeline, the library version).
    """

    model: Any
    validation_loss: float | None = None
    curve: list[tuple[float, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


class System(abc.ABC):
    """A whole AutoML system run as a baseline in an ablation (``automl ablate --peer NAME``).

    It gets what a run of the same cell gets: the training rows, the run's metric, the
    recipe's wall-time budget, the seed and the number of cores; the ablation then scores the
    returned model on the same held-out test rows with the same metric as every other cell,
    so the comparison does not depend on how the system reports itself. A system must
    optimise ``metric`` (a peer left optimising accuracy on a balanced-accuracy benchmark is
    not a fair comparison) and stop within ``time_budget`` seconds. Its factory is called
    with the parameters of ``--peer 'NAME {key: value}'`` before the clock starts, so that
    importing a library there costs the system nothing.
    """

    @abc.abstractmethod
    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        """Search and fit on ``X``, ``y`` for at most ``time_budget`` seconds, optimising
        ``metric`` (``metric.loss(y_true, predictions)``; for classification ``y_true`` holds
        labels ``0..m-1`` and predictions are an (n, m) probability matrix).

        The core guarantees: ``task`` is ``classification`` (``y`` holds integer labels, a
        subset of ``0..k-1``) or ``regression`` (float ``y``); ``time_budget > 0``;
        ``n_jobs >= 1``; ``workdir``, the cell's folder for the system's own logs, exists."""
