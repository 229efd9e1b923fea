"""Mosaic's tree: node statistics, the PUCT criterion, the softmax prior and progressive
widening (thesis ch. 4, Eqs. 4.3-4.4). Plain numbers in, plain numbers out, so that each
formula can be checked by hand.

Rewards are *scores* (higher is better): Mosaic maximises accuracy, and the strategy passes
the negated loss, which leaves every formula here unchanged for a loss of 1 - accuracy
(softmax and argmax do not see a constant shift).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Node:
    """What is known of the pipelines compatible with a k-pipeline structure (the tree
    keeps its nodes by structure).

    ``losses`` holds the loss of every evaluated pipeline x in X(s) (infinite for a failed
    one), ``pending`` counts those proposed and still running. Following the thesis's
    definition, Q-bar(s) is the median over *all* evaluated x in X(s), so a node created
    late starts with the earlier results compatible with it.
    """

    losses: list[float] = field(default_factory=list)
    pending: int = 0
    children: list[int] = field(default_factory=list)
    exhausted: bool = False

    @property
    def visits(self) -> int:
        """n(s): evaluated and running pipelines of X(s)."""
        return len(self.losses) + self.pending

    def value(self, worst: float) -> float | None:
        """Q-bar(s): the median score (negated loss) of the evaluated pipelines of X(s), a
        failed one counting as ``worst`` (the worst finite loss seen); None before any."""
        if not self.losses:
            return None
        losses = np.asarray(self.losses, dtype=float)
        losses[~np.isfinite(losses)] = worst
        return -float(np.median(losses))


def softmax(values: np.ndarray) -> np.ndarray:
    """Eq. 4.3's prior pi(a|s) = exp(Q(s,a)) / sum_b exp(Q(s,b)) (no temperature, as in
    the thesis), computed stably."""
    values = np.asarray(values, dtype=float)
    shifted = np.exp(values - values.max())
    return shifted / shifted.sum()


def puct(
    q: np.ndarray, prior: np.ndarray, parent_visits: int, child_visits: np.ndarray, c_ucb: float
) -> np.ndarray:
    """Eq. 4.4 for each child a: Q-bar(s,a) + C_ucb pi(a|s) sqrt(n(s)) / (1 + n(s.a))."""
    q = np.asarray(q, dtype=float)
    visits = np.asarray(child_visits, dtype=float)
    return q + c_ucb * np.asarray(prior, dtype=float) * math.sqrt(parent_visits) / (1.0 + visits)


def widening_limit(visits: int, pw: float, options: int) -> int:
    """How many children a node with ``visits`` may have: min(|A|, floor(n(s)^PW)), and at
    least one, so that a node is expanded on its first visit.

    The thesis: "when the integer value of n(s,a)^PW is incremented, a new value is
    considered"; PW = 0.6 in its experiments.
    """
    return min(options, max(1, math.floor(visits**pw)))
