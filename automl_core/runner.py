"""The run loop: recipe -> components -> dataset -> ask -> execute -> store -> tell -> model.

:func:`run` is the whole life of one search, in the order of DESIGN.md's data flow. It keeps
``executor.capacity`` trials in flight, stops at the first budget reached (trials or wall
time), refits the best configuration (or the recipe's ensemble) on all training data, scores
it on the held-out test rows if the recipe asks, and saves it with the recipe in the run
folder. A failure of the strategy ends the search early, but everything already evaluated is
kept and the model of the best trial so far is still saved before the error is raised.
"""

from __future__ import annotations

import difflib
import json
import platform
import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import yaml
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from automl_core.contracts import (
    Benchmark,
    Ensembler,
    Evaluator,
    Executor,
    Fidelity,
    Policy,
    SearchContext,
    SearchStrategy,
    TaskDescription,
    WarmStart,
)
from automl_core.dataset import Dataset, check_dataset
from automl_core.errors import AutoMLError, DatasetError, PluginError, RecipeError
from automl_core.evaluator import PipelineEvaluator, Resampling, score_all
from automl_core.final_model import EnsemblerError, FinalChoice, Scored, choose_final_model
from automl_core.history import RunHistory, StoredTrial, rank_key
from automl_core.metastore import metadata_resolver
from automl_core.metrics import DEFAULT_METRIC, Metric, get_metric, normalised_regret
from automl_core.model import TrainedModel
from automl_core.observers import Observers
from automl_core.pipeline_space import PipelineSpace
from automl_core.plugins import Plugins, load_plugins
from automl_core.recipe import (
    MEMORY_SOURCE,
    ComponentRef,
    Recipe,
    check_names,
    component_refs,
    data_fidelity,
    parse_resampling,
)
from automl_core.sources import load_dataset, parse_reference
from automl_core.space import BuildContext, SearchSpace, pipeline_space
from automl_core.trial import Result, Status, Trial

HISTORY_FILE = "history.sqlite"
#: The strategy a policy of successive halving switches to, unless the recipe's strategy
#: races budgets itself (``SearchStrategy.races_budgets``); plugin automl-halving's.
HALVING_STRATEGY = "successive_halving"
MODEL_FILE = "model.joblib"
RECIPE_FILE = "recipe.yaml"
SUMMARY_FILE = "summary.json"
#: History meta key: seconds the run has searched so far (a resumed run starts from there).
ELAPSED = "elapsed"
#: Recipe sections that must not change when a run is resumed: they define what the trials
#: already in the history mean.
RESUME_FIXED = ("task", "space", "search", "seed", "metafeatures", "warmstart")
#: How many of the best trials an ensembler may choose from.
ENSEMBLE_POOL = 50
#: A member's refit time is estimated as its trial's fit time scaled to all the training rows,
#: times this margin: fits grow faster than linearly in rows for some models (kernel SVMs,
#: nearest neighbours' index), and the driver may be busier than the worker was.
REFIT_SAFETY = 1.5


class RunError(AutoMLError):
    """A run stopped on an error after saving what it had; ``summary`` says what was saved."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class RunInfo:
    """What observers are told about a run when it starts."""

    run_dir: Path
    recipe: Recipe
    dataset: str
    task: str
    metric: str
    started_at: float
    budget_trials: int | None
    budget_seconds: float | None


@dataclass
class RunSummary:
    """What a run produced."""

    run_dir: str
    n_trials: int
    best_trial: int | None
    best_loss: float | None
    best_config: dict[str, Any] | None
    metric: str
    elapsed: float
    stopped_because: str
    test_scores: dict[str, float] | None = None
    model_path: str | None = None
    ensemble: dict[int, float] = field(default_factory=dict)
    #: For a benchmark task: its name, the dataset, the best and worst stored losses, and
    #: the normalised regret of the best trial.
    benchmark: dict[str, Any] | None = None
    #: Seconds spent refitting the final model on all training rows.
    refit_seconds: float | None = None
    #: Ensemble members left out of the final model because their refit would have crossed
    #: the run's deadline: ``{"trial", "weight" (in the choice first made),
    #: "estimated_seconds"}``. ``ensemble`` then holds the weights of the choice made again
    #: over the members refitted (never the first weights renormalised).
    dropped_members: list[dict[str, Any]] = field(default_factory=list)
    #: How the final model was chosen (:meth:`automl_core.final_model.FinalChoice.record`):
    #: ensemble or single best, both validation losses, and why.
    final_model: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Set-up
# ---------------------------------------------------------------------------------------------


@dataclass
class DataTask:
    """A search on real data: what refitting and test scoring need after the search."""

    dataset: Dataset
    train: Dataset
    test: Dataset | None
    metric: Metric
    space: PipelineSpace
    evaluator: PipelineEvaluator
    #: What the policy selector chose (``task.resampling: auto``); None otherwise.
    policy: Policy | None = None


@dataclass
class BenchmarkTask:
    """A search on one dataset of a table-lookup benchmark."""

    name: str
    benchmark: Benchmark
    dataset: str


@dataclass
class Setup:
    """Everything resolved from a recipe, ready to run: exactly one of ``data`` and
    ``benchmark`` says what the search is on."""

    recipe: Recipe
    task: TaskDescription
    space: SearchSpace
    evaluator: Evaluator
    strategy: SearchStrategy
    executor: Executor
    data: DataTask | None = None
    benchmark: BenchmarkTask | None = None
    warm_start: WarmStart | None = None
    #: The strategy as run: the recipe's, or the one a policy switched to.
    strategy_ref: ComponentRef | None = None

    @property
    def metric_name(self) -> str:
        return self.task.metric


def split_test(
    dataset: Dataset, test_size: float | None, seed: int
) -> tuple[Dataset, Dataset | None]:
    """Hold ``test_size`` of the rows out of the search (stratified for classification), or
    the dataset's own ``test_rows`` when its source defines them."""
    if dataset.test_rows is not None:
        test = np.unique(np.asarray(dataset.test_rows, dtype=int))
        train = np.setdiff1d(np.arange(dataset.n_rows), test)
        return _rows(dataset, train, "train"), _rows(dataset, test, "test")
    if not test_size:
        return dataset, None
    stratify = dataset.y if dataset.task == "classification" else None
    try:
        train, test = train_test_split(
            np.arange(dataset.n_rows), test_size=test_size, random_state=seed, stratify=stratify
        )
    except ValueError:  # a class too small to stratify
        train, test = train_test_split(
            np.arange(dataset.n_rows), test_size=test_size, random_state=seed
        )
    return _rows(dataset, np.sort(train), "train"), _rows(dataset, np.sort(test), "test")


def _rows(dataset: Dataset, rows: np.ndarray, suffix: str) -> Dataset:
    """The dataset restricted to ``rows``, named ``<name>[<suffix>]``."""
    X = dataset.X.iloc[rows].reset_index(drop=True)
    return Dataset(
        f"{dataset.name}[{suffix}]",
        X,
        np.asarray(dataset.y)[rows],
        dataset.task,
        dict(dataset.info),
    )


def prepare(
    recipe: Recipe,
    plugins: Plugins,
    benchmark: Benchmark | None = None,
    dataset: Dataset | None = None,
    policy: Policy | None = None,
    spent: float = 0.0,
) -> Setup:
    """Resolve every name of the recipe and build the components, in data-flow order.

    ``benchmark`` is the already built benchmark of a suite, so that its meta-data is loaded
    once for all the suite's runs. ``dataset`` is data held in memory, used instead of loading
    ``task.dataset``, which must then be a ``memory:<name>`` reference (see
    :func:`in_memory_dataset`). ``policy`` is the policy a resumed run was started with
    (``resampling: auto``), used instead of asking the selector again. ``spent`` is the
    seconds a resumed run already searched: the strategy is told the wall time left
    (``SearchContext.time_budget``), as :func:`search` counts it.
    """
    check_names(recipe, plugins)
    if recipe.task.benchmark is not None:
        if dataset is not None:
            raise RecipeError(
                "task.benchmark",
                recipe.task.benchmark.name,
                "a dataset task when data is given (run(dataset=...))",
                "A table-lookup benchmark brings its own datasets.",
            )
        task, space, evaluator, lookup = _benchmark_task(recipe, plugins, benchmark)
        data = None
    else:
        task, space, evaluator, data = _data_task(recipe, plugins, dataset, policy)
        lookup = None
    warm_start = _warm_start(recipe, plugins, task, space)
    surrogate = recipe.search.surrogate

    def surrogate_factory() -> Any:
        assert surrogate is not None
        return plugins.create("surrogate", surrogate.name, _seeded(plugins, surrogate, recipe))

    strategy_ref = policy_strategy(recipe, data.policy if data is not None else None, plugins)
    strategy = plugins.create("search_strategy", strategy_ref.name, strategy_ref.params)
    strategy.setup(
        SearchContext(
            space=space,
            seed=recipe.seed,
            surrogate_factory=surrogate_factory if surrogate else None,
            warm_start=warm_start,
            fidelity=_fidelity(recipe, lookup),
            task=task,
            trial_budget=recipe.budget.trials,
            time_budget=_time_left(recipe.budget.wall_time, spent),
        )
    )
    executor = plugins.create("executor", recipe.executor.name, recipe.executor.params)
    _apply_limits(executor, recipe)
    return Setup(
        recipe, task, space, evaluator, strategy, executor, data, lookup, warm_start, strategy_ref
    )


def _time_left(wall_time: float | None, spent: float) -> float | None:
    """The seconds of search left to a run that already searched ``spent`` of its
    ``wall_time`` (None: no wall time)."""
    return None if wall_time is None else max(0.0, wall_time - spent)


def _fidelity(recipe: Recipe, lookup: BenchmarkTask | None) -> Fidelity | None:
    """The budget range handed to the strategy: the recipe's ``search.fidelity`` over the
    data task's default (checked when the recipe was parsed), or the benchmark's own range,
    narrowed by the recipe."""
    wanted = recipe.search.fidelity
    if lookup is None:
        return data_fidelity(wanted)
    offered = lookup.benchmark.fidelity(lookup.dataset)
    if wanted == type(wanted)():
        return offered
    if offered is None:
        raise RecipeError(
            "search.fidelity",
            asdict(wanted),
            f"nothing: benchmark {lookup.name!r} has no fidelities",
        )
    if wanted.kind is not None and wanted.kind != offered.kind:
        raise RecipeError(
            "search.fidelity.kind", wanted.kind, f"{offered.kind!r}, the benchmark's own"
        )
    low = offered.min if wanted.min is None else wanted.min
    high = offered.max if wanted.max is None else wanted.max
    if not offered.min <= low < high <= offered.max:
        raise RecipeError(
            "search.fidelity",
            {"min": low, "max": high},
            f"min < max within the benchmark's range [{offered.min:g}, {offered.max:g}]",
        )
    return Fidelity(offered.kind, low, high)


def _apply_limits(executor: Executor, recipe: Recipe) -> None:
    """Hand the recipe's per-trial limits to the executor; warn if it cannot enforce them."""
    budget = recipe.budget
    if budget.trial_time is None and budget.trial_memory_mb is None:
        return
    if not executor.enforces_limits:
        warnings.warn(
            f"budget.trial_time / budget.trial_memory_mb are not enforced by the executor "
            f"{recipe.executor.name!r}; use executor: processes",
            stacklevel=3,
        )
    executor.set_limits(budget.trial_time, budget.trial_memory_mb)


def _seeded(plugins: Plugins, ref: Any, recipe: Recipe) -> dict[str, Any]:
    """The component's params, plus the recipe's seed when it takes a ``seed`` and the recipe
    does not set one: a run is then reproducible from its recipe's seed alone."""
    accepts_seed = "seed" in plugins.get("surrogate", ref.name).parameters()
    if accepts_seed and "seed" not in ref.params:
        return {**ref.params, "seed": recipe.seed}
    return dict(ref.params)


def _space_params(recipe: Recipe, plugins: Plugins, metric: Metric) -> dict[str, Any]:
    """The space's params, plus the run's metric name when its factory takes a ``metric``
    parameter and the recipe does not set one: a space may suit its defaults to the metric
    (``autosklearn-classification`` weights classes by default under balanced accuracy)."""
    assert recipe.space is not None
    params = dict(recipe.space.params)
    if "metric" in plugins.get("space", recipe.space.name).parameters():
        params.setdefault("metric", metric.name)
    return params


def load_task_data(
    recipe: Recipe, plugins: Plugins, given: Dataset | None = None
) -> tuple[Dataset, Dataset, Dataset | None, Metric]:
    """The recipe's dataset (or ``given``), its training and test rows and its metric: what
    every search of this task sees, whichever system runs it (``automl ablate`` gives a
    whole-system peer the same rows)."""
    assert recipe.task.dataset is not None
    if given is not None:
        dataset = in_memory_dataset(recipe, given)
    else:
        dataset = load_dataset(
            plugins, recipe.task.dataset, target=recipe.task.target, task=recipe.task.type
        )
    metric_name = recipe.task.metric or DEFAULT_METRIC[dataset.task]
    try:
        metric = get_metric(metric_name, dataset.task)
    except AutoMLError as error:
        raise RecipeError(
            "task.metric", metric_name, f"a {dataset.task} metric", str(error)
        ) from None
    if dataset.test_rows is not None and recipe.task.test_size:
        raise RecipeError(
            "task.test_size",
            recipe.task.test_size,
            "no test_size for this dataset",
            f"{recipe.task.dataset} defines its own test split "
            f"({len(dataset.test_rows)} rows), which the run uses.",
        )
    split_seed = recipe.seed if recipe.task.split_seed is None else recipe.task.split_seed
    train, test = split_test(dataset, recipe.task.test_size, split_seed)
    return dataset, train, test, metric


def _data_task(
    recipe: Recipe, plugins: Plugins, given: Dataset | None = None, stored: Policy | None = None
) -> tuple[TaskDescription, PipelineSpace, PipelineEvaluator, DataTask]:
    """Load (or take ``given``) and split the dataset, build the pipeline space and the
    evaluator."""
    assert recipe.space is not None
    dataset, train, test, metric = load_task_data(recipe, plugins, given)
    created = plugins.create("space", recipe.space.name, _space_params(recipe, plugins, metric))
    space = pipeline_space(created)
    if space is None:
        raise RecipeError("space", recipe.space.name, "a pipeline space for a dataset task")
    if space.task != dataset.task:
        raise RecipeError(
            "space",
            recipe.space.name,
            f"a {dataset.task} space",
            f"dataset {dataset.name!r} is a {dataset.task} task, the space is for {space.task}",
        )
    task = TaskDescription(
        dataset=dataset.name,
        task=dataset.task,
        n_rows=train.n_rows,
        n_features=train.n_features,
        metric=metric.name,
        metafeatures=_metafeatures(recipe, plugins, train),
        aliases=dataset_aliases(dataset),
        resolve_metadata=metadata_resolver(plugins),
    )
    policy = stored if stored is not None else choose_policy(recipe, plugins, task)
    evaluator = PipelineEvaluator(
        train,
        space,
        metric,
        policy_resampling(policy) if policy else recipe.task.resampling,
        recipe.seed,
        fidelity=data_fidelity(recipe.search.fidelity).kind,
    )
    data_task = DataTask(dataset, train, test, metric, space, evaluator, policy)
    return task, space, evaluator, data_task


def choose_policy(recipe: Recipe, plugins: Plugins, task: TaskDescription) -> Policy | None:
    """The policy selector's choice for ``task`` when the recipe says ``resampling: auto``.

    It is told the search's wall time. A resumed run does not ask again (its budget may
    have grown, and the selector's answer with it): it keeps the policy its trials were run
    with (:func:`stored_policy`).
    """
    if recipe.task.policy is None:
        return None
    selector = plugins.create("policy_selector", recipe.task.policy.name, recipe.task.policy.params)
    wall = recipe.budget.wall_time
    policy = selector.select(task, wall)
    if not isinstance(policy, Policy):
        raise PluginError(
            f"policy selector {recipe.task.policy.name!r} returned {type(policy).__name__}, "
            "not a Policy"
        )
    return policy


def stored_policy(run_dir: Path) -> Policy | None:
    """The policy recorded in the history of the run in ``run_dir``, if any."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return None
    with RunHistory(path) as history:
        record = history.get_meta("policy")
    if not record:
        return None
    return Policy(**{f.name: record[f.name] for f in fields(Policy)})


def stored_elapsed(run_dir: Path) -> float:
    """The seconds the run in ``run_dir`` has searched so far (0 without a history), so
    that a resumed strategy is told the time left before :func:`search` counts it."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return 0.0
    with RunHistory(path) as history:
        return float(history.get_meta(ELAPSED, 0.0))


def policy_resampling(policy: Policy) -> Resampling:
    """The policy's resampling, checked as a recipe's would be."""
    try:
        return parse_resampling(dict(policy.resampling))
    except RecipeError as error:
        raise PluginError(f"policy {policy.name!r} has an invalid resampling: {error}") from None


def policy_strategy(recipe: Recipe, policy: Policy | None, plugins: Plugins) -> ComponentRef:
    """The strategy the run uses: the recipe's, or successive halving (with the recipe's
    surrogate, BOHB-style, as Auto-sklearn 2.0 combines them) when the policy races
    candidates and the recipe's strategy does not race budgets itself."""
    strategy = recipe.search.strategy
    factory = plugins.get("search_strategy", strategy.name).obj
    if policy is None or not policy.halving or getattr(factory, "races_budgets", False):
        return strategy
    return ComponentRef(HALVING_STRATEGY)


def dataset_aliases(dataset: Dataset) -> tuple[str, ...]:
    """The lower-case names ``dataset`` may have in meta-data: the source's own name for it
    (``german`` of ``keel:german``) and, where the source knows it, its OpenML name. Data
    held in memory has only the name its caller chose, which says nothing."""
    source, _, reference = dataset.name.partition(":")
    own = "" if source == MEMORY_SOURCE else reference
    names = [own, str(dataset.info.get("openml_name", ""))]
    return tuple(dict.fromkeys(n.lower() for n in names if n))


def in_memory_dataset(recipe: Recipe, dataset: Dataset) -> Dataset:
    """``dataset``, checked, named after the recipe's ``memory:<name>`` reference.

    The recipe must say ``memory:``: a run folder's ``recipe.yaml`` then tells the truth
    about where its data came from, and a recipe naming a file is never silently run on
    other data. ``task.target`` has no meaning here (the target comes separately) and
    ``task.type``, when set, must be the data's task.
    """
    reference = recipe.task.dataset
    assert reference is not None
    if _source_of(reference) != MEMORY_SOURCE:
        raise RecipeError(
            "task.dataset",
            reference,
            f"'{MEMORY_SOURCE}:<name>' when the data is given to run(dataset=...)",
            "Set the recipe's task.dataset to e.g. 'memory:train' (AutoMLClassifier.fit does).",
        )
    if recipe.task.target is not None:
        raise RecipeError(
            "task.target",
            recipe.task.target,
            "no target for data held in memory",
            "The target comes with the data (Dataset.y), not from a column.",
        )
    if recipe.task.type is not None and recipe.task.type != dataset.task:
        raise RecipeError(
            "task.type",
            recipe.task.type,
            f"{dataset.task!r}, the task of the data given",
        )
    return check_dataset(replace(dataset, name=reference))


def _source_of(reference: str) -> str | None:
    try:
        return parse_reference(reference)[0]
    except DatasetError:
        return None


def _benchmark_task(
    recipe: Recipe, plugins: Plugins, benchmark: Benchmark | None
) -> tuple[TaskDescription, SearchSpace, Evaluator, BenchmarkTask]:
    """The benchmark's pool on the recipe's dataset, and its look-up evaluator."""
    ref = recipe.task.benchmark
    assert ref is not None
    if recipe.task.dataset is None:
        raise RecipeError(
            "task.suite", recipe.task.suite, "a single dataset here", "Use run_suite for suites."
        )
    if recipe.metafeatures is not None:
        raise RecipeError(
            "metafeatures",
            recipe.metafeatures.name,
            "no meta-feature provider in a benchmark task",
            "A table-lookup benchmark has no data to compute meta-features from.",
        )
    if recipe.ensemble is not None:
        raise RecipeError(
            "ensemble",
            recipe.ensemble.name,
            "no ensemble in a benchmark task",
            "A table-lookup benchmark stores losses, not the predictions ensembling needs.",
        )
    if benchmark is None:
        benchmark = plugins.create("benchmark", ref.name, ref.params)
    dataset = recipe.task.dataset
    known = benchmark.datasets()
    if dataset not in known:
        close = difflib.get_close_matches(dataset, known, n=3)
        raise RecipeError(
            "task.dataset",
            dataset,
            f"one of the {len(known)} datasets of benchmark {ref.name!r}",
            f"Did you mean {', '.join(map(repr, close))}?" if close else "",
        )
    space = benchmark.space(dataset)
    task = TaskDescription(
        dataset=f"{ref.name}:{dataset}",
        task="benchmark",
        n_rows=0,
        n_features=0,
        metric=benchmark.metric,
        aliases=(dataset.lower(),),
        benchmark=ref.name,
        resolve_metadata=metadata_resolver(plugins),
    )
    lookup = BenchmarkTask(ref.name, benchmark, dataset)
    return task, space, benchmark.evaluator(dataset, recipe.seed), lookup


def _metafeatures(recipe: Recipe, plugins: Plugins, data: Dataset) -> dict[str, float]:
    if recipe.metafeatures is None:
        return {}
    provider = plugins.create(
        "metafeature_provider", recipe.metafeatures.name, recipe.metafeatures.params
    )
    return dict(provider.compute(data.X, np.asarray(data.y), data.task))


def _warm_start(
    recipe: Recipe, plugins: Plugins, task: TaskDescription, space: Any
) -> WarmStart | None:
    if recipe.warmstart is None:
        return None
    starter = plugins.create(
        "warmstarter", recipe.warmstart.starter.name, recipe.warmstart.starter.params
    )
    return starter.suggest(task, space, recipe.warmstart.configs)


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


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


class Budget:
    """Counts trials and seconds; says when the search must stop asking."""

    def __init__(self, trials: int | None, seconds: float | None, spent: float = 0.0) -> None:
        self.trials = trials
        self.seconds = seconds
        self.started = time.monotonic() - spent  # a resumed run counts the time already spent

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_seconds(self) -> float | None:
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed())

    def exhausted(self, asked: int) -> str | None:
        if self.trials is not None and asked >= self.trials:
            return "trial budget reached"
        if self.seconds is not None and self.elapsed() >= self.seconds:
            return "wall-time budget reached"
        return None


def search(
    setup: Setup,
    history: RunHistory,
    observers: Observers,
    info: RunInfo,
    requeued: list[Trial] | None = None,
) -> str:
    """Ask, execute, store and tell until a budget ends or an observer asks to stop; returns
    why it stopped.

    ``requeued`` are trials of an interrupted run that never finished: they run first, under
    their own ids, before the strategy is asked for new ones. A stop asked by an observer is
    graceful: nothing new is asked, the trials running finish and are stored.
    """
    budget = Budget(
        setup.recipe.budget.trials, setup.recipe.budget.wall_time, history.get_meta(ELAPSED, 0.0)
    )
    in_flight: dict[Future[Result], Trial] = {}
    waiting = list(requeued or [])
    asked = history.count()
    stopped = ""
    while True:
        while len(in_flight) < max(1, setup.executor.capacity) and not stopped:
            if waiting:
                trial = waiting.pop(0)
            else:
                stopped = budget.exhausted(asked) or ""
                if stopped:
                    break
                candidate = _call("search strategy", "ask", setup.strategy.ask)
                if candidate is None:
                    stopped = "search space exhausted"
                    break
                trial = Trial.from_candidate(asked, candidate)
                asked += 1
            history.start(trial)
            in_flight[setup.executor.submit(setup.evaluator, trial)] = trial
        if not in_flight:
            return stopped
        done, _ = wait(
            list(in_flight), timeout=budget.remaining_seconds(), return_when=FIRST_COMPLETED
        )
        if not done:  # wall time ran out with trials still running
            for future, trial in in_flight.items():
                future.cancel()
                history.finish(
                    trial, Result.failure(Status.TIMEOUT, "stopped at the run's wall time")
                )
            return "wall-time budget reached"
        for future in done:
            trial = in_flight.pop(future)
            result = _result_of(future)
            history.finish(trial, result)
            history.set_meta(ELAPSED, budget.elapsed())
            _call(
                "search strategy", "tell", setup.strategy.tell, trial, result.without_predictions()
            )
            stopped = stopped or observers.trial_end(info, trial, result) or ""


def _close_strategy(strategy: SearchStrategy) -> None:
    """``strategy.close()``; a failure there is logged, not allowed to lose the run."""
    try:
        strategy.close()
    except Exception:
        warnings.warn(
            f"the search strategy failed to close:\n{traceback.format_exc()}", stacklevel=2
        )


class StrategyError(AutoMLError):
    """A plugin component raised inside the loop."""


def _call(what: str, method: str, function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Exception as error:
        raise StrategyError(
            f"the {what} raised in {method}(): {type(error).__name__}: {error}\n"
            + "".join(traceback.format_exception(type(error), error, error.__traceback__))
        ) from error


def _result_of(future: Future[Result]) -> Result:
    try:
        return future.result()
    except Exception as error:  # the executor itself failed, not the pipeline
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        return Result.failure(Status.CRASHED, f"executor error: {text}")


# ---------------------------------------------------------------------------------------------
# After the search: ensemble, refit, test, save
# ---------------------------------------------------------------------------------------------


@dataclass
class Refitted:
    """The members refitted on all training rows, and those left out for lack of time."""

    #: Fitted estimators by position in the configurations offered.
    estimators: dict[int, Any]
    #: Positions of the members left out for lack of time, in refit order.
    dropped: list[int]
    seconds: float

    @property
    def kept(self) -> list[int]:
        """Positions refitted, in refit order."""
        return list(self.estimators)


def refit_order(weights: np.ndarray, first: int | None = None) -> list[int]:
    """The order refits go in under a deadline: ``first`` (the best trial, the fallback a
    run must always be able to save), then the others by decreasing weight, so the time goes
    to the members that matter most."""
    by_weight = [int(i) for i in np.argsort(-np.asarray(weights, dtype=float), kind="stable")]
    return by_weight if first is None else [first, *(i for i in by_weight if i != first)]


def refit_plan(
    members: list[StoredTrial], weights: np.ndarray, best: StoredTrial
) -> tuple[list[StoredTrial], np.ndarray]:
    """What a refit under a deadline fits, the best trial at position 0 (weight 0 when it is
    not a member: it is the fallback), then the other members. The plan that chooses the
    ensemble and the refit that follows use this one list, so the time the plan counts is
    the time the refit spends."""
    weights = np.asarray(weights, dtype=float)
    others = [i for i, t in enumerate(members) if t.trial.id != best.trial.id]
    own = [float(weights[i]) for i, t in enumerate(members) if t.trial.id == best.trial.id]
    plan = [best, *(members[i] for i in others)]
    return plan, np.array([own[0] if own else 0.0, *(float(weights[i]) for i in others)])


def refit_members(
    data: DataTask,
    configs: list[dict[str, Any]],
    weights: np.ndarray,
    seed: int,
    deadline: float | None = None,
    estimates: list[float] | None = None,
    first: int | None = None,
) -> Refitted:
    """Refit the members on all training rows, within ``deadline`` when one is given.

    With a deadline (a ``time.monotonic()`` value) the members are refitted in
    :func:`refit_order`; a member whose ``estimates`` (seconds, see :func:`refit_estimate`)
    would take it past the deadline is left out. The first in that order is always refitted:
    a run must leave a model. Without a deadline every member is refitted, in the order
    given. What the kept members weigh is the caller's choice (:func:`finalise` selects the
    ensemble again over them).
    """
    started = time.monotonic()
    order = list(range(len(configs))) if deadline is None else refit_order(weights, first)
    guesses = estimates if estimates is not None else [0.0] * len(configs)
    context = BuildContext(task=data.train.task, seed=seed)
    estimators: dict[int, Any] = {}
    dropped: list[int] = []
    for position in order:
        late = deadline is not None and time.monotonic() + guesses[position] > deadline
        if estimators and late:
            dropped.append(position)
            continue
        estimators[position] = _fit_member(data, configs[position], context)
    return Refitted(estimators, dropped, time.monotonic() - started)


def too_slow_to_refit(
    estimates: list[float], weights: np.ndarray, seconds_left: float, first: int | None = None
) -> list[int]:
    """The positions :func:`refit_members` would leave out if every refit took its estimate:
    the same :func:`refit_order`, the first always, each later one only if it ends within
    ``seconds_left``."""
    spent, late = 0.0, []
    for rank, position in enumerate(refit_order(weights, first)):
        if rank and spent + estimates[position] > seconds_left:
            late.append(position)
        else:
            spent += estimates[position]
    return late


def _fit_member(data: DataTask, config: dict[str, Any], context: BuildContext) -> Any:
    model = clone(data.space.build(config, context))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(data.train.X, data.evaluator.y)
    return model


def refit_estimate(stored: StoredTrial, data: DataTask) -> float:
    """Seconds a trial's configuration is expected to take to fit on all training rows: the
    trial's fit time (summed over its folds) per row it was fitted on, times the training
    rows, times :data:`REFIT_SAFETY`. A trial at a reduced budget fitted on (or iterated
    over) that fraction, so its time is scaled up by the budget too."""
    fitted_rows = float(sum(len(train) for train, _ in data.evaluator.splits))
    budget = stored.trial.budget
    if budget is not None and 0 < budget < 1:
        fitted_rows *= budget
    seconds = stored.fit_time if stored.fit_time else (stored.duration or 0.0)
    return seconds * data.train.n_rows / max(fitted_rows, 1.0) * REFIT_SAFETY


class FinalModelChooser:
    """Chooses the final model's trials from a run's history (see
    :mod:`automl_core.final_model`): the best trial, or the recipe's ensemble when it beats
    the best trial on the validation rows and its members can be refitted in time."""

    def __init__(self, setup: Setup, history: RunHistory, plugins: Plugins) -> None:
        self.setup, self.history = setup, history
        self.ensembler: Ensembler | None = None
        self.failure: str | None = None
        if setup.recipe.ensemble is not None and setup.data is not None:
            self.ensembler = plugins.create(
                "ensembler", setup.recipe.ensemble.name, setup.recipe.ensemble.params
            )

    def choose(self, deadline: float | None = None) -> FinalChoice:
        """The final model's members among the best :data:`ENSEMBLE_POOL` trials."""
        best = self.history.best(ENSEMBLE_POOL if self.ensembler is not None else 1)
        if not best:
            return FinalChoice([], np.ones(0), reason="no finished trial")
        if self.ensembler is None or len(best) < 2:
            return FinalChoice(best[:1], np.ones(1))
        return self._among(best, deadline)

    def among(self, trials: list[StoredTrial]) -> FinalChoice:
        """The choice made again over ``trials`` (best first), with no deadline: the members
        actually refitted when a refit took longer than estimated."""
        if self.ensembler is None or len(trials) < 2:
            return FinalChoice(trials[:1], np.ones(min(1, len(trials))))
        return self._among(trials, None)

    def _among(self, trials: list[StoredTrial], deadline: float | None) -> FinalChoice:
        assert self.setup.data is not None and self.ensembler is not None
        data = self.setup.data
        slow: list[int] = []
        if deadline is not None:  # a member that alone outlasts the time left never fits
            left = max(deadline - time.monotonic(), 0.0)
            slow = [t.trial.id for t in trials[1:] if refit_estimate(t, data) > left]
            trials = [t for t in trials if t.trial.id not in slow]
        scored = [
            Scored(t, p) for t in trials if (p := self.history.predictions(t.trial.id)) is not None
        ]
        if not scored or scored[0].trial is not trials[0]:
            return FinalChoice(
                trials[:1], np.ones(1), reason="the best trial: its predictions are not stored"
            )

        def too_slow(members: list[StoredTrial], weights: np.ndarray) -> list[StoredTrial]:
            assert deadline is not None
            plan, plan_weights = refit_plan(members, weights, trials[0])
            estimates = [refit_estimate(t, data) for t in plan]
            late = too_slow_to_refit(estimates, plan_weights, deadline - time.monotonic(), 0)
            return [plan[i] for i in late]

        try:
            return choose_final_model(
                scored,
                self.ensembler,
                data.evaluator.validation_targets,
                data.metric,
                too_slow if deadline is not None else None,
                left_out_for_time=slow,
            )
        except EnsemblerError as error:  # a plugin's bug must not cost the run its model
            name = self.setup.recipe.ensemble.name if self.setup.recipe.ensemble else "?"
            headline = str(error).splitlines()[0]
            warnings.warn(
                f"ensembler {name!r} failed; the best trial is the final model: {error}",
                stacklevel=3,
            )
            reason = f"the best trial: ensembler {name!r} failed: {headline}"
            return FinalChoice(trials[:1], np.ones(1), reason=reason)


def finalise(
    setup: Setup,
    history: RunHistory,
    plugins: Plugins,
    run_dir: Path,
    stopped: str,
    started: float,
    deadline: float | None = None,
) -> RunSummary:
    """Choose the final model (:class:`FinalModelChooser`), refit it (members left out if
    they would end past ``deadline``, a ``time.monotonic()`` value), score it on the test
    rows, save it and the summary."""
    chooser = FinalModelChooser(setup, history, plugins)
    choice = chooser.choose(deadline)
    summary = RunSummary(
        run_dir=str(run_dir),
        n_trials=history.count(),
        best_trial=None,
        best_loss=None,
        best_config=None,
        metric=setup.metric_name,
        elapsed=0.0,
        stopped_because=stopped,
    )
    if choice.members:
        top = history.best(1)[0]
        summary.best_trial, summary.best_loss = top.trial.id, top.loss
        summary.best_config = dict(top.trial.config)
        _record_choice(summary, choice)
    if choice.members and setup.data is not None:
        _save_model(setup.data, setup.recipe, chooser, choice, run_dir, summary, deadline)
    if setup.benchmark is not None:
        summary.benchmark = _benchmark_summary(setup.benchmark, summary.best_loss)
    summary.elapsed = time.monotonic() - started
    (run_dir / SUMMARY_FILE).write_text(json.dumps(asdict(summary), indent=2, default=str))
    history.set_meta("summary", json.loads(json.dumps(asdict(summary), default=str)))
    return summary


def _record_choice(summary: RunSummary, choice: FinalChoice) -> None:
    summary.ensemble = {
        t.trial.id: float(w) for t, w in zip(choice.members, choice.weights, strict=True)
    }
    summary.final_model = choice.record()


def _save_model(
    data: DataTask,
    recipe: Recipe,
    chooser: FinalModelChooser,
    choice: FinalChoice,
    run_dir: Path,
    summary: RunSummary,
    deadline: float | None = None,
) -> None:
    """Refit the final model on all training rows, score it on the test rows, save it.

    Under a ``deadline`` the best trial is refitted first, whether it is a member or not: it
    is the model saved when the deadline leaves too little time for the chosen one. When a
    member could not be refitted in time, the choice is made again over those that were
    (with time left; once the deadline has passed, the best trial alone)."""
    best = chooser.history.best(1)[0]
    plan, weights, first = list(choice.members), np.asarray(choice.weights, dtype=float), None
    if deadline is not None:
        plan, weights = refit_plan(choice.members, choice.weights, best)
        first = 0
    estimates = [refit_estimate(t, data) for t in plan]
    configs = [dict(t.trial.config) for t in plan]
    refitted = refit_members(data, configs, weights, recipe.seed, deadline, estimates, first)
    summary.refit_seconds = refitted.seconds
    by_trial = {plan[i].trial.id: e for i, e in refitted.estimators.items()}
    final = choice
    if refitted.dropped:
        if deadline is not None and time.monotonic() >= deadline:
            final = FinalChoice(
                [best], np.ones(1), reason="the best trial: the refit ran out of time"
            )
        else:
            final = chooser.among(sorted((plan[i] for i in refitted.kept), key=rank_key))
        _record_dropped(summary, plan, weights, estimates, refitted, final)
    model = TrainedModel(
        data.train.task,
        [by_trial[t.trial.id] for t in final.members],
        final.weights,
        data.evaluator.label_encoder,
        [dict(t.trial.config) for t in final.members],
    )
    if data.test is not None:
        y_test = (
            model.label_encoder.transform(data.test.y)
            if model.label_encoder is not None
            else np.asarray(data.test.y, float)
        )
        summary.test_scores = score_all(data.train.task, y_test, model.raw_predictions(data.test.X))
    joblib.dump(
        {
            "model": model,
            "recipe": recipe.raw,
            # what `automl predict` checks a CSV file's columns against
            "features": [str(c) for c in data.train.X.columns],
            "target": recipe.task.target or data.dataset.info.get("target"),
        },
        run_dir / MODEL_FILE,
    )
    summary.model_path = str(run_dir / MODEL_FILE)


def _record_dropped(
    summary: RunSummary,
    plan: list[StoredTrial],
    weights: np.ndarray,
    estimates: list[float],
    refitted: Refitted,
    final: FinalChoice,
) -> None:
    """Say in the summary (and a warning) which members the deadline left out; the
    ensemble's weights become those of the model actually saved."""
    summary.dropped_members = [
        {
            "trial": plan[i].trial.id,
            "weight": float(weights[i]),
            "estimated_seconds": round(estimates[i], 3),
        }
        for i in refitted.dropped
    ]
    _record_choice(summary, final)
    left_out = ", ".join(
        f"trial {d['trial']} (weight {d['weight']:.3f}, ~{d['estimated_seconds']:.1f}s)"
        for d in summary.dropped_members
    )
    warnings.warn(
        f"the deadline left no time to refit {len(refitted.dropped)} of the "
        f"{len(plan)} planned refits: {left_out}; the final model was chosen again among "
        f"the {len(refitted.kept)} refitted: {final.reason}",
        stacklevel=4,
    )


def load_saved_model(run_dir: Path) -> dict[str, Any]:
    """The dict a run saved in ``model.joblib``; the error says why there is none."""
    path = run_dir / MODEL_FILE
    if not path.is_file():
        if not run_dir.is_dir():
            why = "no such folder"
        elif (run_dir / HISTORY_FILE).is_file():
            why = "the run saved no model: no trial succeeded, or it was a benchmark task"
        else:
            why = f"not a run folder (no {HISTORY_FILE} either)"
        raise AutoMLError(f"{run_dir} holds no model ({MODEL_FILE} is missing): {why}")
    stored = joblib.load(path)
    if not isinstance(stored, dict) or not isinstance(stored.get("model"), TrainedModel):
        raise AutoMLError(f"{path} was not written by an automl run (no TrainedModel in it)")
    return stored


def _benchmark_summary(task: BenchmarkTask, best_loss: float | None) -> dict[str, Any]:
    """The benchmark, the dataset and how far the best loss found is from the best stored."""
    found: dict[str, Any] = {"name": task.name, "dataset": task.dataset}
    loss_range = task.benchmark.loss_range(task.dataset)
    if loss_range is not None:
        found["best_possible"], found["worst_possible"] = loss_range
        if best_loss is not None:
            found["normalised_regret"] = float(normalised_regret(best_loss, *loss_range))
    return found


# ---------------------------------------------------------------------------------------------
# The whole run
# ---------------------------------------------------------------------------------------------


def run(
    recipe: Recipe,
    run_dir: str | Path,
    *,
    plugins: Plugins | None = None,
    observers: tuple[object, ...] = (),
    benchmark: Benchmark | None = None,
    resume: bool = False,
    dataset: Dataset | None = None,
    deadline: float | None = None,
) -> RunSummary:
    """Run ``recipe`` into ``run_dir`` (created; must not hold an earlier run's history).

    ``resume=True`` continues the interrupted run in ``run_dir`` instead: its finished trials
    are told to the strategy again (so it neither forgets nor repeats them), trials that were
    running are run again under their own ids, and the budget counts what was already spent.
    ``benchmark`` is the recipe's benchmark already built (a suite shares one).

    ``dataset`` is data held in memory, searched instead of loading ``task.dataset`` (which
    must then be ``memory:<name>``); its fingerprint is stored, and resuming needs the same
    data again. ``deadline`` (a ``time.monotonic()`` value) bounds the final refit: ensemble
    members are refitted in decreasing weight, and an ensemble whose members could not all be
    refitted by then is chosen again among those that can (see :func:`finalise`); the search
    itself is bounded by the recipe's ``budget.wall_time``, as always.
    """
    started = time.monotonic()
    plugins = plugins or load_plugins()
    run_dir = Path(run_dir)
    _check_run_folder(run_dir, recipe, resume, dataset)
    policy = stored_policy(run_dir) if resume else None
    spent = stored_elapsed(run_dir) if resume else 0.0
    setup = prepare(recipe, plugins, benchmark, dataset, policy, spent)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        (run_dir / RECIPE_FILE).write_text(yaml.safe_dump(recipe.raw, sort_keys=False))
    for observer in observers:
        plugins.manager.register(observer)
    info = RunInfo(
        run_dir,
        recipe,
        setup.task.dataset,
        setup.task.task,
        setup.metric_name,
        time.time(),
        recipe.budget.trials,
        recipe.budget.wall_time,
    )
    with RunHistory(run_dir / HISTORY_FILE) as history:
        requeued = _replay(setup, history) if resume else []
        if not resume:
            _write_metadata(history, setup, plugins)
        lifecycle = Observers(plugins)
        lifecycle.run_start(info)
        failure: StrategyError | None = None
        try:
            stopped = search(setup, history, lifecycle, info, requeued)
        except StrategyError as error:
            failure, stopped = error, f"error: {str(error).splitlines()[0]}"
        finally:
            setup.executor.shutdown()
            _close_strategy(setup.strategy)
        summary = finalise(setup, history, plugins, run_dir, stopped, started, deadline)
        lifecycle.run_end(info, summary)
    for observer in observers:
        plugins.manager.unregister(observer)
    if failure is not None:
        raise RunError(
            f"{failure}\nThe {summary.n_trials} trials so far are kept in {run_dir}", summary
        ) from failure
    return summary


def _check_run_folder(
    run_dir: Path, recipe: Recipe, resume: bool, dataset: Dataset | None = None
) -> None:
    """A new run needs a folder without a history; a resumed one, the history of the same
    search (the recipe's task, space, search and seed unchanged; budgets may grow) and, for
    data held in memory, the same data (its stored fingerprint)."""
    path = run_dir / HISTORY_FILE
    if not resume:
        if path.exists():
            raise AutoMLError(
                f"{run_dir} already holds a run ({HISTORY_FILE}); choose another folder, "
                "or resume it (automl run --resume / automl resume)"
            )
        return
    if not path.exists():
        raise AutoMLError(f"cannot resume: {run_dir} holds no run ({HISTORY_FILE} is missing)")
    with RunHistory(path) as history:
        stored = history.get_meta("recipe", {})
        fingerprint = history.get_meta("dataset", {}).get("fingerprint")
    changed = [key for key in RESUME_FIXED if stored.get(key) != recipe.raw.get(key)]
    if changed:
        raise AutoMLError(
            f"cannot resume {run_dir} with a different {', '.join(changed)}: the trials "
            "already run were for the stored recipe (recipe.yaml in the run folder); only "
            "budget, executor, ensemble and name may change"
        )
    if dataset is not None and fingerprint != dataset_fingerprint(dataset):
        raise AutoMLError(
            f"cannot resume {run_dir} with this data: the run searched "
            + ("other data held in memory" if fingerprint else "a dataset it loaded itself")
            + " (its stored fingerprint differs), so the trials already run would not be "
            "comparable with new ones"
        )


def dataset_fingerprint(dataset: Dataset) -> str:
    """A hash of the features (values, column names, dtypes) and the target: how a resumed
    run recognises the data held in memory that it searched before."""
    return str(joblib.hash((dataset.X, np.asarray(dataset.y), dataset.task)))


def _replay(setup: Setup, history: RunHistory) -> list[Trial]:
    """Tell the strategy every finished trial of the interrupted run, in order; return the
    trials that were running when it stopped, to be run again."""
    for stored in history.trials(finished_only=True):
        _call("search strategy", "tell", setup.strategy.tell, stored.trial, stored.result())
    history.set_meta("resumed_at", [*history.get_meta("resumed_at", []), time.time()])
    return [stored.trial for stored in history.running()]


def _write_metadata(history: RunHistory, setup: Setup, plugins: Plugins) -> None:
    from automl_core import __version__

    history.set_meta("recipe", setup.recipe.raw)
    history.set_meta("plugins", plugin_versions(setup.recipe, plugins))
    history.set_meta("versions", {"automl-core": __version__, "python": platform.python_version()})
    if setup.data is not None:
        data = setup.data
        described = {
            "name": data.dataset.name,
            "task": data.dataset.task,
            "rows": data.dataset.n_rows,
            "features": data.dataset.n_features,
            "train_rows": data.train.n_rows,
        }
        if setup.recipe.task.dataset and _source_of(setup.recipe.task.dataset) == MEMORY_SOURCE:
            described["fingerprint"] = dataset_fingerprint(data.dataset)
        history.set_meta("dataset", described)
    if setup.benchmark is not None:
        history.set_meta(
            "benchmark", {"name": setup.benchmark.name, "dataset": setup.benchmark.dataset}
        )
    history.set_meta("metric", setup.metric_name)
    history.set_meta("metafeatures", dict(setup.task.metafeatures))
    if setup.warm_start is not None:
        history.set_meta("warmstart", warm_start_record(setup.recipe, setup.warm_start))
    policy = setup.data.policy if setup.data is not None else None
    if policy is not None:
        assert setup.strategy_ref is not None
        history.set_meta("policy", {**asdict(policy), "strategy": setup.strategy_ref.name})
    history.set_meta("started_at", time.time())


# ---------------------------------------------------------------------------------------------
# A suite: one run per dataset of a benchmark split
# ---------------------------------------------------------------------------------------------

SUITE_FILE = "suite.json"


@dataclass
class SuiteSummary:
    """The runs of a suite, and the mean normalised regret of their best trials."""

    run_dir: str
    benchmark: str
    split: str
    runs: dict[str, RunSummary]
    mean_normalised_regret: float | None
    elapsed: float


def run_suite(
    recipe: Recipe,
    run_dir: str | Path,
    *,
    plugins: Plugins | None = None,
    observers: tuple[object, ...] = (),
) -> SuiteSummary:
    """Run ``recipe`` on every dataset of its benchmark's split ``task.suite``, each into
    ``run_dir/<dataset>/``; the benchmark's meta-data is loaded once for all of them.

    A dataset whose run folder already holds a finished summary is not run again, and one
    whose run was interrupted is resumed, so an interrupted suite is continued by running it
    again into the same folder.
    """
    started = time.monotonic()
    plugins = plugins or load_plugins()
    ref, split = recipe.task.benchmark, recipe.task.suite
    if ref is None or split is None:
        raise RecipeError("task.suite", split, "a benchmark task with a suite (split name)")
    check_names(recipe, plugins)
    benchmark: Benchmark = plugins.create("benchmark", ref.name, ref.params)
    try:
        datasets = benchmark.datasets(split)
    except AutoMLError as error:
        raise RecipeError("task.suite", split, f"one of {benchmark.splits()}", str(error)) from None
    run_dir = Path(run_dir)
    runs: dict[str, RunSummary] = {}
    for dataset in datasets:
        folder = run_dir / safe_folder_name(dataset)
        previous = finished_summary(folder)
        if previous is not None:
            runs[dataset] = previous
            continue
        unfinished = (folder / HISTORY_FILE).exists()
        raw_task = {"benchmark": recipe.raw["task"]["benchmark"], "dataset": dataset}
        one = replace(
            recipe,
            task=replace(recipe.task, dataset=dataset, suite=None),
            raw={**recipe.raw, "task": raw_task},
        )
        runs[dataset] = run(
            one,
            folder,
            plugins=plugins,
            observers=observers,
            benchmark=benchmark,
            resume=unfinished,
        )
    regrets = [
        r.benchmark["normalised_regret"]
        for r in runs.values()
        if r.benchmark and "normalised_regret" in r.benchmark
    ]
    summary = SuiteSummary(
        run_dir=str(run_dir),
        benchmark=ref.name,
        split=split,
        runs=runs,
        mean_normalised_regret=float(np.mean(regrets)) if regrets else None,
        elapsed=time.monotonic() - started,
    )
    (run_dir / SUITE_FILE).write_text(json.dumps(asdict(summary), indent=2, default=str))
    return summary


def safe_folder_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``-``, ``_`` and ``.`` as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"


def finished_summary(folder: Path) -> RunSummary | None:
    """The summary a finished run left in ``folder``; None when it did not finish."""
    path = folder / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return RunSummary(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
