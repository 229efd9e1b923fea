"""Maximising the acquisition over a space: the whole pool, or random sampling plus local
search (SMAC's recipe), always on encoded rows.

Decoding a row into a configuration is the expensive step on large conditional spaces, so the
optimisers only score rows and return them ranked; the strategy decodes from the top until it
finds a configuration it has not proposed yet.

Ranking with random tie-breaks (``best_first``) and ranking a whole pool (``rank_pool``) are
the core's (:mod:`automl_spaces.acquisition`), shared with other model-based strategies; they
are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from automl_core.space import VectorSpace
from automl_spaces.acquisition import RandomRows, Score, best_first, rank_pool
from automl_spaces.component_rows import ComponentSelector, components_alone, stage_position

__all__ = ["LocalSearch", "PerComponentSearch", "Ranked", "Score", "best_first", "rank_pool"]

#: How many refreshes of :class:`LocalSearch`'s random candidates are sampled at once.
STOCK_REFRESHES = 16


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
    one). The new rows come from a stock sampled ``STOCK_REFRESHES`` refreshes at a time:
    ConfigSpace's sampling costs several milliseconds a call whatever its size up to a few
    thousand rows, more than the rest of an ask on a small space. Climbs start from the best
    observed configurations (``starts``) and the best-scoring random ones, ``n_starts`` in
    all. Each step scores the one-exchange
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
        self.stock = RandomRows(self.refresh * STOCK_REFRESHES)

    def random_rows(self, space: VectorSpace, rng: np.random.Generator) -> np.ndarray:
        """The reservoir of random candidates, with ``refresh`` rows replaced."""
        if self.reservoir is None or len(self.reservoir) < self.n_random:
            self.reservoir = space.sample_vectors(rng, self.n_random)
        else:
            replaced = rng.choice(self.n_random, self.refresh, replace=False)
            self.reservoir[replaced] = self.stock.take(space, rng, self.refresh)
        return self.reservoir

    def rank(
        self, space: VectorSpace, score: Score, starts: np.ndarray, rng: np.random.Generator
    ) -> Ranked:
        random_rows = self.random_rows(space, rng).copy()
        random_scores = score(random_rows)
        best_random = random_rows[best_first(random_scores, rng)]
        climbers = (
            np.vstack([starts, best_random])[: self.n_starts]
            if len(starts)
            else best_random[: self.n_starts]
        )
        climbed = climb(space, score, climbers, rng, self.max_steps, self.neighbours_per_number)
        rows = [random_rows, *climbed.rows]
        scores = [random_scores, *climbed.scores]
        origins = ["random"] * len(random_rows) + ["local"] * sum(len(r) for r in climbed.rows)
        return Ranked.of(np.vstack(rows), np.concatenate(scores), origins, rng)


class PerComponentSearch:
    """The acquisition maximised in each component of one ``stage`` apart, every component's
    candidates then ranked together: the shared-latent-space paper's "EI maximised per
    algorithm in its own hyper-parameter space, the best (algorithm, configuration)
    proposed".

    For each component: ``starts`` random configurations of it (drawn from the space
    restricted to it, encoded in the whole space) and its best observed configurations are
    climbed through their neighbours that keep the component, for at most ``max_steps``
    steps. A component is searched even where the joint optimiser's random draws would rarely
    land (a component with many hyper-parameters next to one with none). Costs about
    ``components x starts`` climbs per ask, against :class:`LocalSearch`'s ``n_starts``.
    """

    def __init__(
        self, stage: str, starts: int = 10, max_steps: int = 5, neighbours_per_number: int = 2
    ) -> None:
        self.stage, self.starts = stage, starts
        self.max_steps, self.neighbours_per_number = max_steps, neighbours_per_number
        #: per space searched: its selector, the stage's position, its components alone
        self._prepared: dict[int, tuple[ComponentSelector, int, dict[str, VectorSpace]]] = {}

    def rank(
        self, space: VectorSpace, score: Score, starts: np.ndarray, rng: np.random.Generator
    ) -> Ranked:
        """``starts``: observed rows, best first (each climbs within its own component)."""
        selector, position, alone = self._prepare(space)
        names = selector.blocks.stages[position].names
        start_components = selector(starts)[:, position] if len(starts) else np.empty(0)
        rows, scores, origins = [], [], []
        for name, restricted in alone.items():
            index = names.index(name)
            drawn = space.encode(restricted.sample(rng, self.starts))
            own = starts[start_components == index][:2] if len(starts) else starts
            climbers = np.vstack([own, drawn]) if len(own) else drawn
            climber_scores = score(climbers)

            def keeps(candidates: np.ndarray, index: int = index) -> np.ndarray:
                return selector(candidates)[:, position] == index

            climbed = climb(
                space,
                score,
                climbers,
                rng,
                self.max_steps,
                self.neighbours_per_number,
                keeps,
                climber_scores,
            )
            rows += [drawn, *climbed.rows]
            scores += [climber_scores[len(own) :], *climbed.scores]
            origins += ["random"] * len(drawn) + ["local"] * sum(len(r) for r in climbed.rows)
        return Ranked.of(np.vstack(rows), np.concatenate(scores), origins, rng)

    def _prepare(self, space: VectorSpace) -> tuple[ComponentSelector, int, dict[str, VectorSpace]]:
        """What :meth:`rank` reads of ``space``, derived once per space."""
        if id(space) not in self._prepared:
            selector = ComponentSelector(space, "smbo")
            position = stage_position(selector.blocks, self.stage, "smbo: acquisition_stage")
            self._prepared[id(space)] = (selector, position, components_alone(space, self.stage))
        return self._prepared[id(space)]


@dataclass(frozen=True)
class Climbed:
    """What a climb scored, step by step."""

    rows: list[np.ndarray]
    scores: list[np.ndarray]


def climb(
    space: VectorSpace,
    score: Score,
    climbers: np.ndarray,
    rng: np.random.Generator,
    max_steps: int,
    neighbours_per_number: int,
    keeps: Callable[[np.ndarray], np.ndarray] | None = None,
    climber_scores: np.ndarray | None = None,
) -> Climbed:
    """Greedy ascent of the acquisition: each step scores the neighbours of every climber at
    once (those ``keeps`` accepts, when given) and moves each climber to its best neighbour
    while that improves its score, for at most ``max_steps`` steps. ``climber_scores``: the
    climbers' scores when the caller has them."""
    climbers = climbers.copy()
    climber_scores = score(climbers) if climber_scores is None else climber_scores.copy()
    rows, scores = [], []
    for _ in range(max_steps):
        neighbourhoods = []
        for row in climbers:
            near = space.neighbour_vectors(row, rng, neighbours_per_number)
            if keeps is not None and len(near):
                near = near[keeps(near)]
            neighbourhoods.append(near)
        sizes = [len(n) for n in neighbourhoods]
        if not sum(sizes):
            break
        stacked = np.vstack([n for n in neighbourhoods if len(n)])
        stacked_scores = score(stacked)
        rows.append(stacked)
        scores.append(stacked_scores)
        moved, offset = False, 0
        for i, size in enumerate(sizes):
            if size:
                j = offset + int(np.argmax(stacked_scores[offset : offset + size]))
                if stacked_scores[j] > climber_scores[i]:
                    climbers[i], climber_scores[i], moved = stacked[j], stacked_scores[j], True
            offset += size
        if not moved:
            break
    return Climbed(rows, scores)
