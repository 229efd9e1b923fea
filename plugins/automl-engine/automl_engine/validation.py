"""Checking that a recipe will run, before it runs: ``automl validate`` and the start of a run.

:func:`~automl_engine.recipe.parse_recipe` checks a recipe's shape, and
:func:`~automl_engine.recipe.check_names` its names and parameter names. :func:`check_recipe`
goes the rest of the way without loading the data:

- each parameter's value is checked against the type its factory declares (``max_retries:
  abc`` is refused here, not as a ``TypeError`` deep in a run);
- each named component is built with its parameters, so a factory's own checks (``c_ucb >=
  0``, ``workers >= 1``) run now;
- the dataset reference is checked by its source (a missing file, an unknown name);
- the components are checked to fit together: a strategy and its surrogate, a strategy and
  the kind of space, a metric and the task.

:func:`check_benchmark` adds what needs a table-lookup benchmark built (its datasets, its
budget range for strategies that race budgets); a run does that when it builds its task.
Every error is a :class:`~automl_core.errors.RecipeError` with the key path, the value and
what was expected.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from automl_core.contracts import Fidelity, Surrogate, TaskDescription
from automl_core.errors import AutoMLError, RecipeError
from automl_core.lazy import LazyFactory
from automl_core.plugins import Plugins
from automl_core.space import VectorSpace, pipeline_space
from automl_engine.metastore import MetaDataNotLocal, local_metadata_resolver
from automl_engine.metrics import get_metric
from automl_engine.recipe import (
    ComponentRef,
    Recipe,
    check_names,
    component_refs,
    number_text_hint,
)
from automl_engine.sources import check_reference, known_task
from automl_engine.tasks import LookupTask, refuse_what_needs_data, suite_datasets

#: The values of ``SearchStrategy.surrogate_use``.
SURROGATE_USES = ("required", "optional", "unused")


def check_recipe(recipe: Recipe, plugins: Plugins) -> list[str]:
    """Raise a :class:`RecipeError` for the first thing in ``recipe`` that would make the run
    fail; return warnings for what would run, but not as the recipe seems to mean."""
    check_names(recipe, plugins)
    if recipe.task.benchmark is not None and recipe.task.dataset is not None:
        refuse_what_needs_data(recipe)
    for path, kind, ref in component_refs(recipe):
        check_parameter_types(params_path(path), plugins, kind, ref)
    if recipe.task.benchmark is None and recipe.task.dataset is not None:
        problem = check_reference(plugins, recipe.task.dataset)
        if problem is not None:
            raise RecipeError("task.dataset", recipe.task.dataset, "a dataset that exists", problem)
    warnings, surrogate = _check_search(recipe, plugins)
    for path, kind, ref in component_refs(recipe):
        if kind not in ("space", "benchmark", "search_strategy", "surrogate"):
            build(plugins, path, kind, ref)
    if recipe.space is not None:
        space = _check_space(recipe, plugins)
        if surrogate is not None:
            _check_surrogate_fits(recipe, plugins, surrogate, space)
        if recipe.warmstart is not None and recipe.budget.wall_time is not None:
            _check_warm_start_ready(recipe, plugins, space)
    return warnings + _check_limits(recipe, plugins)


def _check_limits(recipe: Recipe, plugins: Plugins) -> list[str]:
    """Per-trial limits need an executor that enforces them; a wall time on data, one that
    can stop a trial (else a warning: the last trial may outlast it)."""
    budget, executor = recipe.budget, recipe.executor
    enforces = getattr(factory(plugins, "executor", executor), "enforces_limits", False)
    if enforces:
        return []
    limits = [
        f"budget.{key}"
        for key in ("trial_time", "trial_memory_mb")
        if getattr(budget, key) is not None
    ]
    if limits:
        raise RecipeError(
            "executor",
            executor.name,
            f"an executor that enforces {' and '.join(limits)} (e.g. processes)",
            f"{executor.name!r} runs trials where they cannot be stopped (enforces_limits)",
        )
    if budget.wall_time is not None and recipe.task.benchmark is None:
        return [
            f"executor: {executor.name!r} cannot stop a trial, so one still running at the "
            f"end of budget.wall_time ({budget.wall_time:g}s) runs on; use executor: processes"
        ]
    return []


def check_benchmark(recipe: Recipe, plugins: Plugins) -> None:
    """What a benchmark task adds to :func:`check_recipe`, with the benchmark built (its
    meta-data loaded): the dataset is one of its datasets (a suite, one of its splits with
    datasets), and a strategy that races budgets has a budget range to race on (on a
    suite, checked on its first dataset)."""
    assert recipe.task.benchmark is not None
    benchmark = build(plugins, "task.benchmark", "benchmark", recipe.task.benchmark)
    if recipe.task.suite is not None:
        first = suite_datasets(recipe, benchmark)[0]
        recipe = replace(recipe, task=replace(recipe.task, dataset=first, suite=None))
    task = LookupTask.build(recipe, plugins, benchmark)
    check_fidelity(plugins, recipe.search.strategy, task.fidelity)


def check_fidelity(plugins: Plugins, strategy: ComponentRef, fidelity: Fidelity | None) -> None:
    """A strategy that races candidates over budgets needs a task with a budget range."""
    if fidelity is None and getattr(
        factory(plugins, "search_strategy", strategy), "races_budgets", False
    ):
        raise RecipeError(
            "search.name",
            strategy.name,
            "a strategy that does not race budgets (this task has no budget range)",
            f"{strategy.name!r} races candidates over budgets (races_budgets), and the "
            "benchmark stores no learning curves to give it budgets; choose e.g. smbo or mcts",
        )


def params_path(path: str) -> str:
    """Where the parameters of the component at ``path`` are written in a recipe."""
    return f"{path}.params"


def build(plugins: Plugins, path: str, kind: str, ref: ComponentRef, **extra: Any) -> Any:
    """The component built from its parameters (and ``extra``); a factory that refuses them
    is a recipe error at ``path``'s parameters."""
    try:
        return plugins.create(kind, ref.name, {**ref.params, **extra})
    except AutoMLError as error:
        raise RecipeError(
            params_path(path), ref.params, f"parameters {ref.name!r} accepts", str(error)
        ) from None
    except Exception as error:  # a plugin's own bug, said where it happened
        raise RecipeError(
            params_path(path),
            ref.params,
            f"parameters {ref.name!r} accepts",
            f"building it raised {type(error).__name__}: {error}",
        ) from None


def factory(plugins: Plugins, kind: str, ref: ComponentRef) -> Any:
    """The registered factory itself (imported, when it was registered lazily)."""
    obj = plugins.get(kind, ref.name).obj
    return obj.load() if isinstance(obj, LazyFactory) else obj


def _check_search(recipe: Recipe, plugins: Plugins) -> tuple[list[str], Surrogate | None]:
    """The strategy is built; it gets a surrogate when it needs one, and searches the
    recipe's kind of space. Returns a warning for a surrogate it would ignore, and the
    surrogate built (None: the recipe names none), for the check of its space."""
    ref, surrogate = recipe.search.strategy, recipe.search.surrogate
    strategy = build(plugins, "search", "search_strategy", ref)
    use = getattr(strategy, "surrogate_use", "optional")
    if surrogate is None and use == "required":
        raise RecipeError(
            "search.surrogate",
            None,
            f"a surrogate: {ref.name!r} fits one to choose what to try",
            f"e.g. search: {{name: {ref.name}, surrogate: rf}}; registered surrogates: "
            + ", ".join(plugins.registry.names("surrogate")),
        )
    kind = "pool" if recipe.task.benchmark is not None else "pipeline"
    kinds = getattr(strategy, "space_kinds", {kind})
    if kind not in kinds:
        raise RecipeError(
            "search.name",
            ref.name,
            f"a strategy that searches {kind} spaces",
            f"{ref.name!r} searches {', '.join(sorted(kinds))} spaces only (its space_kinds)",
        )
    if surrogate is None:
        return [], None
    # with the seed the run gives it, so that the run uses this one (BuildOnce)
    seed = seeded_params(plugins, surrogate, recipe).get("seed")
    built = build(
        plugins,
        "search.surrogate",
        "surrogate",
        surrogate,
        **({} if seed is None else {"seed": seed}),
    )
    if use == "unused":
        ignored = f"{surrogate.name!r} is ignored: {ref.name!r} does not use a surrogate"
        return [f"search.surrogate: {ignored}"], built
    return [], built


def seeded_params(plugins: Plugins, ref: ComponentRef, recipe: Recipe) -> dict[str, Any]:
    """The component's params, plus the recipe's seed when it takes a ``seed`` and the recipe
    does not set one: a run is then reproducible from its recipe's seed alone."""
    # named only: a factory taking **kwargs may pass them on to something without a seed
    if "seed" in plugins.get("surrogate", ref.name).parameters() and "seed" not in ref.params:
        return {**ref.params, "seed": recipe.seed}
    return dict(ref.params)


def _check_surrogate_fits(
    recipe: Recipe, plugins: Plugins, surrogate: Surrogate, space: VectorSpace
) -> None:
    """The surrogate the check built, as the recipe configures it, can model the space (its
    meta-data or weights are of this space: ``Surrogate.check_space``)."""
    ref = recipe.search.surrogate
    assert ref is not None
    task = _described(recipe, plugins, space)
    try:
        surrogate.check_space(space, task)
        training = surrogate.training_before_search(space, task)
    except MetaDataNotLocal:
        return  # not converted here yet: the run converts it, then checks the same
    except (ValueError, AutoMLError) as error:
        expected = "a surrogate that can model the recipe's space"
        raise RecipeError("search.surrogate", ref.name, expected, str(error)) from None
    if training is not None and recipe.budget.wall_time is not None:
        raise not_ready("search.surrogate", ref.name, recipe.budget.wall_time, training)


def _check_warm_start_ready(recipe: Recipe, plugins: Plugins, space: VectorSpace) -> None:
    """Under a wall time, the warm-starter has nothing to train before the first trial
    (``WarmStarter.training_before_search``); an optional warm start is left to the run,
    which then starts cold."""
    assert recipe.warmstart is not None and recipe.budget.wall_time is not None
    if recipe.warmstart.optional:
        return
    ref = recipe.warmstart.starter
    starter = build(plugins, "warmstart", "warmstarter", ref)
    try:
        training = starter.training_before_search(_described(recipe, plugins, space), space)
    except MetaDataNotLocal:
        return  # not converted here yet: the run converts it, then checks the same
    except (ValueError, AutoMLError):
        return  # what suggest would refuse, the run says with its own message
    if training is not None:
        raise not_ready("warmstart", ref.name, recipe.budget.wall_time, training)


#: How ``not_ready`` names each kind of component, by its recipe path.
_READY = {"search.surrogate": "a surrogate", "warmstart": "a warm start"}


def not_ready(path: str, name: str, wall_time: float, training: str) -> RecipeError:
    """The error for a component that would train before the run's first trial (its
    ``training_before_search`` says what) under a wall time, which cannot bound that."""
    return RecipeError(
        path,
        name,
        f"{_READY.get(path, 'a component')} ready before the first trial (budget.wall_time: "
        f"{wall_time:g}s binds the run)",
        training,
    )


def _described(recipe: Recipe, plugins: Plugins, space: VectorSpace) -> TaskDescription:
    """The task as far as a recipe says, before its data is loaded: for the checks of
    components that read meta-data (which datasets they leave out)."""
    return TaskDescription(
        dataset=str(recipe.task.dataset or ""),
        task=str(getattr(space, "task", "")),
        n_rows=0,
        n_features=0,
        metric=str(recipe.task.metric or ""),
        resolve_metadata=local_metadata_resolver(plugins),
    )


def _check_space(recipe: Recipe, plugins: Plugins) -> VectorSpace:
    """The space is built, and the metric is one of its task's (``r2`` is not a
    classification metric); the space, for the checks that follow."""
    assert recipe.space is not None
    metric = recipe.task.metric
    takes_metric = "metric" in plugins.get("space", recipe.space.name).parameters()
    extra = (
        {"metric": metric}
        if metric and takes_metric and "metric" not in recipe.space.params
        else {}
    )
    space = pipeline_space(build(plugins, "space", "space", recipe.space, **extra))
    if space is None:
        raise RecipeError("space", recipe.space.name, "a pipeline space for a dataset task")
    task = recipe.task.type or space.task
    if recipe.task.type is not None and recipe.task.type != space.task:
        raise RecipeError(
            "space",
            recipe.space.name,
            f"a {recipe.task.type} space (task.type)",
            f"{recipe.space.name!r} is a {space.task} space",
        )
    dataset_task = None if recipe.task.dataset is None else known_task(plugins, recipe.task.dataset)
    if recipe.task.type is None and dataset_task not in (None, space.task):
        raise RecipeError(
            "space",
            recipe.space.name,
            f"a {dataset_task} space: {recipe.task.dataset} is a {dataset_task} dataset",
            f"{recipe.space.name!r} is a {space.task} space",
        )
    if metric is not None:
        try:
            get_metric(metric, task)
        except AutoMLError as error:
            raise RecipeError("task.metric", metric, f"a {task} metric", str(error)) from None
    return space


def check_parameter_types(path: str, plugins: Plugins, kind: str, ref: ComponentRef) -> None:
    """Each parameter's value has the type its factory's signature declares. Annotations
    this check cannot read (a class of the plugin's own, a forward reference) are left to
    the factory."""
    hints = _type_hints(factory(plugins, kind, ref))
    for name, value in ref.params.items():
        expected = hints.get(name)
        if expected is not None and not _matches(value, expected):
            raise RecipeError(
                f"{path}.{name}",
                value,
                _describe(expected),
                number_text_hint(value, integer=not _matches(1.5, expected)),
            )


def _type_hints(function: Any) -> dict[str, Any]:
    target = function.__init__ if inspect.isclass(function) else function
    try:
        return typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: the factory checks its own values
        return {}


def _matches(value: Any, expected: Any) -> bool:
    """Whether ``value`` (as YAML reads it) fits the annotation ``expected``; True for the
    annotations this check does not read."""
    origin, args = typing.get_origin(expected), typing.get_args(expected)
    if expected is Any:
        return True
    if expected is None or expected is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, option) for option in args)
    if origin is typing.Literal:
        return value in args
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is str:
        return isinstance(value, str)
    container = origin or expected
    if not isinstance(container, type):
        return True
    if issubclass(container, Mapping):
        return isinstance(value, Mapping)
    if issubclass(container, Sequence) and not issubclass(container, str):
        if not isinstance(value, (list, tuple)):
            return False
        one_type = len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis)
        return not one_type or all(_matches(item, args[0]) for item in value)
    return True


def _describe(expected: Any) -> str:
    """An annotation as a reader of the recipe would say it."""
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    if expected in names:
        return names[expected]
    if expected is None or expected is type(None):
        return "null"
    if typing.get_origin(expected) in (typing.Union, types.UnionType):
        return " or ".join(_describe(option) for option in typing.get_args(expected))
    if typing.get_origin(expected) is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(expected)))
    text = str(expected).replace("typing.", "").replace("collections.abc.", "")
    return f"a value of type {text}"
