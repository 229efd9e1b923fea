"""The composition root: a recipe's names resolved into the components of one run.

:func:`prepare` builds, in the order of one run's data flow (docs/architecture.md), the
task (its data, space and evaluator), the warm start, the search strategy and the executor.
Nothing else in the core creates components from names, so this is where a reader looks to
see what a recipe turns into.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from automl_core.contracts import (
    Benchmark,
    Executor,
    Policy,
    SearchContext,
    SearchStrategy,
    Surrogate,
    WarmStart,
)
from automl_core.errors import AutoMLError, PluginError, RecipeError
from automl_core.plugins import Plugins
from automl_core.space import SearchSpace, by_kind, vector_space
from automl_engine.dataset import Dataset
from automl_engine.history import RunHistory
from automl_engine.proposals import Proposals, start
from automl_engine.recipe import ComponentRef, Recipe, check_names, component_refs
from automl_engine.tasks import Task, build_task
from automl_engine.validation import check_fidelity, not_ready, seeded_params
from automl_engine.wall_time import SetupClock, time_left

log = logging.getLogger(__name__)


@dataclass
class Setup:
    """Everything resolved from a recipe, ready to run."""

    recipe: Recipe
    task: Task
    strategy: SearchStrategy
    #: The strategy as run: the recipe's, or the one a policy switched to.
    strategy_ref: ComponentRef
    executor: Executor
    #: What the loop runs: the warm start's configurations, then the strategy's proposals.
    proposals: Proposals
    warm_start: WarmStart | None = None
    #: The threads a trial runs on: the executor's ``threads_per_trial``; None when it does
    #: not say (one is assumed for the pipelines it builds).
    threads_per_trial: int | None = None
    #: Seconds each stage of the set-up took.
    setup_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def space(self) -> SearchSpace:
        return self.task.space

    @property
    def metric_name(self) -> str:
        return self.task.description.metric


def prepare(
    recipe: Recipe,
    plugins: Plugins,
    benchmark: Benchmark | None = None,
    dataset: Dataset | None = None,
    policy: Policy | None = None,
    spent: float = 0.0,
    deadline: float | None = None,
) -> Setup:
    """Resolve every name of the recipe and build the components, in data-flow order.

    ``benchmark`` is the already built benchmark of a suite, so that its meta-data is loaded
    once for all the suite's runs. ``dataset`` is data held in memory, searched instead of
    loading ``task.dataset``, which must then be a ``memory:<name>`` reference.
    ``policy`` is the policy a resumed run was started with (``resampling: auto``), used
    instead of asking the selector again. ``spent`` is the seconds a resumed run already
    searched: the strategy is told the wall time left when it is set up
    (``SearchContext.time_budget``), as the loop counts it. ``deadline`` (a
    ``time.monotonic()`` value) is the end of the run's wall time: a set-up that reaches it
    stops, naming what took the time.
    """
    clock = SetupClock(deadline, recipe.budget.wall_time, spent)
    check_names(recipe, plugins)
    task = build_task(recipe, plugins, benchmark=benchmark, dataset=dataset, policy=policy)
    clock.lap("the task (data, meta-features, policy, the model format's import)")
    _refuse_surrogate_training(recipe, plugins, task)
    warm_start = _warm_start(recipe, plugins, task)
    clock.lap("the warm start")
    strategy_ref = policy_strategy(recipe, task.policy, plugins)
    check_fidelity(plugins, strategy_ref, task.fidelity)
    strategy = plugins.create("search_strategy", strategy_ref.name, strategy_ref.params)
    _check_space_kind(strategy, strategy_ref, task.space)
    context = SearchContext(
        space=task.space,
        seed=recipe.seed,
        surrogate_factory=_surrogate_factory(recipe, plugins),
        warm_start=warm_start,
        fidelity=task.fidelity,
        task=task.description,
        trial_budget=recipe.budget.trials,
        time_budget=time_left(recipe.budget.wall_time, spent, deadline),
    )
    proposals = start(strategy, context)
    clock.lap("the search strategy")
    executor = plugins.create("executor", recipe.executor.name, recipe.executor.params)
    _apply_limits(executor, recipe)
    threads = executor.threads_per_trial
    task.use_threads(threads or 1)
    return Setup(
        recipe,
        task,
        strategy,
        strategy_ref,
        executor,
        proposals,
        warm_start,
        threads,
        clock.laps,
    )


def _check_space_kind(strategy: SearchStrategy, ref: ComponentRef, space: SearchSpace) -> None:
    """A strategy is set up only on a kind of space it claims (``space_kinds``)."""
    kind = by_kind(space, lambda _: "pipeline", lambda _: "pool", lambda: None)
    if kind is not None and kind not in strategy.space_kinds:
        claimed = ", ".join(sorted(strategy.space_kinds))
        raise RecipeError(
            "search.name",
            ref.name,
            f"a strategy that searches {kind} spaces",
            f"{ref.name!r} searches {claimed} spaces only (its space_kinds).",
        )


def _refuse_surrogate_training(recipe: Recipe, plugins: Plugins, task: Task) -> None:
    """Under a wall time, the surrogate has nothing to train before the first trial. Validation
    asked from the recipe; the task now knows all its dataset's names, which decide what
    meta-training leaves out (and so whether its result is cached)."""
    space = vector_space(task.space)
    if recipe.budget.wall_time is None or recipe.search.surrogate is None or space is None:
        return
    factory = _surrogate_factory(recipe, plugins)
    assert factory is not None
    training = factory().training_before_search(space, task.description)
    if training is not None:
        name = recipe.search.surrogate.name
        raise not_ready("search.surrogate", name, recipe.budget.wall_time, training)


def _surrogate_factory(recipe: Recipe, plugins: Plugins) -> Callable[[], Surrogate] | None:
    """A factory of the recipe's surrogate, for strategies that fit one (None: no surrogate)."""
    surrogate = recipe.search.surrogate
    if not surrogate:
        return None

    def build() -> Surrogate:
        return plugins.create(
            "surrogate", surrogate.name, seeded_params(plugins, surrogate, recipe)
        )

    return build


def _apply_limits(executor: Executor, recipe: Recipe) -> None:
    """Hand the recipe's per-trial limits to the executor (validation made sure it enforces
    them, :func:`~automl_engine.validation.check_recipe`)."""
    budget = recipe.budget
    if budget.trial_time is not None or budget.trial_memory_mb is not None:
        executor.set_limits(budget.trial_time, budget.trial_memory_mb)


def policy_strategy(recipe: Recipe, policy: Policy | None, plugins: Plugins) -> ComponentRef:
    """The strategy the run uses: the recipe's, or the policy's racing strategy (with the
    recipe's surrogate, BOHB-style, as Auto-sklearn 2.0 combines successive halving with
    its model) when the policy races candidates and the recipe's strategy does not race
    budgets itself."""
    strategy = recipe.search.strategy
    factory = plugins.get("search_strategy", strategy.name).obj
    if policy is None or not policy.halving or getattr(factory, "races_budgets", False):
        return strategy
    if not policy.racing_strategy:
        raise PluginError(
            f"policy {policy.name!r} races candidates (halving) but names no racing_strategy: "
            f"its selector must name the search strategy that races them"
        )
    return ComponentRef(policy.racing_strategy)


def _warm_start(recipe: Recipe, plugins: Plugins, task: Task) -> WarmStart | None:
    if recipe.warmstart is None:
        return None
    starter = plugins.create(
        "warmstarter", recipe.warmstart.starter.name, recipe.warmstart.starter.params
    )
    try:
        if recipe.budget.wall_time is not None:
            training = starter.training_before_search(task.description, task.space)
            if training is not None:
                name = recipe.warmstart.starter.name
                raise not_ready("warmstart", name, recipe.budget.wall_time, training)
        return starter.suggest(task.description, task.space, recipe.warmstart.configs)
    except AutoMLError as error:
        if not recipe.warmstart.optional:
            raise
        # An optional warm start that cannot serve leaves the search cold; the history keeps
        # the reason (``info.skipped``), so a cold run is never mistaken for a warm one.
        log.warning("warm start %r skipped: %s", recipe.warmstart.starter.name, error)
        return WarmStart(info={"skipped": f"{type(error).__name__}: {error}"})


def warm_start_record(recipe: Recipe, warm_start: WarmStart) -> dict[str, Any]:
    """What the history keeps of the warm start: the starter, how many configurations it
    suggested, and its own account of where they came from (``WarmStart.info``), made
    JSON-safe."""
    assert recipe.warmstart is not None
    return {
        "starter": recipe.warmstart.starter.name,
        "configs": len(warm_start.configs),
        "info": json.loads(json.dumps(warm_start.info, default=str)),
    }


def plugin_versions(recipe: Recipe, plugins: Plugins) -> dict[str, dict[str, str]]:
    """For each component the recipe uses: its distribution and version."""
    versions = {}
    for path, kind, ref in component_refs(recipe):
        origin = plugins.get(kind, ref.name).origin
        versions[path] = {
            "name": ref.name,
            "distribution": origin.distribution,
            "version": origin.version,
        }
    return versions


def record_setup(history: RunHistory, setup: Setup, plugins: Plugins) -> None:
    """Keep in a new run's history what its trials mean: the recipe, the plugins and
    versions that ran them, the task, the warm start and the policy."""
    from automl_core import __version__

    history.set_meta("recipe", setup.recipe.raw)
    history.set_meta("plugins", plugin_versions(setup.recipe, plugins))
    history.set_meta("versions", {"automl-core": __version__, "python": platform.python_version()})
    setup.task.record(history)
    history.set_meta("metric", setup.metric_name)
    history.set_meta("metafeatures", dict(setup.task.description.metafeatures))
    if setup.warm_start is not None:
        history.set_meta("warmstart", warm_start_record(setup.recipe, setup.warm_start))
    policy = setup.task.policy
    if policy is not None:
        history.set_meta("policy", {**asdict(policy), "strategy": setup.strategy_ref.name})
    history.set_meta("setup_seconds", setup.setup_seconds)
    history.set_meta("started_at", time.time())
