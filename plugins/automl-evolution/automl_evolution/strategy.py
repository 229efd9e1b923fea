"""Regularised (aging) evolution with crossover (Real et al. 2019, "Regularized Evolution for
Image Classifier Architecture Search", AAAI).

A population of evaluated configurations is kept at a fixed size. Each new configuration is a
child of tournament winners: a mutation of one, or a crossover of two then mutated. When its
result arrives it joins the population and one member dies -- the *oldest* (aging, the
"regularised" variant: a configuration that was lucky once cannot stay forever, so the
population keeps moving and noisy losses are forgiven), or the *worst* (the classic
steady-state genetic algorithm).

The run loop may ask several times before it tells, and results arrive in any order: a
configuration only joins the population when its result is told, and a child is bred from
whatever the population holds at the moment it is asked for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.space import UnseenSampler
from automl_core.trial import Candidate, Config, Result, Trial
from automl_evolution.operators import PoolVariation, Variation, variation_for
from automl_spaces.options import boolean, integer, optional, probability

#: Tournament size unless the recipe sets one: a quarter of the default population, Real et
#: al.'s ratio.
DEFAULT_TOURNAMENT = 5
#: Children bred per ask before giving up and sampling at random (each may be a duplicate).
CHILD_ATTEMPTS = 10
#: Random samples drawn per ask, in batches, before the space is taken as exhausted (as in
#: the core's random search).
RANDOM_ATTEMPTS, RANDOM_BATCH = 200, 64


@dataclass
class Member:
    """An evaluated configuration in the population. ``born`` counts results in arrival order
    (the age aging goes by); ``loss`` is ``inf`` for a failed trial."""

    config: dict[str, Any]
    loss: float
    key: str
    born: int


def tournament_winner(losses: Sequence[float], size: int, rng: np.random.Generator) -> int:
    """Tournament selection: ``size`` members drawn uniformly without replacement, the one with
    the lowest loss wins (ties go to the one drawn first, i.e. at random). Returns its index.

    The tournament size sets the selection pressure: 1 is a uniformly random parent, the whole
    population always the best member.
    """
    entrants = rng.choice(len(losses), size=min(size, len(losses)), replace=False)
    return int(entrants[np.argmin(np.asarray(losses, dtype=float)[entrants])])


@attrs.define(slots=False, eq=False)
class Evolution(SearchStrategy):
    """Regularised evolution with crossover over pipeline spaces and pools.

    Parameters:
        population: members kept (20). The first ``population`` configurations asked are the
            warm start's, then random samples; after that every ask breeds a child.
        tournament: members drawn per tournament (default: 5, or ``population`` if smaller;
            at most ``population``).
        crossover: probability that a child is the crossover of two tournament winners,
            then mutated, rather than a mutation of one winner (0.2).
        mutation_component: probability that a mutation swaps the component of one stage
            rather than changing one hyper-parameter value (0.3); on a pool with stage
            choices, that it moves to a candidate differing in exactly one stage.
        aging: when a result joins a full population, the oldest member dies (True:
            regularised evolution) or the worst one (False).

    Failed trials join the population with an infinite loss: they rank below every finished
    trial (a tournament picks one only when every entrant failed) and, without aging, die
    first. They still take a place, so a region of the space that keeps crashing loses
    ground. Unlike SMBO's "worst loss seen", the rank does not move as results come in.

    On spaces other than pipeline spaces and pools there are no operators: children are
    random samples (origin ``random``).
    """

    surrogate_use = "unused"

    population: int = attrs.field(default=20, validator=integer(at_least=2))
    tournament: int | None = attrs.field(default=None, validator=optional(integer(at_least=1)))
    crossover: float = attrs.field(default=0.2, validator=probability())
    mutation_component: float = attrs.field(default=0.3, validator=probability())
    aging: bool = attrs.field(default=True, validator=boolean())

    def __attrs_post_init__(self) -> None:
        if self.tournament is None:
            self.tournament = min(DEFAULT_TOURNAMENT, self.population)
        if self.tournament > self.population:
            raise ValueError(
                f"tournament must be at most population ({self.population}), got {self.tournament}"
            )

    # -- set-up ------------------------------------------------------------------------------
    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.space = context.space
        self.rng = np.random.default_rng(context.seed)
        self.variation: Variation = variation_for(self.space)
        self.seen: set[str] = set()
        self.members: list[Member] = []
        self.told = 0
        self.sampler = UnseenSampler(self.space, RANDOM_BATCH, RANDOM_ATTEMPTS)
        self.queue = self._initial_members(context)

    def _initial_members(self, context: SearchContext) -> list[Candidate]:
        """Random samples up to ``population``, of which the warm start the loop serves
        first takes its share."""
        queue = []
        missing = self.population - context.served_first
        if missing > 0:
            queue += [Candidate(c, origin="random") for c in self.space.sample(self.rng, missing)]
        return queue

    # -- ask ---------------------------------------------------------------------------------
    def ask(self) -> Candidate | None:
        while self.queue:
            candidate = self.queue.pop(0)
            if self._claim(candidate.config):
                return candidate
        if len(self.members) < 2:  # results still running: nothing to breed from yet
            return self._random()
        return self._child() or self._random()

    def _child(self) -> Candidate | None:
        """A child not proposed before, or None after ``CHILD_ATTEMPTS`` duplicates/failures."""
        for _ in range(CHILD_ATTEMPTS):
            child, origin = self._breed()
            if child is not None and self._claim(child):
                return Candidate(child, origin=origin)
        return None

    def _breed(self) -> tuple[dict | None, str]:
        """One child and how it was made: ``crossover`` (then mutated) or ``mutation``; a
        crossover that finds no admissible child falls back to a mutation of its first parent."""
        swap = bool(self.rng.random() < self.mutation_component)
        if self.rng.random() < self.crossover:
            first, second = self._two_parents()
            mixed = self.variation.crossover(first.config, second.config, self.rng)
            if mixed is not None:
                return self.variation.mutate(mixed, self.rng, swap), "crossover"
        else:
            first = self._parent()
        return self.variation.mutate(first.config, self.rng, swap), "mutation"

    def _parent(self) -> Member:
        losses = [member.loss for member in self.members]
        return self.members[tournament_winner(losses, self.tournament, self.rng)]

    def _two_parents(self) -> tuple[Member, Member]:
        """Winners of two tournaments, the second held without the first winner."""
        losses = [member.loss for member in self.members]
        first = tournament_winner(losses, self.tournament, self.rng)
        others = [i for i in range(len(self.members)) if i != first]
        second = others[tournament_winner([losses[i] for i in others], self.tournament, self.rng)]
        return self.members[first], self.members[second]

    def _random(self) -> Candidate | None:
        """A random configuration not proposed before; None when the space is exhausted
        (exactly on a pool, after ``RANDOM_ATTEMPTS`` duplicates in a row otherwise)."""
        if isinstance(self.variation, PoolVariation):
            while (config := self.variation.random_unproposed(self.rng)) is not None:
                if self._claim(config):
                    return Candidate(config, origin="random")
            return None
        config = self.sampler.next(self.rng, self._claim)
        return None if config is None else Candidate(config, origin="random")

    def _claim(self, config: Config) -> bool:
        """Mark ``config`` as proposed; False if it was proposed (or evaluated) before."""
        key = self.space.key(config)
        if key in self.seen:
            return False
        self._remember(key, config)
        return True

    def _remember(self, key: str, config: Config) -> None:
        self.seen.add(key)
        self.variation.proposed(config)

    # -- tell --------------------------------------------------------------------------------
    def tell(self, trial: Trial, result: Result) -> None:
        """The result joins the population; if that makes it too large, one member dies.
        Results replayed on resume (never asked here) join in the order they are told."""
        key = self.space.key(trial.config)
        self._remember(key, trial.config)
        loss = float(result.loss) if result.ok else math.inf
        self.members.append(Member(dict(trial.config), loss, key, self.told))
        self.told += 1
        if len(self.members) > self.population:
            self.members.pop(self._casualty())

    def _casualty(self) -> int:
        """The index of the member that dies: the oldest with aging, else the worst (among
        equally bad members, the oldest). Members are kept in arrival order."""
        if self.aging:
            return 0
        return max(range(len(self.members)), key=lambda i: (self.members[i].loss, -i))
