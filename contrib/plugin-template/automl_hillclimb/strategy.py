"""Hill climbing: propose a neighbour of the best configuration, or restart at random."""

from __future__ import annotations

import math

import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.trial import Candidate, Result, Trial


class HillClimbing(SearchStrategy):
    """Moves one hyper-parameter at a time away from the best configuration seen so far.

    With probability ``restart_probability`` (and until a first result is in) it samples at
    random instead. Spaces without a ``neighbours`` method (pool spaces) are searched at random.
    """

    def __init__(self, restart_probability: float = 0.2) -> None:
        if not 0.0 <= restart_probability <= 1.0:
            raise ValueError(f"restart_probability must be in [0, 1], got {restart_probability}")
        self.restart_probability = restart_probability

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)
        self.best: tuple[float, dict] | None = None
        self.seen: set[str] = set()

    def ask(self) -> Candidate | None:
        space = self.context.space
        best = self.best
        climb = best is not None and hasattr(space, "neighbours")
        if best is not None and climb and self.rng.random() >= self.restart_probability:
            for config in space.neighbours(best[1], self.rng, n=8):
                if space.key(config) not in self.seen:
                    return self._propose(config, "neighbour")
        for config in space.sample(self.rng, 16):
            if space.key(config) not in self.seen:
                return self._propose(config, "random")
        return None

    def _propose(self, config: dict, origin: str) -> Candidate:
        self.seen.add(self.context.space.key(config))
        return Candidate(config, origin=origin)

    def tell(self, trial: Trial, result: Result) -> None:
        self.seen.add(self.context.space.key(trial.config))
        if math.isfinite(result.loss) and (self.best is None or result.loss < self.best[0]):
            self.best = (result.loss, dict(trial.config))
