"""Maximising the acquisition over a space: the whole pool, or random sampling plus local
search (SMAC's recipe), always on encoded rows.

Decoding a row into a configuration is the expensive step on large conditional spaces, so the
optimisers only score rows and return them ranked; the strategy decodes from the top until it
finds a configuration it has not proposed yet.

Ranking with random tie-breaks (``best_first``) and ranking a whole pool (``rank_pool``) are
the core's (:mod:`automl_core.acquisition`), shared with other model-based strategies; they
are re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automl_core.acquisition import Score, best_first, rank_pool
from automl_core.space import VectorSpace

__all__ = ["LocalSearch", "Ranked", "Score", "best_first", "rank_pool"]


@dataclass(frozen=True)
class Ranked:
    """Candidate rows, best first, with their acquisition values and where they came from."""

    rows: np.ndarray
    scores: np.ndarray
    origins: list[str]

    @classmethod
    def of(
        cls, rows: np.ndarray, scores: np.ndarray, origins: list[str], rng: np.random.Generator
    ) -> Ranked:
        order = best_first(scores, rng)
        return cls(rows[order], scores[order], [origins[i] for i in order])


class LocalSearch:
    """Random candidates plus greedy local search from the most promising points.

    ``n_random`` random configurations are scored at each call: a reservoir of that size of
    which ``refresh`` rows are drawn anew each time (sampling is what costs most on a large
    conditional space; a random candidate kept a few more asks is as good a probe as a new
    one). Climbs start from the best observed configurations (``starts``) and the
    best-scoring random ones, ``n_starts`` in all. Each step scores the one-exchange
    neighbours of every climber at once and moves a climber to its best neighbour while that
    improves the acquisition, for at most ``max_steps`` steps. Everything scored on the way is
    a candidate.
    """

    def __init__(
        self,
        n_random: int = 256,
        n_starts: int = 4,
        max_steps: int = 5,
        neighbours_per_number: int = 2,
        refresh: int = 64,
    ) -> None:
        self.n_random = n_random
        self.n_starts = n_starts
        self.max_steps = max_steps
        self.neighbours_per_number = neighbours_per_number
        self.refresh = min(refresh, n_random)
        self.reservoir: np.ndarray | None = None

    def random_rows(self, space: VectorSpace, rng: np.random.Generator) -> np.ndarray:
        """The reservoir of random candidates, with ``refresh`` rows replaced."""
        if self.reservoir is None or len(self.reservoir) < self.n_random:
            self.reservoir = space.sample_vectors(rng, self.n_random)
        else:
            replaced = rng.choice(self.n_random, self.refresh, replace=False)
            self.reservoir[replaced] = space.sample_vectors(rng, self.refresh)
        return self.reservoir

    def rank(
        self, space: VectorSpace, score: Score, starts: np.ndarray, rng: np.random.Generator
    ) -> Ranked:
        random_rows = self.random_rows(space, rng).copy()
        random_scores = score(random_rows)
        rows, scores = [random_rows], [random_scores]
        origins = ["random"] * len(random_rows)
        best_random = random_rows[best_first(random_scores, rng)]
        climbers = (
            np.vstack([starts, best_random])[: self.n_starts]
            if len(starts)
            else best_random[: self.n_starts]
        )
        climber_scores = score(climbers)
        for _ in range(self.max_steps):
            moved = False
            neighbourhoods = [
                space.neighbour_vectors(row, rng, self.neighbours_per_number) for row in climbers
            ]
            sizes = [len(n) for n in neighbourhoods]
            if not sum(sizes):
                break
            stacked = np.vstack([n for n in neighbourhoods if len(n)])
            stacked_scores = score(stacked)
            rows.append(stacked)
            scores.append(stacked_scores)
            origins += ["local"] * len(stacked)
            offset = 0
            for i, size in enumerate(sizes):
                if size:
                    j = offset + int(np.argmax(stacked_scores[offset : offset + size]))
                    if stacked_scores[j] > climber_scores[i]:
                        climbers[i], climber_scores[i], moved = stacked[j], stacked_scores[j], True
                offset += size
            if not moved:
                break
        return Ranked.of(np.vstack(rows), np.concatenate(scores), origins, rng)
