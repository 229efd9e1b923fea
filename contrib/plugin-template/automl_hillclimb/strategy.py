"""Hill climbing: propose a neighbour of the best configuration, or restart at random."""

from __future__ import annotations

import math

import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.space import UnseenSampler, VectorSpace, require_vector_space
from automl_core.trial import Candidate, Result, Trial


class HillClimbing(SearchStrategy):
    """Moves one step at a time away from the best configuration seen so far.

    With probability ``restart_probability`` (and until a first result is in) it samples at
    random instead. A step is one of the space's ``neighbours``: one hyper-parameter or
    component changed on a pipeline space, a nearest candidate on a pool. The strategy works
    on any :class:`~automl_core.space.VectorSpace` and asks nothing else of it, so it needs no
    code per kind of space.
    """

    surrogate_use = "unused"

    def __init__(self, restart_probability: float = 0.2) -> None:
        if not 0.0 <= restart_probability <= 1.0:
            raise ValueError(f"restart_probability must be in [0, 1], got {restart_probability}")
        self.restart_probability = restart_probability

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        # Checked once here, typed from then on: a space without neighbours is refused with
        # what it lacks, rather than searched differently without a word.
        self.space: VectorSpace = require_vector_space(context.space, "hillclimb")
        self.rng = np.random.default_rng(context.seed)
        self.best: tuple[float, dict] | None = None
        self.seen: set[str] = set()
        self.sampler = UnseenSampler(self.space)  # random restarts never repeat a proposal

    def ask(self) -> Candidate | None:
        best = self.best
        if best is not None and self.rng.random() >= self.restart_probability:
            for config in self.space.neighbours(best[1], self.rng, n=8):
                if self._claim(config):
                    return Candidate(config, origin="neighbour")
        config = self.sampler.next(self.rng, self._claim)
        return None if config is None else Candidate(config, origin="random")

    def _claim(self, config: dict) -> bool:
        """Mark ``config`` as proposed; False if it already was."""
        key = self.space.key(config)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def tell(self, trial: Trial, result: Result) -> None:
        self.seen.add(self.space.key(trial.config))
        if math.isfinite(result.loss) and (self.best is None or result.loss < self.best[0]):
            self.best = (result.loss, dict(trial.config))
