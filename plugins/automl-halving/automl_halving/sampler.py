"""Where the configurations that enter a bracket's first rung come from.

A configuration is new if it was never proposed. When the space has none left (a small pool:
LCDB offers about 20 learners), a bracket may still start a configuration that has not yet
been evaluated at the bracket's starting budget or above: a re-evaluation at a budget it never
had is new information, not a repeat.

First the warm start's configurations, in order (Auto-sklearn 2.0 fills successive halving's
first brackets with its portfolio). Then, without a surrogate in the recipe, uniform random
samples (Hyperband). With one, BOHB's model-based sampling (Falkner et al., 2018): the
surrogate is fitted on the largest budget that has at least ``min_points`` finished
evaluations, and the next configuration maximises expected improvement over a set of random
candidates and neighbours of the best ones at that budget (the whole pool, on a pool space); a
``random_fraction`` of the samples stay random so that the model cannot trap the search.

On a pool, the candidates not yet proposed are kept as a mask, so that drawing one costs the
same whatever the pool's size (LCDB's pools are small, a meta-dataset's can hold tens of
thousands of pipelines). On a pipeline space the candidates stay encoded rows until one is
chosen: random rows come from a stock sampled ``STOCK`` at a time, neighbours are stepped on
the rows themselves, observed configurations are encoded once, and only the chosen row is
turned into a configuration (building ConfigSpace configurations for every candidate cost
more than the model: 1.7 s of a 1.75 s model-based sample on a 10-d space).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from automl_core.contracts import WARM_START_ORIGIN, SearchContext, SearchSpace, Surrogate
from automl_core.space import VectorSpace, vector_space
from automl_core.trial import Candidate, Config
from automl_spaces.acquisition import (
    RandomRows,
    best_first,
    expected_improvement,
    failures_as_worst,
    prepared_surrogate,
    random_best,
)
from automl_spaces.pool_space import PoolSpace

#: At most this many pool candidates are scored per model-based sample.
POOL_SAMPLE = 4096
#: Random rows are sampled this many at a time (ConfigSpace's sampling has a cost per call).
STOCK = 1024
#: Neighbours of the best observed rows scored per model-based sample: this many Gaussian
#: steps per active number (and every other value of each active categorical).
NEIGHBOUR_STEPS = 16


class NewConfigurations:
    """The warm start, then random or model-based configurations, never one proposed before."""

    def __init__(
        self,
        context: SearchContext,
        rng: np.random.Generator,
        random_fraction: float,
        min_points: int | None,
        n_candidates: int,
    ) -> None:
        self.space: SearchSpace = context.space
        #: the space's typed whole, when it has one (columns, neighbours); None for a space
        #: of configurations only, which is sampled and encoded, nothing more
        self.vectors: VectorSpace | None = vector_space(context.space)
        #: on a pool: candidates are drawn from a mask and scored from the encoding table
        self.pool: PoolSpace | None = self.vectors.as_pool() if self.vectors else None
        self.rng = rng
        self.random_fraction = random_fraction
        self.n_candidates = n_candidates
        self.surrogate: Surrogate | None = None
        if context.surrogate_factory is not None:
            if self.vectors is not None:
                self.surrogate = prepared_surrogate(
                    context.surrogate_factory, self.vectors, context
                )
            else:
                self.surrogate = context.surrogate_factory()
        # The encoded width is read from a random sample, not from ``space.columns()``: the
        # draw is part of every seeded run's random stream (the results in
        # docs/benchmarks.md were made with it), and dropping it would change every proposal.
        width = self.space.encode([self.space.sample(rng, 1)[0]]).shape[1]
        #: BOHB fits at n + 1 points (n dimensions), Auto-sklearn at n / 2; capped so that a
        #: space of hundreds of encoded columns still gets a model within a short run.
        self.min_points = min_points or max(3, min(20, math.ceil(width / 2) + 1))
        self.queue: list[Config] = [*context.warm_start_configs()]
        self.seen: set[str] = set()
        #: on a pool: which candidates are offered and not yet proposed (or told)
        self.unseen: np.ndarray | None = None
        if self.pool is not None:
            assert self.pool.available is not None
            self.unseen = self.pool.available.copy()
        #: the largest budget each proposed configuration was asked at
        self.reached: dict[str, tuple[Config, float]] = {}
        #: per budget: configuration key -> (configuration, loss); failures count as the
        #: worst loss at that budget
        self.observations: dict[float, dict[str, tuple[Config, float]]] = defaultdict(dict)
        #: a pipeline space: candidates are scored as encoded rows, decoded only when chosen
        self.on_rows = self.vectors is not None and self.pool is None
        #: configuration key -> encoded row, for every configuration proposed or told
        #: (on rows only: the model is fitted on these rows without re-encoding)
        self.rows: dict[str, np.ndarray] = {}
        #: random rows sampled ahead (on rows only)
        self.stock = RandomRows(STOCK)

    def observe(self, config: Config, budget: float, loss: float) -> None:
        key = self.space.key(config)
        self._see(key, config)
        if self.on_rows and key not in self.rows:
            self.rows[key] = self.space.encode([config])[0]  # a result not proposed here
        self.asked(config, budget)
        self.observations[budget][key] = (config, loss)

    def asked(self, config: Config, budget: float) -> None:
        """Note that ``config`` is evaluated at ``budget`` (a promotion, a new start)."""
        key = self.space.key(config)
        if key not in self.reached or self.reached[key][1] < budget:
            self.reached[key] = (config, budget)

    def next(self, budget: float) -> Candidate | None:
        """A configuration to start at ``budget``: a new one, else (the space exhausted) one
        never evaluated at ``budget`` or above; None when there is neither."""
        candidate = self._new()
        if candidate is None:
            below = [c for c, reached in self.reached.values() if reached < budget]
            if not below:
                return None
            candidate = Candidate(below[int(self.rng.integers(len(below)))], origin="revisit")
        self.asked(candidate.config, budget)
        return candidate

    def _new(self) -> Candidate | None:
        """A configuration never proposed, or None when the space has none left."""
        while self.queue:
            config = self.queue.pop(0)
            if self._claim(config):
                return Candidate(config, origin=WARM_START_ORIGIN)
        if self.surrogate is not None and self.rng.random() >= self.random_fraction:
            budget = self._model_budget()
            if budget is not None:
                chosen = self._by_model(budget)
                if chosen is not None and self._claim(*chosen):  # (configuration, row)
                    return Candidate(chosen[0], origin=f"model@{budget:g}")
        if self.unseen is not None:  # a pool: draw among the unseen, until it runs out
            unseen = np.flatnonzero(self.unseen)
            if not unseen.size:
                return None
            config = {"candidate": int(unseen[int(self.rng.integers(len(unseen)))])}
            self._claim(config)
            return Candidate(config, origin="random")
        if self.vectors is not None:  # decode lazily: a configuration costs more than a row
            for _ in range(20):
                for row in self.stock.take(self.vectors, self.rng, 32):
                    config = self.vectors.decode(row)
                    if self._claim(config, row):
                        return Candidate(config, origin="random")
            return None
        for _ in range(20):
            for config in self.space.sample(self.rng, 32):
                if self._claim(config):
                    return Candidate(config, origin="random")
        return None

    def _claim(self, config: Config, row: np.ndarray | None = None) -> bool:
        """Mark ``config`` (encoded as ``row``, when the caller has it) as proposed; False if
        it was proposed (or told) before."""
        key = self.space.key(config)
        if key in self.seen:
            return False
        self._see(key, config)
        if row is not None:
            self.rows[key] = row
        return True

    def _see(self, key: str, config: Config) -> None:
        """Note ``config`` (whose key is ``key``) as proposed or told: never new again."""
        self.seen.add(key)
        if self.unseen is not None:
            index = config["candidate"]
            if 0 <= index < len(self.unseen):  # else not of this pool: nothing to leave out
                self.unseen[index] = False

    def _model_budget(self) -> float | None:
        """The largest budget with at least ``min_points`` finished evaluations."""
        enough = [b for b, seen in self.observations.items() if len(seen) >= self.min_points]
        return max(enough) if enough else None

    def _by_model(self, budget: float) -> tuple[Config, np.ndarray | None] | None:
        """The candidate of highest expected improvement under the surrogate fitted on the
        results at ``budget`` (failures as the worst of them), with its encoded row when it
        was scored as one; None when there is no candidate left, or fewer than two finished
        results."""
        assert self.surrogate is not None
        observed = self.observations[budget]
        losses = np.array([loss for _, loss in observed.values()], dtype=float)
        if np.isfinite(losses).sum() < 2:
            return None
        losses = failures_as_worst(losses)
        if self.on_rows:
            return self._by_model_on_rows(list(observed), losses)
        configs = [config for config, _ in observed.values()]
        candidates, rows = self._candidates(configs, losses)
        if not candidates:  # checked before fitting: an exhausted pool needs no model
            return None
        self.surrogate.fit(self.space.encode(configs), losses)
        mean, std = self.surrogate.predict(rows)
        scores = expected_improvement(np.asarray(mean), np.asarray(std), float(losses.min()))
        return candidates[random_best(scores, self.rng)], None

    def _by_model_on_rows(
        self, keys: list[str], losses: np.ndarray
    ) -> tuple[Config, np.ndarray] | None:
        """``_by_model`` on a pipeline space: random rows and neighbours of the three best
        observed are scored encoded, and the best-scoring row whose configuration was never
        proposed is decoded."""
        assert self.surrogate is not None and self.vectors is not None
        observed = np.vstack([self.rows[key] for key in keys])
        self.surrogate.fit(observed, losses)
        rows = [self.stock.take(self.vectors, self.rng, self.n_candidates)]
        for index in np.argsort(losses)[:3]:
            rows.append(self.vectors.neighbour_vectors(observed[index], self.rng, NEIGHBOUR_STEPS))
        candidates = np.vstack([r for r in rows if len(r)])
        mean, std = self.surrogate.predict(candidates)
        scores = expected_improvement(np.asarray(mean), np.asarray(std), float(losses.min()))
        for index in best_first(scores, self.rng):
            config = self.vectors.decode(candidates[index])
            if self.space.key(config) not in self.seen:
                return config, candidates[index]
        return None

    def _candidates(
        self, observed: Sequence[Config], losses: np.ndarray
    ) -> tuple[list[Config], np.ndarray]:
        """Unseen configurations to score, and their encodings: on a pool, (a sample of) the
        unseen candidates; on a space of configurations only (no encoded rows of its own),
        random samples."""
        if self.pool is not None and self.unseen is not None:
            indices = np.flatnonzero(self.unseen)
            if len(indices) > POOL_SAMPLE:
                indices = indices[self.rng.choice(len(indices), POOL_SAMPLE, replace=False)]
            pool: list[Config] = [{"candidate": int(index)} for index in indices]
            return pool, self.pool.encodings[indices]
        unseen: dict[str, Config] = {}
        for config in self.space.sample(self.rng, self.n_candidates):
            key = self.space.key(config)
            if key not in self.seen:
                unseen.setdefault(key, config)
        candidates = list(unseen.values())
        return candidates, self.space.encode(candidates) if candidates else np.empty((0, 0))
