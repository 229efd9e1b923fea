"""The search strategy ``design``: the same configurations on every dataset, to build meta-data.

Meta-data is a table of datasets x configurations; for the table to be dense every dataset
must run the same configurations. A search strategy would adapt to each dataset; this one
does not: it proposes a fixed design and then stops. The design is, in order,

1. the configurations the recipe lists (``configs``), if any;
2. with ``defaults``, the default pipeline of each component of the space's algorithm stage
   (``stage``, by default the last: the classifier), Mosaic's initial pipelines per
   algorithm;
3. ``random`` configurations drawn with the design's ``seed`` (None: the run's seed). Set
   it when building meta-data: every dataset, and every seed of a run, then gets the same
   ones.

Run it with a trial budget at least the design's size; the run ends when the design is done.
``automl data build`` turns the run folders into meta-data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.errors import InvalidConfigurationError
from automl_core.space import SearchSpace, vector_space
from automl_core.trial import Candidate, Result, Trial
from automl_spaces.component_rows import components_alone, stage_position


class FixedDesign(SearchStrategy):
    """Proposes a fixed list of configurations, the same on every dataset, then stops."""

    surrogate_use = "unused"

    def __init__(
        self,
        configs: Sequence[Mapping[str, Any]] = (),
        defaults: bool = True,
        random: int = 0,
        stage: str | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(random, int) or isinstance(random, bool) or random < 0:
            raise ValueError(f"random: got {random!r}, expected an integer >= 0")
        if not all(isinstance(config, Mapping) for config in configs):
            raise ValueError("configs: expected a list of configurations (mappings)")
        self.configs = [dict(config) for config in configs]
        self.defaults, self.random, self.stage, self.seed = defaults, random, stage, seed

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        seed = context.seed if self.seed is None else self.seed
        self.queue = [Candidate(c, origin="design") for c in self.design(context.space, seed)]
        self.seen: set[str] = set()

    def design(self, space: SearchSpace, seed: int) -> list[dict[str, Any]]:
        """The design's configurations on ``space``, in order, each once (``seed`` draws the
        random ones)."""
        listed = []
        for position, config in enumerate(self.configs):
            try:
                listed.append(space.validate(config))
            except InvalidConfigurationError as error:
                raise ValueError(
                    f"design: configs[{position}] is not of the space: {error}"
                ) from None
        rng = np.random.default_rng(seed)
        drawn = space.sample(rng, self.random) if self.random else []
        unique: dict[str, dict[str, Any]] = {}
        for config in [*listed, *self._component_defaults(space), *drawn]:
            unique.setdefault(space.key(config), dict(config))
        return list(unique.values())

    def _component_defaults(self, space: SearchSpace) -> list[dict[str, Any]]:
        """The default pipeline of each component of the algorithm stage (none on a pool,
        which has no defaults)."""
        typed = vector_space(space)
        if not self.defaults or typed is None:
            return []
        blocks = typed.blocks()
        stage = blocks.stages[stage_position(blocks, self.stage, "design: stage")].name
        configs = []
        for alone in components_alone(typed, stage).values():
            default = alone.default()
            if default is not None:
                configs.append(typed.validate(default))
        return configs

    def ask(self) -> Candidate | None:
        while self.queue:
            candidate = self.queue.pop(0)
            key = self.context.space.key(candidate.config)
            if key not in self.seen:
                self.seen.add(key)
                return candidate
        return None

    def tell(self, trial: Trial, result: Result) -> None:
        self.seen.add(self.context.space.key(trial.config))
