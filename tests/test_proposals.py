"""The run loop owns two rules strategies used to repeat (automl_engine.proposals): it runs the
warm start's configurations before the strategy's first ask and tells the strategy their
results, and it never runs a configuration twice at the same budget, whatever the strategy
proposes."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from toy_plugin import DoublesPlugin, ToyPlugin, fixed_warm_start, toy_recipe

from automl_core import hookimpl
from automl_core.contracts import SearchContext, SearchStrategy, WarmStart
from automl_core.plugins import load_plugins
from automl_core.trial import Candidate, Result, Status, Trial
from automl_engine.history import RunHistory
from automl_engine.proposals import MAX_REFUSED_IN_A_ROW, Proposals, start
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run


class Recording(SearchStrategy):
    """Random configurations; records every trial it is told and whether it proposed it."""

    last: ClassVar[Recording | None] = None
    surrogate_use = "unused"

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)
        self.told: list[Trial] = []
        Recording.last = self

    def ask(self) -> Candidate:
        return Candidate(self.context.space.sample(self.rng, 1)[0], origin="recording")

    def tell(self, trial: Trial, result: Result) -> None:
        self.told.append(trial)


class Repeating(SearchStrategy):
    """Proposes two configurations, then the first again and again: a strategy that forgets
    what it asked."""

    surrogate_use = "unused"

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.configs = context.space.sample(np.random.default_rng(0), 2)
        self.asked = 0

    def ask(self) -> Candidate:
        self.asked += 1
        return Candidate(self.configs[min(self.asked - 1, 1) if self.asked <= 2 else 0])

    def tell(self, trial: Trial, result: Result) -> None:
        pass


class SelfServing(Recording):
    """Says it places the warm start itself (as successive halving does)."""

    serves_warm_start = True


class StrategiesPlugin:
    @hookimpl
    def register_search_strategies(self, register: Any) -> None:
        register("recording", Recording)
        register("repeating", Repeating)
        register("self-serving", SelfServing)


@pytest.fixture
def plugins():
    return load_plugins(
        extra=[ToyPlugin(), DoublesPlugin(), StrategiesPlugin()], entry_points=False
    )


def trials_of(run_dir) -> list[Trial]:
    with RunHistory(run_dir / HISTORY_FILE) as history:
        return [stored.trial for stored in history.trials()]


def test_the_loop_runs_the_warm_start_first_and_tells_the_strategy(plugins, tmp_path):
    recipe = toy_recipe(search={"strategy": "recording"}, warmstart="fixed")
    run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    trials = trials_of(tmp_path / "run")
    warm = fixed_warm_start()
    assert [t.origin for t in trials[:3]] == ["warmstart"] * 3
    assert [t.config for t in trials[:3]] == warm
    assert {t.origin for t in trials[3:]} == {"recording"}
    strategy = Recording.last
    assert strategy is not None and strategy.context.served_first == 3
    assert [t.id for t in strategy.told] == [t.id for t in trials]  # the warm start's too


def test_a_strategy_that_serves_the_warm_start_itself_gets_nothing_served(plugins, tmp_path):
    recipe = toy_recipe(search={"strategy": "self-serving"}, warmstart="fixed")
    run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    assert {t.origin for t in trials_of(tmp_path / "run")} == {"recording"}
    strategy = Recording.last
    assert strategy is not None and strategy.context.served_first == 0
    assert len(strategy.context.warm_start_configs()) == 3  # still there, for it to place


def test_repeats_are_refused_and_a_strategy_of_only_repeats_ends_the_search(plugins, tmp_path):
    recipe = toy_recipe(search={"strategy": "repeating"}, budget={"trials": 6})
    summary = run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    trials = trials_of(tmp_path / "run")
    assert len(trials) == 2  # never the first configuration twice
    assert "already tried" in summary.stopped_because


def test_a_refused_proposal_is_asked_again_and_counted(plugins):
    space = plugins.create("space", "toy-classification")
    strategy = Repeating()
    proposals = start(strategy, SearchContext(space=space, seed=0))
    first, second = proposals.ask(), proposals.ask()
    assert first is not None and second is not None
    assert space.key(first.config) != space.key(second.config)
    assert proposals.ask() is None
    assert proposals.refused == MAX_REFUSED_IN_A_ROW
    assert strategy.asked == 2 + MAX_REFUSED_IN_A_ROW


def test_the_same_configuration_at_another_budget_is_not_a_repeat(plugins):
    space = plugins.create("space", "toy-classification")
    config = space.sample(np.random.default_rng(1), 1)[0]

    class Rising(Repeating):
        def ask(self) -> Candidate:
            self.asked += 1
            return Candidate(config, budget=[1 / 9, 1 / 3, 1.0][min(self.asked, 3) - 1])

    proposals = Proposals(Rising(), space)
    proposals.strategy.setup(SearchContext(space=space, seed=0))
    budgets = [c.budget for c in iter(proposals.ask, None)]
    assert budgets == [1 / 9, 1 / 3, 1.0]


def test_served_configurations_already_run_are_skipped_on_resume(plugins):
    space = plugins.create("space", "toy-classification")
    warm = fixed_warm_start()
    strategy = Recording()
    proposals = start(strategy, SearchContext(space=space, seed=0, warm_start=WarmStart(warm)))
    proposals.mark_tried(Trial(0, warm[0]))  # ran before the interruption
    served = [proposals.ask() for _ in range(2)]
    assert [c.config for c in served if c is not None] == warm[1:]
    strategy.tell(Trial(0, warm[0]), Result(Status.OK, 0.1))
    assert proposals.ask().origin == "recording"  # type: ignore[union-attr]
