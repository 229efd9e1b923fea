"""What the run tells a strategy at set-up about the run's length: the trial budget and the
seconds of search left (less what a resumed run already spent, and less the set-up so far)."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
import pytest
from toy_plugin import DoublesPlugin, ToyPlugin, toy_recipe

from automl_core import hookimpl
from automl_core.contracts import (
    SearchContext,
    SearchStrategy,
    Surrogate,
    WarmStart,
    WarmStarter,
)
from automl_core.errors import AutoMLError, RecipeError
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import vector_space
from automl_core.trial import Candidate, Result, Trial
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import ELAPSED, HISTORY_FILE
from automl_engine.runner import run
from automl_spaces.acquisition import prepared_surrogate


class RecordingStrategy(SearchStrategy):
    """Random search that keeps the context of each set-up."""

    contexts: ClassVar[list[SearchContext]] = []

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        RecordingStrategy.contexts.append(context)
        self.rng = np.random.default_rng(context.seed)

    def ask(self) -> Candidate:
        return Candidate(self.context.space.sample(self.rng, 1)[0], origin="random")

    def tell(self, trial: Trial, result: Result) -> None:
        pass


class RecordingPlugin:
    @hookimpl
    def register_search_strategies(self, register: Any) -> None:
        register("recording", RecordingStrategy)


@pytest.fixture
def recording() -> Plugins:
    RecordingStrategy.contexts.clear()
    return load_plugins(extra=[ToyPlugin(), DoublesPlugin(), RecordingPlugin()], entry_points=False)


def _recipe(**budget: float) -> Any:
    return parse_recipe(toy_recipe(search={"strategy": "recording"}, budget=budget))


def test_the_strategy_is_told_both_budgets(recording, tmp_path):
    run(_recipe(trials=2, wall_time=30), tmp_path / "run", plugins=recording)
    (context,) = RecordingStrategy.contexts
    assert context.trial_budget == 2
    assert 0.0 < context.time_budget <= 30.0  # less the set-up's seconds


def test_the_time_budget_leaves_out_the_set_up_so_far(recording, tmp_path):
    """A run that began 12 s before its strategy was set up (a command's start, a slow
    meta-data fetch) has at most 18 s of a 30 s wall time left to search."""
    began = time.monotonic() - 12.0
    run(_recipe(trials=2, wall_time=30), tmp_path / "run", plugins=recording, started=began)
    assert 0.0 < RecordingStrategy.contexts[0].time_budget <= 18.0


def test_without_a_wall_time_there_is_no_time_budget(recording, tmp_path):
    run(_recipe(trials=2), tmp_path / "run", plugins=recording)
    assert RecordingStrategy.contexts[0].time_budget is None


def test_a_resumed_run_tells_the_time_left(recording, tmp_path):
    run(_recipe(trials=2, wall_time=50), tmp_path / "run", plugins=recording)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        history.set_meta(ELAPSED, 10.0)  # as if the run had searched for 10 s
    run(_recipe(trials=3, wall_time=50), tmp_path / "run", plugins=recording, resume=True)
    assert 20.0 < RecordingStrategy.contexts[-1].time_budget <= 40.0
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        history.set_meta(ELAPSED, 100.0)  # more than the wall time: nothing is left
    run(_recipe(trials=4, wall_time=50), tmp_path / "run", plugins=recording, resume=True)
    assert RecordingStrategy.contexts[-1].time_budget == 0.0


def test_a_prepared_surrogate_is_told_the_space_and_handed_the_warm_starts_state(caplog):
    """Columns, then space and task, then the warm start's pre-trained state; a surrogate
    that takes no state is left untrained, with a warning that says so."""
    from automl_core.contracts import Surrogate, WarmStart
    from automl_engine.testing.spaces import pool_space
    from automl_spaces.acquisition import prepared_surrogate

    calls = []

    class Taking(Surrogate):
        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.zeros(len(X)), np.ones(len(X))

        def prepare(self, columns):
            calls.append("prepare")

        def prepare_space(self, space, task=None):
            calls.append("prepare_space")

        def warm_start(self, state):
            calls.append(("warm_start", state))

    class Ignoring(Taking):
        warm_start = Surrogate.warm_start

    space = pool_space()
    context = SearchContext(space=space, seed=0, warm_start=WarmStart(surrogate_state="ptem"))
    prepared_surrogate(Taking, space, context)
    assert calls == ["prepare", "prepare_space", ("warm_start", "ptem")]
    with caplog.at_level("WARNING"):
        prepared_surrogate(Ignoring, space, context)
    assert "takes none: it starts untrained" in caplog.text
    calls.clear()
    prepared_surrogate(Taking, space, SearchContext(space=space, seed=0))
    assert calls == ["prepare", "prepare_space"]


class TrainsFirstSurrogate(Surrogate):
    """Would meta-train first when the task is known by its source's own name (what a run
    learns when it loads the data; validation sees only the recipe's reference), as
    DeepPipe's cache key depends on the datasets it leaves out."""

    prepared: ClassVar[int] = 0

    def fit(self, X: Any, y: Any) -> TrainsFirstSurrogate:
        return self

    def predict(self, X: Any) -> Any:
        return np.zeros(len(X)), np.ones(len(X))

    def training_before_search(self, space: Any, task: Any = None) -> str | None:
        if task is not None and "breast_cancer" in task.aliases:
            return "it would meta-train for minutes (`train it` first)"
        return None

    def prepare_space(self, space: Any, task: Any = None) -> None:
        TrainsFirstSurrogate.prepared += 1


class PreparesSurrogate(RecordingStrategy):
    """Random search that sets a surrogate up as model-based strategies do."""

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        space = vector_space(context.space)
        assert space is not None
        prepared_surrogate(context.new_surrogate, space, context)


class TrainsFirstSurrogatePlugin:
    @hookimpl
    def register_surrogates(self, register: Any) -> None:
        register("trains-first", TrainsFirstSurrogate)

    @hookimpl
    def register_search_strategies(self, register: Any) -> None:
        register("prepares-surrogate", PreparesSurrogate)


def test_a_surrogate_that_would_train_first_is_refused_under_a_wall_time(tmp_path):
    """The run's own check behind validate's: with the data loaded, a surrogate that says it
    would train before the first trial is refused before the strategy is set up; without a
    wall time it trains."""
    plugins = load_plugins(
        extra=[ToyPlugin(), DoublesPlugin(), TrainsFirstSurrogatePlugin()], entry_points=False
    )
    TrainsFirstSurrogate.prepared = 0

    def recipe(**budget: float) -> Any:
        search = {"strategy": "prepares-surrogate", "surrogate": "trains-first"}
        return parse_recipe(toy_recipe(search=search, budget=budget))

    with pytest.raises(AutoMLError, match="it would meta-train for minutes"):
        run(recipe(trials=4, wall_time=30), tmp_path / "timed", plugins=plugins)
    assert TrainsFirstSurrogate.prepared == 0
    run(recipe(trials=4), tmp_path / "untimed", plugins=plugins)
    assert TrainsFirstSurrogate.prepared > 0


class TrainsFirstStarter(WarmStarter):
    """A warm-starter that would train for minutes before suggesting (as ptem's ranker does
    for labels it has not measured)."""

    suggested: ClassVar[int] = 0

    def training_before_search(self, task: Any, space: Any) -> str | None:
        return "it would label 42 pairs by BO runs first"

    def suggest(self, task: Any, space: Any, n: int | None) -> WarmStart:
        TrainsFirstStarter.suggested += 1
        return WarmStart(configs=space.sample(np.random.default_rng(0), 1))


class TrainsFirstPlugin:
    @hookimpl
    def register_warmstarters(self, register: Any) -> None:
        register("trains-first", TrainsFirstStarter)


def test_a_warm_starter_that_would_train_first_is_refused_under_a_wall_time(tmp_path):
    """Refused before any trial (validate's check, which the run repeats); an optional warm
    start is skipped instead, the run cold; without a wall time it trains and serves."""
    plugins = load_plugins(extra=[ToyPlugin(), TrainsFirstPlugin()], entry_points=False)
    TrainsFirstStarter.suggested = 0

    def recipe(optional: bool = False, **budget: float) -> Any:
        warmstart = {"name": "trains-first", "optional": optional}
        return parse_recipe(toy_recipe(warmstart=warmstart, budget=budget))

    with pytest.raises(RecipeError, match="it would label 42 pairs by BO runs first"):
        run(recipe(trials=2, wall_time=30), tmp_path / "timed", plugins=plugins)
    assert not (tmp_path / "timed").exists() and TrainsFirstStarter.suggested == 0
    run(recipe(True, trials=2, wall_time=30), tmp_path / "optional", plugins=plugins)
    with RunHistory(tmp_path / "optional" / HISTORY_FILE, read_only=True) as history:
        skipped = history.get_meta("warmstart")["info"]["skipped"]
    assert "it would label 42 pairs" in skipped and TrainsFirstStarter.suggested == 0
    run(recipe(trials=2), tmp_path / "untimed", plugins=plugins)
    assert TrainsFirstStarter.suggested == 1
