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
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from automl_core.contracts import SearchContext, SearchSpace, Surrogate
from automl_core.space import PoolSpace
from automl_core.trial import Candidate, Config

#: At most this many pool candidates are scored per model-based sample.
POOL_SAMPLE = 4096


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
        self.rng = rng
        self.random_fraction = random_fraction
        self.n_candidates = n_candidates
        self.surrogate: Surrogate | None = None
        if context.surrogate_factory is not None:
            self.surrogate = context.surrogate_factory()
            if hasattr(self.space, "columns"):
                self.surrogate.prepare(self.space.columns())
        width = self.space.encode([self.space.sample(rng, 1)[0]]).shape[1]
        #: BOHB fits at n + 1 points (n dimensions), Auto-sklearn at n / 2; capped so that a
        #: space of hundreds of encoded columns still gets a model within a short run.
        self.min_points = min_points or max(3, min(20, math.ceil(width / 2) + 1))
        self.queue: list[Config] = context.warm_start_configs()
        self.seen: set[str] = set()
        #: the largest budget each proposed configuration was asked at
        self.reached: dict[str, tuple[Config, float]] = {}
        #: per budget: configuration key -> (configuration, loss); failures count as the
        #: worst loss at that budget
        self.observations: dict[float, dict[str, tuple[Config, float]]] = defaultdict(dict)

    def observe(self, config: Config, budget: float, loss: float) -> None:
        self.seen.add(self.space.key(config))
        self.asked(config, budget)
        self.observations[budget][self.space.key(config)] = (config, loss)

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
                return Candidate(config, origin="warmstart")
        if self.surrogate is not None and self.rng.random() >= self.random_fraction:
            budget = self._model_budget()
            if budget is not None:
                config = self._by_model(budget)
                if config is not None and self._claim(config):
                    return Candidate(config, origin=f"model@{budget:g}")
        if isinstance(self.space, PoolSpace):  # draw among the unseen: a pool runs out
            unseen = [c for c in self.space.candidates() if self.space.key(c) not in self.seen]
            if not unseen:
                return None
            config = unseen[int(self.rng.integers(len(unseen)))]
            self._claim(config)
            return Candidate(config, origin="random")
        for _ in range(20):
            for config in self.space.sample(self.rng, 32):
                if self._claim(config):
                    return Candidate(config, origin="random")
        return None

    def _claim(self, config: Config) -> bool:
        key = self.space.key(config)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def _model_budget(self) -> float | None:
        """The largest budget with at least ``min_points`` finished evaluations."""
        enough = [b for b, seen in self.observations.items() if len(seen) >= self.min_points]
        return max(enough) if enough else None

    def _by_model(self, budget: float) -> Config | None:
        assert self.surrogate is not None
        observed = list(self.observations[budget].values())
        losses = np.array([loss for _, loss in observed], dtype=float)
        finite = losses[np.isfinite(losses)]
        if len(finite) < 2:
            return None
        losses = np.where(np.isfinite(losses), losses, finite.max())
        self.surrogate.fit(self.space.encode([c for c, _ in observed]), losses)
        candidates = self._candidates([c for c, _ in observed], losses)
        if not candidates:
            return None
        mean, std = self.surrogate.predict(self.space.encode(candidates))
        scores = expected_improvement(np.asarray(mean), np.asarray(std), float(finite.min()))
        best = np.flatnonzero(scores >= scores.max() - 1e-12)
        return candidates[int(self.rng.choice(best))]

    def _candidates(self, observed: Sequence[Config], losses: np.ndarray) -> list[Config]:
        """Unseen configurations to score: on a pool, (a sample of) the unseen candidates;
        elsewhere random samples plus neighbours of the three best observed."""
        if isinstance(self.space, PoolSpace):
            pool = [c for c in self.space.candidates() if self.space.key(c) not in self.seen]
            if len(pool) > POOL_SAMPLE:
                picks = self.rng.choice(len(pool), POOL_SAMPLE, replace=False)
                pool = [pool[i] for i in picks]
            return pool
        configs = list(self.space.sample(self.rng, self.n_candidates))
        neighbours = getattr(self.space, "neighbours", None)
        if neighbours is not None:
            for index in np.argsort(losses)[:3]:
                configs.extend(neighbours(observed[index], self.rng, 16))
        unseen: dict[str, Config] = {}
        for config in configs:
            key = self.space.key(config)
            if key not in self.seen:
                unseen.setdefault(key, config)
        return list(unseen.values())


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """EI of a loss below ``best`` (zero where the model is certain and no better)."""
    std = np.maximum(std, 1e-12)
    z = (best - mean) / std
    return (best - mean) * norm.cdf(z) + std * norm.pdf(z)
