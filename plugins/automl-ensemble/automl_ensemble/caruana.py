"""Ensemble selection (Caruana, Niculescu-Mizil, Crew and Ksikes 2004, "Ensemble Selection
from Libraries of Models", ICML), as auto-sklearn uses it after its search.

The ensemble is built by greedy forward selection *with replacement*: it starts empty and,
for ``size`` rounds, adds the model whose addition gives the blend (the plain average of the
models selected so far, repeats counted) with the lowest loss on the validation rows. A
model's weight is the number of times it was selected divided by ``size``. Selecting with
replacement is what lets the greedy steps express unequal weights, and it makes the loss
flatten out as rounds go on instead of degrading once only poor models are left to add, as
selection without replacement does (Caruana et al.): a fixed number of rounds works.

As in auto-sklearn: ties between equally good additions are broken at random (so duplicated
models share the weight instead of the first one taking it all), there is no early stop (the
ensemble after the last round is returned, not the best intermediate one), and no bagging.
Caruana et al.'s *sorted initialisation* (start from the ``init`` best single models) is
optional and off by default, as in auto-sklearn.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from automl_core.contracts import Ensembler

Loss = Callable[[np.ndarray, np.ndarray], float]


class CaruanaEnsemble(Ensembler):
    """Greedy forward ensemble selection with replacement.

    Parameters:
        size: rounds of selection (auto-sklearn's ``ensemble_size``, 50); every weight is a
            multiple of ``1 / size``. At least 1.
        seed: seeds the random tie-breaking, so a fit is deterministic given the seed.
        init: start from the ``init`` best single models, each selected once (Caruana et
            al.'s sorted initialisation; 0, auto-sklearn's default, starts empty). The
            starting models count among the ``size`` selections, so ``init <= size``; with
            fewer usable models than ``init``, every usable model starts the ensemble.

    After :meth:`fit`, ``order_`` holds the index selected in each round and ``trajectory_``
    the loss of the ensemble after each round (for inspection; the run loop uses only the
    weights).
    """

    def __init__(self, size: int = 50, seed: int = 0, init: int = 0) -> None:
        self.size = _integer("size", size, minimum=1)
        self.seed = _integer("seed", seed, minimum=0)
        self.init = _integer("init", init, minimum=0)
        if self.init > self.size:
            raise ValueError(
                f"init must be at most size ({self.size}): the initial models are among "
                f"the size selections, got init={init!r}"
            )
        self.order_: list[int] = []
        self.trajectory_: list[float] = []

    def fit(self, predictions: Sequence[np.ndarray], y: np.ndarray, loss: Loss) -> np.ndarray:
        """Weights over ``predictions`` (each model's out-of-sample predictions on the rows
        of ``y``: class probabilities n x k, or values n), summing to 1, that greedily
        minimise ``loss(y, blend)``. A model whose predictions hold NaN or infinite values is
        never selected (with a warning)."""
        stacked = _stack(predictions, y)
        usable = _usable(stacked)
        rng = np.random.default_rng(self.seed)
        selection = _Selection(stacked, np.asarray(y), loss, usable)
        for index in _best_singles(selection, min(self.init, int(usable.sum()))):
            selection.add(index)
        while len(selection.order) < self.size:
            selection.add(*selection.best_addition(rng))
        self.order_ = list(selection.order)
        self.trajectory_ = list(selection.trajectory)
        return selection.counts / self.size


class _Selection:
    """The ensemble being built: the running sum of the selected predictions, so that trying
    one more model costs one addition and one loss evaluation, never a re-sum of the
    ensemble. Models with identical predictions (configurations that differ only in
    hyper-parameters without effect) share one loss evaluation."""

    def __init__(self, stacked: np.ndarray, y: np.ndarray, loss: Loss, usable: np.ndarray):
        self.stacked = stacked
        self.y = y
        self.loss = loss
        self.candidates = np.flatnonzero(usable)
        self.twins = _identical_groups(stacked, self.candidates)
        self.total = np.zeros(stacked.shape[1:])
        self.counts = np.zeros(len(stacked))
        self.order: list[int] = []
        self.trajectory: list[float] = []

    def candidate_losses(self) -> np.ndarray:
        """The loss of the blend with each usable model added once more (``inf`` for the
        others, and where the loss is NaN: such a blend must never win a round)."""
        losses = np.full(len(self.stacked), np.inf)
        members = len(self.order) + 1
        for group in self.twins:
            value = float(self.loss(self.y, (self.total + self.stacked[group[0]]) / members))
            losses[group] = value if not np.isnan(value) else np.inf
        return losses

    def best_addition(self, rng: np.random.Generator) -> tuple[int, float]:
        """The model whose addition gives the lowest loss, and that loss; a tie is broken at
        random (so identical models share the weight, and which one is chosen depends on the
        seed, not on the order of the predictions)."""
        losses = self.candidate_losses()
        lowest = float(losses.min())
        if not np.isfinite(lowest):
            raise ValueError(
                f"the loss is NaN or infinite for every candidate blend in round "
                f"{len(self.order) + 1}: it cannot rank the models"
            )
        tied = np.flatnonzero(losses == lowest)
        return int(tied[0] if len(tied) == 1 else rng.choice(tied)), lowest

    def add(self, index: int, loss: float | None = None) -> None:
        """Select ``index`` once more; ``loss`` is the new blend's, when already known."""
        self.total += self.stacked[index]
        self.counts[index] += 1
        self.order.append(index)
        if loss is None:
            loss = float(self.loss(self.y, self.total / len(self.order)))
        self.trajectory.append(loss)


def _integer(name: str, value: object, minimum: int) -> int:
    """A recipe's value as an int, refusing what YAML could give by mistake (``true``,
    ``2.5``, ``"50"``) with the parameter's name, rather than failing later in a round."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def _stack(predictions: Sequence[np.ndarray], y: np.ndarray) -> np.ndarray:
    """The predictions as one float64 array (models first), after checking that they are
    predictions of the same rows: blending arrays of different shapes would broadcast or
    fail deep in a loss, far from the cause."""
    if len(predictions) == 0:
        raise ValueError("predictions is empty: there is no model to ensemble")
    arrays = [np.asarray(p, dtype=float) for p in predictions]
    first = arrays[0].shape
    if len(first) not in (1, 2):
        raise ValueError(
            f"predictions[0] has shape {first}: expected values (n,) or class probabilities (n, k)"
        )
    for index, array in enumerate(arrays[1:], start=1):
        if array.shape != first:
            raise ValueError(
                f"predictions[{index}] has shape {array.shape}, but predictions[0] has "
                f"{first}: every model must predict the same validation rows"
            )
    rows = len(np.asarray(y))
    if rows != first[0]:
        raise ValueError(f"y has {rows} rows but the predictions have {first[0]}")
    if rows == 0:
        raise ValueError("the predictions have no rows: there is nothing to fit weights on")
    return _exact_probabilities(np.stack(arrays))


def _exact_probabilities(stacked: np.ndarray) -> np.ndarray:
    """Class probabilities rescaled so that each row sums to 1 in float64. The core stores
    predictions as float32, whose rounding leaves row sums off by about 1e-7: enough for
    scikit-learn's ``log_loss`` to warn on every call (it allows about 1e-8). Only models
    whose rows are non-negative and already sum to 1 up to such rounding are touched, so
    values that are not probabilities are left alone."""
    if stacked.ndim != 3 or stacked.shape[2] < 2:
        return stacked
    for model in stacked:
        sums = model.sum(axis=1, keepdims=True)
        if np.all(model >= 0) and np.allclose(sums, 1.0, rtol=0.0, atol=1e-5):
            model /= sums
    return stacked


def _identical_groups(stacked: np.ndarray, candidates: np.ndarray) -> list[list[int]]:
    """The candidates grouped by identical predictions (bit for bit), in order."""
    groups: dict[bytes, list[int]] = {}
    for index in candidates:
        groups.setdefault(stacked[index].tobytes(), []).append(int(index))
    return list(groups.values())


def _usable(stacked: np.ndarray) -> np.ndarray:
    """Which models may be selected: those with only finite predictions (a single NaN would
    make every blend holding the model NaN). Warns about the others; raises if none is
    left."""
    finite = np.isfinite(stacked.reshape(len(stacked), -1)).all(axis=1)
    if not finite.any():
        raise ValueError("every model's predictions contain NaN or infinite values")
    if not finite.all():
        bad = np.flatnonzero(~finite).tolist()
        warnings.warn(
            f"predictions {bad} contain NaN or infinite values: those models are never selected",
            RuntimeWarning,
            stacklevel=3,
        )
    return finite


def _best_singles(selection: _Selection, n: int) -> list[int]:
    """The ``n`` usable models with the lowest loss on their own, best first (ties to the
    lower index): Caruana et al.'s sorted initialisation, which starts the greedy search from
    a strong ensemble rather than from the single best model."""
    if n == 0:
        return []
    losses = [
        float(selection.loss(selection.y, selection.stacked[i])) for i in selection.candidates
    ]
    ranked = sorted(
        zip(losses, selection.candidates.tolist(), strict=True),
        key=lambda pair: (np.inf if np.isnan(pair[0]) else pair[0], pair[1]),
    )
    return [index for _, index in ranked[:n]]
