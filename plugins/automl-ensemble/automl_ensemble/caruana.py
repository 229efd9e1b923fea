"""Ensemble selection (Caruana, Niculescu-Mizil, Crew and Ksikes 2004, "Ensemble Selection
from Libraries of Models", ICML), as auto-sklearn uses it after its search.

The ensemble is built by greedy forward selection *with replacement*: it starts empty and,
for up to ``size`` rounds, adds the model whose addition gives the blend (the plain average of
the models selected so far, repeats counted) with the lowest loss on the validation rows.
Selecting with replacement is what lets the greedy steps express unequal weights.

The ensemble returned is the **earliest round's with the lowest loss**, as Caruana et al.
choose the ensemble that does best on their hill-climbing set; a model's weight is the number
of times it was selected up to that round, divided by the round. auto-sklearn returns the
last round's ensemble instead, which is harmless for a smooth loss but not for one that reads
hard predictions (balanced accuracy, accuracy, F1): once no addition can lower such a loss,
every round must still add a model, and the one that wins is the model that changes nothing,
one whose probabilities are nearly constant and so never move the blend's argmax. Repeated
for the remaining rounds, it ends with most of the weight; the blend's validation loss is the
same, but the model is now mostly a member with no signal, and refitting a subset of it (when
time is short) or a slightly different test distribution shows it (issue 17). Stopping at
the earliest best round gives it no weight, and a smaller ensemble to refit.

Ties between equally good additions go to the model that is best on its own; only between
models equally good on their own (duplicates, above all) are they broken at random, so which
copy is chosen depends on the seed, not on the order of the predictions. The run loop also
offers only models better than a constant predictor and keeps the ensemble only if it beats
the best single model (automl_engine.final_model). No bagging. Caruana et al.'s *sorted
initialisation* (start from the ``init`` best single models) is optional and off by default,
as in auto-sklearn; with it, the ensemble returned holds at least the initial models.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from automl_core.contracts import Ensembler
from automl_spaces.options import integer, plain_integer

Loss = Callable[[np.ndarray, np.ndarray], float]


@attrs.define(slots=False, eq=False)
class CaruanaEnsemble(Ensembler):
    """Greedy forward ensemble selection with replacement.

    Parameters:
        size: the most rounds of selection (auto-sklearn's ``ensemble_size``, 50); every
            weight is a multiple of one over the round returned, at most ``size``. At least 1.
        seed: seeds the random tie-breaking, so a fit is deterministic given the seed.
        init: start from the ``init`` best single models, each selected once (Caruana et
            al.'s sorted initialisation; 0, auto-sklearn's default, starts empty). The
            starting models count among the ``size`` selections, so ``init <= size``; with
            fewer usable models than ``init``, every usable model starts the ensemble.

    After :meth:`fit`, ``order_`` holds the index selected in each round, ``trajectory_``
    the loss of the ensemble after each round and ``rounds_`` the round whose ensemble was
    returned (for inspection; the run loop uses only the weights).
    """

    size: int = attrs.field(default=50, converter=plain_integer, validator=integer(at_least=1))
    seed: int = attrs.field(default=0, converter=plain_integer, validator=integer(at_least=0))
    init: int = attrs.field(default=0, converter=plain_integer, validator=integer(at_least=0))
    order_: list[int] = attrs.field(factory=list, init=False)
    trajectory_: list[float] = attrs.field(factory=list, init=False)
    rounds_: int = attrs.field(default=0, init=False)

    def __attrs_post_init__(self) -> None:
        if self.init > self.size:
            raise ValueError(
                f"init must be at most size ({self.size}): the initial models are among "
                f"the size selections, got init={self.init!r}"
            )

    def fit(self, predictions: Sequence[np.ndarray], y: np.ndarray, loss: Loss) -> np.ndarray:
        """Weights over ``predictions`` (each model's out-of-sample predictions on the rows
        of ``y``: class probabilities n x k, or values n), summing to 1, that greedily
        minimise ``loss(y, blend)``. A model whose predictions hold NaN or infinite values is
        never selected (with a warning)."""
        stacked = _stack(predictions, y)
        usable = _usable(stacked)
        rng = np.random.default_rng(self.seed)
        selection = _Selection(stacked, np.asarray(y), loss, usable)
        initial = _best_singles(selection, min(self.init, int(usable.sum())))
        for index in initial:
            selection.add(index)
        while len(selection.order) < self.size:
            selection.add(*selection.best_addition(rng))
        self.order_ = list(selection.order)
        self.trajectory_ = list(selection.trajectory)
        self.rounds_ = _earliest_best_round(self.trajectory_, start=len(initial))
        counts = np.bincount(self.order_[: self.rounds_], minlength=len(stacked))
        return counts / self.rounds_


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
        self.single_losses = self._single_losses()
        self.total = np.zeros(stacked.shape[1:])
        self.order: list[int] = []
        self.trajectory: list[float] = []

    def _single_losses(self) -> np.ndarray:
        """Each usable model's loss on its own (``inf`` for the others and for NaN), which
        breaks ties between additions."""
        losses = np.full(len(self.stacked), np.inf)
        for group in self.twins:
            value = float(self.loss(self.y, self.stacked[group[0]]))
            losses[group] = value if not np.isnan(value) else np.inf
        return losses

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
        """The model whose addition gives the lowest loss, and that loss. A tie goes to the
        model with the lowest loss on its own; a tie in that too (identical models) is broken
        at random, so they share the weight and which one is chosen depends on the seed, not
        on the order of the predictions."""
        losses = self.candidate_losses()
        lowest = float(losses.min())
        if not np.isfinite(lowest):
            raise ValueError(
                f"the loss is NaN or infinite for every candidate blend in round "
                f"{len(self.order) + 1}: it cannot rank the models"
            )
        tied = np.flatnonzero(losses == lowest)
        alone = self.single_losses[tied]
        tied = tied[alone == alone.min()]
        return int(tied[0] if len(tied) == 1 else rng.choice(tied)), lowest

    def add(self, index: int, loss: float | None = None) -> None:
        """Select ``index`` once more; ``loss`` is the new blend's, when already known."""
        self.total += self.stacked[index]
        self.order.append(index)
        if loss is None:
            loss = float(self.loss(self.y, self.total / len(self.order)))
        self.trajectory.append(loss)


def _earliest_best_round(trajectory: list[float], start: int) -> int:
    """The first round (counted from 1, at least ``start``) whose loss is the lowest, up to
    float rounding: re-averaging the same models can move a loss in its last bits, which is
    no improvement."""
    first = max(start, 1)
    later = np.asarray(trajectory[first - 1 :])
    lowest = later.min()
    return first + int(np.argmax(later <= lowest + 1e-12 * max(1.0, abs(lowest))))


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
    ranked = sorted(selection.candidates.tolist(), key=lambda i: (selection.single_losses[i], i))
    return ranked[:n]
