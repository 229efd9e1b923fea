"""Random search: the baseline every other strategy must beat, and the default strategy."""

from __future__ import annotations

import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.hookspecs import RegisterFactory, hookimpl
from automl_core.space import UnseenSampler, vector_space
from automl_core.trial import Candidate, Config, Result, Trial

#: Configurations sampled at a time: the first batch, then twice the last up to the largest.
#: ConfigSpace's sampling costs ~10 ms a call whatever its size up to a few hundred on
#: auto-sklearn's space (0.16 ms a configuration at 64, 0.03 at 512, on a 2-core VM); a
#: seeded search's first 64 configurations are those of the fixed batch of 64 of before.
SAMPLE_BATCH, LARGEST_SAMPLE_BATCH = 64, 512


class RandomSearch(SearchStrategy):
    """Uniform samples from the space (after the warm start's configurations, which the run
    loop proposes first), the space's default first when ``include_default``.

    Configurations already proposed are not proposed again; when ``max_retries`` samples in a
    row are all duplicates the space is taken as exhausted and ``ask`` returns ``None``.
    """

    surrogate_use = "unused"

    def __init__(self, include_default: bool = False, max_retries: int = 200) -> None:
        self.include_default = include_default
        self.max_retries = max_retries

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)
        self.seen: set[str] = set()
        self._untold: list[Config] = []  # asked for, not yet told
        self.queue: list[Candidate] = []
        self.sampler = UnseenSampler(context.space, SAMPLE_BATCH, self.max_retries)
        self.sampler.max_batch = LARGEST_SAMPLE_BATCH
        typed = vector_space(context.space)
        default = typed.default() if self.include_default and typed is not None else None
        if default is not None:  # a pool has none; a space of only configurations neither
            self.queue.append(Candidate(default, origin="default"))

    def ask(self) -> Candidate | None:
        while self.queue:
            candidate = self.queue.pop(0)
            if self._claim(candidate.config):
                return candidate
        config = self.sampler.next(self.rng, self._claim)
        return None if config is None else Candidate(config, origin="random")

    def _claim(self, config: Config) -> bool:
        key = self.context.space.key(config)
        if key in self.seen:
            return False
        self.seen.add(key)
        self._untold.append(config)
        return True

    def tell(self, trial: Trial, result: Result) -> None:
        """A trial this search asked for is already seen (its key costs as much as the rest
        of a cheap trial's loop: it is not computed again); another one (told on resume,
        say) is marked seen."""
        for position, config in enumerate(self._untold):
            if config == trial.config:
                del self._untold[position]
                return
        self.seen.add(self.context.space.key(trial.config))


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register("random", RandomSearch)
