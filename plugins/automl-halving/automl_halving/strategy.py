"""Successive halving, Hyperband and ASHA as search strategies.

All three spend the budget range the run hands them (``context.fidelity``: the recipe's
``search.fidelity`` on a data task, the benchmark's on a table-lookup task) in rungs that grow
by ``eta``. New configurations come from :class:`~automl_halving.sampler.NewConfigurations`
(warm start, then random, or BOHB-style model-based when the recipe names a surrogate).

* :class:`SuccessiveHalving` (synchronous): a bracket evaluates its rung's configurations,
  keeps the best ``1/eta``, and evaluates those at ``eta`` times the budget. ``hyperband``
  cycles through Hyperband's brackets; ``successive_halving`` repeats the most aggressive one.
  When every open bracket is waiting for results, the next bracket starts, so parallel
  workers never idle (as BOHB's implementation does).
* :class:`AsynchronousHalving` (ASHA, Li et al. 2020): no bracket ever waits; an ask promotes
  a configuration that is in the best ``1/eta`` of the finished ones of its rung and not yet
  promoted, from the highest rung down, and otherwise starts a new one at the lowest budget.

A failed trial counts as infinitely bad and is never promoted. Every evaluation, at every
budget, is a trial of the run's history.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import attrs
import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.trial import Candidate, Config, Result, Trial
from automl_halving.sampler import NewConfigurations
from automl_halving.schedule import Rung, check_range, hyperband_brackets, rung_budgets
from automl_spaces.options import integer, number, optional, probability


@dataclass
class Slot:
    """One configuration of a bracket's current rung: asked or not, its loss once told."""

    config: Config
    origin: str
    asked: bool = False
    loss: float | None = None


@dataclass
class Bracket:
    """A run of successive halving over ``rungs``, from the smallest budget up."""

    rungs: list[Rung]
    level: int = 0
    slots: list[Slot] = field(default_factory=list)

    @property
    def rung(self) -> Rung:
        return self.rungs[self.level]

    def filling(self) -> bool:
        """Whether the first rung still takes new configurations."""
        return self.level == 0 and len(self.slots) < self.rung.size

    def complete(self) -> bool:
        return not self.filling() and all(slot.loss is not None for slot in self.slots)

    def finished(self) -> bool:
        return self.complete() and (self.level == len(self.rungs) - 1 or not self.slots)

    def promote(self) -> None:
        """Keep the best of the rung (never a failure) for the next, larger budget."""
        size = self.rungs[self.level + 1].size
        ranked = sorted(
            (slot for slot in self.slots if slot.loss is not None and np.isfinite(slot.loss)),
            key=lambda slot: slot.loss,  # type: ignore[arg-type,return-value]
        )
        self.slots = [Slot(slot.config, "promotion") for slot in ranked[:size]]
        self.level += 1

    def shrink(self) -> None:
        """Close the first rung at the configurations it has, every rung scaled alike."""
        scale = len(self.slots) / self.rungs[0].size
        self.rungs = [
            Rung(max(1, int(rung.size * scale)) if self.slots else 0, rung.budget)
            for rung in self.rungs
        ]
        self.rungs[0] = Rung(len(self.slots), self.rungs[0].budget)

    def unasked(self) -> Slot | None:
        return next((slot for slot in self.slots if not slot.asked), None)


@attrs.define(slots=False, eq=False)
class _Halving(SearchStrategy):
    """What the synchronous and the asynchronous variants share: parameters, the sampler,
    and the fidelity check."""

    races_budgets = True
    #: the warm start's configurations open the first brackets, at the lowest budget
    serves_warm_start = True

    eta: float = attrs.field(default=3, validator=number(above=1))
    random_fraction: float = attrs.field(default=1 / 3, validator=probability())
    min_points: int | None = attrs.field(default=None, validator=optional(integer(at_least=2)))
    n_candidates: int = attrs.field(default=256, validator=integer(at_least=1))

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        fidelity = context.fidelity
        if fidelity is None:
            raise ValueError(
                f"{type(self).__name__} needs a budget range, and this task has none: a "
                "table-lookup benchmark without learning curves cannot be searched by budget"
            )
        check_range(fidelity.min, fidelity.max, self.eta)
        self.min_budget, self.max_budget = fidelity.min, fidelity.max
        self.rng = np.random.default_rng(context.seed)
        self.new = NewConfigurations(
            context, self.rng, self.random_fraction, self.min_points, self.n_candidates
        )


class SuccessiveHalving(_Halving):
    """Synchronous successive halving (``hyperband=False``) or Hyperband; see the module
    docstring. Parameters: ``eta`` (3), and for model-based sampling ``random_fraction``
    (1/3, as BOHB), ``min_points`` (fit once a budget has that many results; default
    ``n/2 + 1`` of the encoded width, between 3 and 20), ``n_candidates`` (256 random
    configurations scored per model-based sample)."""

    hyperband = False

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        #: Hyperband's brackets, most aggressive first, for when the scheduled one cannot start
        self.fallbacks = hyperband_brackets(self.min_budget, self.max_budget, self.eta)
        #: Hyperband cycles through them; successive halving repeats the first
        self.schedule = self.fallbacks if self.hyperband else self.fallbacks[:1]
        self.started = 0
        self.open: list[Bracket] = []
        self.pending: dict[tuple[str, float], list[Slot]] = defaultdict(list)

    def ask(self) -> Candidate | None:
        self.open = [bracket for bracket in self.open if not bracket.finished()]
        for bracket in self.open:  # oldest first: finish brackets before starting new ones
            candidate = self._next_in(bracket)
            if candidate is not None:
                return candidate
        scheduled = self.schedule[self.started % len(self.schedule)]
        self.started += 1
        # A bracket that finds nothing to start at its smallest budget (a small pool, all of
        # it evaluated there) gives way to a less aggressive one that starts higher up. The
        # scheduled bracket is one of the fallbacks, so a failed one is tried once more: in
        # vain, but with a surrogate each try draws from the random stream, and leaving the
        # retry out would change seeded BOHB runs once a pool is used up (the hyperband:rf
        # results in docs/benchmarks.md were made with it).
        for rungs in [scheduled, *self.fallbacks]:
            bracket = Bracket(list(rungs))
            candidate = self._next_in(bracket)
            if candidate is not None:
                self.open.append(bracket)
                return candidate
        return None  # no configuration left to start at any budget

    def _next_in(self, bracket: Bracket) -> Candidate | None:
        """The bracket's next trial, or None while it waits for results."""
        if bracket.complete() and not bracket.finished():
            bracket.promote()
        slot = bracket.unasked()
        if slot is None and bracket.filling():
            fresh = self.new.next(bracket.rung.budget)
            if fresh is None:  # nothing left to start: the bracket goes on with what it has
                bracket.shrink()
                return self._next_in(bracket) if bracket.slots else None
            slot = Slot(fresh.config, fresh.origin)
            bracket.slots.append(slot)
        if slot is None:
            return None
        slot.asked = True
        budget = bracket.rung.budget
        key = self.context.space.key(slot.config)
        # Another bracket may have run (or be running) this configuration at this budget: a
        # revisit of a used-up pool, then this bracket's promotion. The run never runs a
        # configuration twice at one budget (the loop refuses it): the slot shares that
        # result instead of waiting for a trial that will not come.
        known = self.new.observations[budget].get(key)
        if known is not None:
            slot.loss = known[1]
            return self._next_in(bracket)
        if self.pending[(key, budget)]:
            self.pending[(key, budget)].append(slot)
            return self._next_in(bracket)
        self.new.asked(slot.config, budget)
        self.pending[(key, budget)].append(slot)
        return Candidate(slot.config, budget, slot.origin)

    def tell(self, trial: Trial, result: Result) -> None:
        budget = trial.budget if trial.budget is not None else self.max_budget
        loss = result.loss if result.ok else float("inf")
        self.new.observe(trial.config, budget, loss)
        waiting = self.pending.pop((self.context.space.key(trial.config), budget), [])
        for slot in waiting:  # none for a trial replayed on resume: it only informs the model
            slot.loss = loss


class Hyperband(SuccessiveHalving):
    __doc__ = SuccessiveHalving.__doc__
    hyperband = True


class AsynchronousHalving(_Halving):
    """ASHA; see the module docstring. Same parameters as :class:`SuccessiveHalving`."""

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.budgets = rung_budgets(self.min_budget, self.max_budget, self.eta)
        #: per rung: configuration key -> (configuration, loss) of its finished trials
        self.finished: list[dict[str, tuple[Config, float]]] = [{} for _ in self.budgets]
        self.promoted: list[set[str]] = [set() for _ in self.budgets]

    def ask(self) -> Candidate | None:
        for rung in range(len(self.budgets) - 2, -1, -1):
            config = self._promotable(rung)
            if config is not None:
                self.new.asked(config, self.budgets[rung + 1])
                return Candidate(config, self.budgets[rung + 1], "promotion")
        fresh = self.new.next(self.budgets[0])
        if fresh is not None:
            return Candidate(fresh.config, self.budgets[0], fresh.origin)
        return self._best_unpromoted()  # nothing new to start: push the best one further

    def _best_unpromoted(self) -> Candidate | None:
        """The best finished, unpromoted configuration of the highest rung that has one."""
        for rung in range(len(self.budgets) - 2, -1, -1):
            waiting = [
                (loss, key, config)
                for key, (config, loss) in self.finished[rung].items()
                if key not in self.promoted[rung] and np.isfinite(loss)
            ]
            if waiting:
                _, key, config = min(waiting, key=lambda item: (item[0], item[1]))
                self.promoted[rung].add(key)
                self.new.asked(config, self.budgets[rung + 1])
                return Candidate(config, self.budgets[rung + 1], "promotion")
        return None

    def _promotable(self, rung: int) -> Config | None:
        """A configuration in the best ``1/eta`` of the rung's finished ones, not yet
        promoted (and not a failure)."""
        done = sorted(self.finished[rung].items(), key=lambda item: item[1][1])
        for key, (config, loss) in done[: int(len(done) // self.eta)]:
            if key not in self.promoted[rung] and np.isfinite(loss):
                self.promoted[rung].add(key)
                return config
        return None

    def tell(self, trial: Trial, result: Result) -> None:
        budget = trial.budget if trial.budget is not None else self.max_budget
        loss = result.loss if result.ok else float("inf")
        self.new.observe(trial.config, budget, loss)
        rung = int(np.argmin([abs(budget - b) for b in self.budgets]))
        key = self.context.space.key(trial.config)
        self.finished[rung][key] = (trial.config, loss)
        if rung > 0:  # it reached this rung from the one below: a replayed trial says so too
            self.promoted[rung - 1].add(key)
