"""What model-based search strategies share: a surrogate prepared for the search, random
candidate rows drawn from a stock, expected improvement, picking the best-scoring
candidate with ties broken at random, and ranking a pool's candidates.

These live in the core rather than in one plugin so that any strategy -- automl-smbo,
automl-halving's BOHB-style sampling, a third-party strategy -- can score candidates the same
way without depending on a sibling plugin. Only numpy and scipy are used (the core never needs
torch).

Every score here is to be *maximised*; losses are minimised (lower is better), as everywhere
in automl-core.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from scipy.stats import norm

from automl_core.contracts import SearchContext, Surrogate
from automl_core.space import VectorSpace
from automl_spaces.pool_space import PoolSpace

log = logging.getLogger(__name__)

#: ``score(rows) -> acquisition values`` of encoded candidates (higher is more promising).
Score = Callable[[np.ndarray], np.ndarray]

#: Below this predicted standard deviation a candidate is treated as certain (and the
#: division in EI stays finite).
MIN_STD = 1e-12

#: Scores within this of the highest count as tied for the best in :func:`random_best`
#: (EI computed for equal predictions can differ in the last bits).
TIE_TOLERANCE = 1e-12


class RandomRows:
    """Random encoded rows of a space, sampled ``batch`` at a time and handed out in order.

    ConfigSpace's sampling costs several milliseconds a call whatever its size up to a few
    thousand rows, more than the rest of an ask on a small space: an acquisition optimiser
    that wants fresh random candidates at every ask takes them from this stock.
    """

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self._stock = np.empty((0, 0))

    def take(self, space: VectorSpace, rng: np.random.Generator, n: int) -> np.ndarray:
        """The next ``n`` rows; a new stock of ``max(n, batch)`` is sampled when fewer are left
        (the rest of the old one is dropped)."""
        if len(self._stock) < n:
            self._stock = space.sample_vectors(rng, max(n, self.batch))
        rows, self._stock = self._stock[:n], self._stock[n:]
        return rows


def expected_improvement(
    mean: np.ndarray, std: np.ndarray, best: float, xi: float = 0.0
) -> np.ndarray:
    """Expected improvement of a loss below ``best - xi``, from the surrogate's predicted
    ``mean`` and ``std`` of the loss (Jones et al., 1998).

    ``xi`` > 0 asks for a margin of improvement, trading exploitation for exploration. Where
    the model is certain (``std`` below :data:`MIN_STD`), EI is the improvement itself, or
    zero for a candidate predicted no better.
    """
    std = np.maximum(std, MIN_STD)
    improvement = best - xi - mean
    z = improvement / std
    return improvement * norm.cdf(z) + std * norm.pdf(z)


def best_first(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices sorting ``scores`` from highest to lowest, ties in random order.

    Ties are common -- a random forest's trees often agree, and EI is then exactly 0 for
    every candidate predicted worse than the best -- and breaking them by position would
    steer the search to the start of the pool or of the sampled batch. Draws one permutation
    of ``len(scores)`` from ``rng``.
    """
    return np.lexsort((rng.permutation(len(scores)), -scores))


def random_best(
    scores: np.ndarray, rng: np.random.Generator, tolerance: float = TIE_TOLERANCE
) -> int:
    """The index of a highest score, chosen uniformly among those within ``tolerance`` of
    the maximum.

    For a strategy that needs only the best candidate: cheaper than :func:`best_first` (one
    draw among the tied, not a permutation of all), with the same reason to break ties at
    random. ``scores`` must not be empty.
    """
    tied = np.flatnonzero(scores >= scores.max() - tolerance)
    return int(rng.choice(tied))


def rank_pool(
    space: PoolSpace, score: Score, excluded: Collection[int], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The offered candidates of ``space`` not in ``excluded`` (candidate indices), best
    first: (candidate indices, their scores), ties in random order (:func:`best_first`).

    A pool is finite, so the acquisition is maximised exactly by scoring every candidate's
    encoding; no configuration is built for the candidates that are not chosen.
    """
    assert space.available is not None
    offered = np.flatnonzero(space.available)
    if excluded:
        offered = offered[~np.isin(offered, np.fromiter(excluded, dtype=int))]
    if offered.size == 0:
        return offered, np.empty(0)
    scores = score(space.encodings[offered])
    order = best_first(scores, rng)
    return offered[order], scores[order]


#: How the loss of a trial still running is guessed when a surrogate is fitted (constant
#: liar): the mean, the lowest or the highest of the observed losses.
PENDING_LIES = ("mean", "min", "max")
_LIES: dict[str, Callable[[np.ndarray], Any]] = {"mean": np.mean, "min": np.min, "max": np.max}


def failures_as_worst(losses: np.ndarray, default: float = 1.0) -> np.ndarray:
    """``losses`` with every non-finite one (a failed trial) replaced by the worst finite
    loss (SMAC's crash cost), or by ``default`` when none is finite, so that a surrogate
    learns to avoid failures without an infinite target. ``losses`` itself when all are
    finite; otherwise a new array. Draws nothing at random."""
    finite = np.isfinite(losses)
    if finite.all():
        return losses
    worst = losses[finite].max() if finite.any() else default
    return np.where(finite, losses, worst)


def constant_liar_targets(losses: np.ndarray, pending: int, rule: str) -> np.ndarray:
    """A surrogate's targets while ``pending`` trials still run: the observed ``losses``
    (finite, see :func:`failures_as_worst`; not empty) followed by ``pending`` copies of
    their ``rule`` (:data:`PENDING_LIES`), so that several asks before a tell spread out.
    The rows to fit are the observed ones, then the running ones, in the same order.
    ``losses`` itself when nothing is pending. Draws nothing at random."""
    if not pending:
        return losses
    return np.concatenate([losses, np.full(pending, _LIES[rule](losses))])


def prepared_surrogate(
    factory: Callable[[], Surrogate], space: VectorSpace, context: SearchContext
) -> Surrogate:
    """A new surrogate from ``factory``, told the space's columns, the space and the task,
    and handed the warm start's pre-trained state when there is one: what every strategy
    with a surrogate does at set-up, in this order."""
    surrogate = factory()
    surrogate.prepare(space.columns())
    surrogate.prepare_space(space, context.task)
    state = context.warm_start.surrogate_state if context.warm_start is not None else None
    if state is not None:
        if type(surrogate).warm_start is Surrogate.warm_start:
            log.warning(
                "the warm start carries a pre-trained surrogate state, but the surrogate %s "
                "takes none: it starts untrained",
                type(surrogate).__name__,
            )
        else:
            surrogate.warm_start(state)
    return surrogate


def standardise(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(``y`` standardised to mean 0 and std 1, its mean, its scale): how surrogates that
    share one set of kernel parameters across datasets put losses on one scale. Constant
    targets keep a scale of 1."""
    mean, std = float(np.mean(y)), float(np.std(y))
    scale = std if std > 1e-12 * max(1.0, abs(mean)) else 1.0
    return (y - mean) / scale, mean, scale
