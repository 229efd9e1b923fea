"""What a run searches: a :class:`Task`, on real data or on a table-lookup benchmark.

A task owns what differs between the two: the space and the evaluator, the budget range a
strategy may race over, what the history records about the data, whether a run may be
resumed on it, and how the run finishes (a refitted, saved model; or the regret against the
best stored loss). The run loop sees only the protocol.

Data held in memory (``AutoMLClassifier.fit``) is a :class:`DataTask` built directly from
the caller's :class:`~automl_engine.dataset.Dataset` (:meth:`DataTask.given`); nothing loads
it through the recipe's ``memory:`` source, which exists only to say so.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import joblib
import numpy as np
from pandas.api.types import is_numeric_dtype
from sklearn.model_selection import train_test_split

from automl_core.contracts import (
    Benchmark,
    Ensembler,
    Evaluator,
    Fidelity,
    Policy,
    TaskDescription,
)
from automl_core.errors import AutoMLError, DatasetError, PluginError, RecipeError
from automl_core.plugins import Plugins
from automl_core.space import SearchSpace, pipeline_space
from automl_engine.dataset import Dataset, check_dataset
from automl_engine.evaluator import PipelineEvaluator, Resampling
from automl_engine.final_model import FinalChoice
from automl_engine.finishing import (
    ENSEMBLE_POOL,
    ENSEMBLE_RESERVED,
    ENSEMBLE_SHARE,
    FINISH_OVERHEAD_S,
    FinalModelChooser,
    Finishing,
    refit_estimate,
    save_final_model,
)
from automl_engine.fold_models import FOLDER as FOLD_MODELS
from automl_engine.fold_models import FoldModels, fold_key
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.metastore import metadata_resolver
from automl_engine.metrics import DEFAULT_METRIC, Metric, get_metric, normalised_regret
from automl_engine.recipe import (
    MEMORY_SOURCE,
    FidelitySpec,
    Recipe,
    data_fidelity,
    parse_resampling,
)
from automl_engine.run_folder import RunSummary, prepare_saving
from automl_engine.sources import load_dataset, parse_reference
from automl_spaces.pipeline_space import PipelineSpace


class Task(Protocol):
    """What a run searches, and everything about it that is not the search itself."""

    @property
    def description(self) -> TaskDescription:
        """What components are told about the task (meta-features, aliases, metric)."""

    @property
    def space(self) -> SearchSpace: ...

    @property
    def evaluator(self) -> Evaluator: ...

    @property
    def fidelity(self) -> Fidelity | None:
        """The budget range a strategy may race over (None: full budget only)."""

    @property
    def policy(self) -> Policy | None:
        """The policy the selector chose (``task.resampling: auto``); None otherwise."""

    def record(self, history: RunHistory) -> None:
        """Keep in the history what the trials were run on."""

    def use_folder(self, run_dir: Path) -> None:
        """The run's folder exists: the task may keep files there (a bagged search's fold
        models, :mod:`automl_engine.fold_models`)."""

    def use_threads(self, threads: int) -> None:
        """Each trial runs on ``threads`` threads (the executor's ``threads_per_trial``)."""

    def trial_stored(self, history: RunHistory) -> None:
        """A result was stored: the task may tidy what it keeps (the fold models of trials
        no longer among those the final model is chosen from)."""

    def finish(self, summary: RunSummary, history: RunHistory, finishing: Finishing) -> None:
        """Complete ``summary`` after the search (the best trial is already in it)."""

    def time_to_finish(
        self,
        best: StoredTrial | None,
        recipe: Recipe,
        others: Sequence[StoredTrial] | None = None,
        history: RunHistory | None = None,
    ) -> float:
        """Seconds :meth:`finish` is expected to take if the search ended with ``best``
        as its best trial (``others``: the next best, when known; ``history``: the run's,
        whose stored predictions say which of them an ensemble would take): the search
        stops that long before the run's wall time."""


def build_task(
    recipe: Recipe,
    plugins: Plugins,
    *,
    benchmark: Benchmark | None = None,
    dataset: Dataset | None = None,
    policy: Policy | None = None,
) -> Task:
    """The recipe's task: a :class:`LookupTask` when it names a benchmark (``benchmark`` is
    that benchmark already built, as a suite shares one), else a :class:`DataTask` on
    ``dataset`` when data is given, or on the data the recipe names. ``policy`` is the one a
    resumed run was started with."""
    if recipe.task.benchmark is None:
        if dataset is not None:
            return DataTask.given(recipe, plugins, dataset, policy)
        return DataTask.load(recipe, plugins, policy)
    if dataset is not None:
        raise RecipeError(
            "task.benchmark",
            recipe.task.benchmark.name,
            "a dataset task when data is given (run(dataset=...))",
            "A table-lookup benchmark brings its own datasets.",
        )
    return LookupTask.build(recipe, plugins, benchmark)


# ---------------------------------------------------------------------------------------------
# Real data
# ---------------------------------------------------------------------------------------------


@dataclass
class DataTask:
    """A search on real data: pipelines fitted and scored on the training rows, the final
    model refitted on them and scored on the test rows."""

    description: TaskDescription
    dataset: Dataset
    train: Dataset
    test: Dataset | None
    evaluator: PipelineEvaluator
    fidelity: Fidelity
    policy: Policy | None = None
    #: A hash of data handed in by the caller (None: the recipe's source loaded it), so
    #: that a resumed run recognises the data it searched.
    fingerprint: str | None = None
    #: The recipe's ensembler (None: the final model is one trial), which the search asks
    #: which trials an ensemble would take, to keep back the time of their refits.
    ensembler: Ensembler | None = None
    ensembler_name: str = ""

    @property
    def space(self) -> PipelineSpace:
        return self.evaluator.space

    @classmethod
    def load(cls, recipe: Recipe, plugins: Plugins, policy: Policy | None = None) -> DataTask:
        """The task on the dataset the recipe names, loaded by its source."""
        dataset, train, test, metric = load_task_data(recipe, plugins)
        return cls._build(recipe, plugins, dataset, train, test, metric, policy)

    @classmethod
    def given(
        cls, recipe: Recipe, plugins: Plugins, dataset: Dataset, policy: Policy | None = None
    ) -> DataTask:
        """The task on data handed in by the caller (``run(dataset=...)``), named after the
        recipe's ``memory:<name>`` reference, which says nothing about the data: its only
        alias is the OpenML name its ``info`` may carry."""
        dataset, train, test, metric = load_task_data(recipe, plugins, dataset)
        aliases = dataset_aliases(dataset, named_by_source=False)
        task = cls._build(recipe, plugins, dataset, train, test, metric, policy, aliases)
        task.fingerprint = dataset_fingerprint(dataset)
        return task

    @classmethod
    def _build(
        cls,
        recipe: Recipe,
        plugins: Plugins,
        dataset: Dataset,
        train: Dataset,
        test: Dataset | None,
        metric: Metric,
        stored: Policy | None,
        aliases: tuple[str, ...] | None = None,
    ) -> DataTask:
        """The pipeline space, the description and the evaluator on the training rows."""
        space = _pipeline_space(recipe, plugins, metric, dataset)
        description = TaskDescription(
            dataset=dataset.name,
            task=dataset.task,
            n_rows=train.n_rows,
            n_features=train.n_features,
            smallest_class_rows=smallest_class_rows(train),
            metric=metric.name,
            metafeatures=_metafeatures(recipe, plugins, train),
            aliases=dataset_aliases(dataset) if aliases is None else aliases,
            resolve_metadata=metadata_resolver(plugins),
        )
        policy = stored if stored is not None else choose_policy(recipe, plugins, description)
        fidelity = data_fidelity(recipe.search.fidelity)
        evaluator = PipelineEvaluator(
            train,
            space,
            metric,
            policy_resampling(policy) if policy else recipe.task.resampling,
            recipe.seed,
            fidelity=fidelity.kind,
        )
        prepare_saving()
        ref = recipe.ensemble
        ensembler = plugins.create("ensembler", ref.name, ref.params) if ref is not None else None
        return cls(
            description,
            dataset,
            train,
            test,
            evaluator,
            fidelity,
            policy,
            ensembler=ensembler,
            ensembler_name=recipe.ensemble.name if recipe.ensemble else "",
        )

    def use_threads(self, threads: int) -> None:
        """The pipelines are built to fit on ``threads`` threads (:attr:`BuildContext.threads`)."""
        self.evaluator.threads = threads

    def use_folder(self, run_dir: Path) -> None:
        """With ``resampling: {cv: k, bag: true}``, each full-fidelity trial's fold models
        are kept in the run folder, signed with this user's key."""
        if self.evaluator.resampling.bag:
            self.evaluator.fold_models = FoldModels(run_dir / FOLD_MODELS, fold_key())

    def trial_stored(self, history: RunHistory) -> None:
        """Only the fold models of the :data:`ENSEMBLE_POOL` best trials are kept: no other
        can become a member of the final model."""
        store = self.evaluator.fold_models
        if store is not None:
            store.keep_only(t.trial.id for t in history.best(ENSEMBLE_POOL))

    def record(self, history: RunHistory) -> None:
        described: dict[str, Any] = {
            "name": self.dataset.name,
            "task": self.dataset.task,
            "rows": self.dataset.n_rows,
            "features": self.dataset.n_features,
            "train_rows": self.train.n_rows,
        }
        if self.fingerprint is not None:
            described["fingerprint"] = self.fingerprint
        history.set_meta("dataset", described)

    def finish(self, summary: RunSummary, history: RunHistory, finishing: Finishing) -> None:
        """Choose the final model, refit it (within ``finishing.deadline``), score it on the
        test rows and save it."""
        chooser = FinalModelChooser(history, self.evaluator, self.ensembler, self.ensembler_name)
        choice = chooser.choose(finishing.deadline)
        if not choice.members:
            return
        summary.record_choice(choice)
        saved = {
            # what `automl predict` checks a CSV file's columns against
            "features": [str(c) for c in self.train.X.columns],
            # and which of them must hold numbers
            "numeric_features": [
                str(c) for c, kind in self.train.X.dtypes.items() if is_numeric_dtype(kind)
            ],
            "target": finishing.recipe.task.target or self.dataset.info.get("target"),
        }
        save_final_model(summary, chooser, choice, self.test, saved, finishing)

    def time_to_finish(
        self,
        best: StoredTrial | None,
        recipe: Recipe,
        others: Sequence[StoredTrial] | None = None,
        history: RunHistory | None = None,
    ) -> float:
        """Refitting ``best`` (:func:`~automl_engine.finishing.refit_estimate`), choosing and
        saving the model, and with an ensemble the refits of its likely other members, at
        most a share of the wall time (all of it when the others are not known). The likely
        members are those the ensembler chooses now among ``others`` from their stored
        predictions in ``history``; without the history, the :data:`ENSEMBLE_RESERVED` next
        best. Members that do not fit are left out, see :func:`save_final_model`."""
        seconds = FINISH_OVERHEAD_S
        if best is not None:
            seconds += refit_estimate(best, self.evaluator)
        if recipe.ensemble is not None and recipe.budget.wall_time is not None:
            share = ENSEMBLE_SHARE * recipe.budget.wall_time
            if others is not None:
                likely = self._likely_members(best, others, history, seconds + share)
                share = min(share, sum(refit_estimate(t, self.evaluator) for t in likely))
            seconds += share
        return seconds

    def _likely_members(
        self,
        best: StoredTrial | None,
        others: Sequence[StoredTrial],
        history: RunHistory | None,
        within: float,
    ) -> list[StoredTrial]:
        """The trials besides ``best`` an ensemble would take if the search ended now with
        ``within`` seconds left: the ensembler's choice from the stored predictions, less
        what finishing could not refit in that time, as finishing decides it (a Caruana
        selection often takes two or three of fifty; keeping back the refits of the ten next
        best ended runs 12-14 s early, and of members too slow to be refitted 8-15 s early,
        benchmarks/overrun.py), else the :data:`ENSEMBLE_RESERVED` next best."""
        rest = [t for t in others if best is None or t.trial.id != best.trial.id]
        if history is None or best is None or self.ensembler is None:
            return rest[:ENSEMBLE_RESERVED]
        chooser = FinalModelChooser(history, self.evaluator, self.ensembler, self.ensembler_name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a failing ensembler is reported when finishing
            choice = chooser.among([best, *rest], within)
        return [t for t in choice.members if t.trial.id != best.trial.id]


def cannot_resume_on(history: RunHistory, given: Dataset | None) -> str | None:
    """Why the run stored in ``history`` cannot be continued on the ``given`` data held in
    memory (None: the data the recipe names) -- checked before anything is built on it.
    A run on data held in memory resumes only with the same data (its stored fingerprint)."""
    stored = history.get_meta("dataset", {}).get("fingerprint")
    if given is None or stored == dataset_fingerprint(given):
        return None  # without data given, the recipe's memory: source says what is missing
    searched = "other data held in memory" if stored else "a dataset it loaded itself"
    return (
        f"with this data: the run searched {searched} (its stored fingerprint differs), so "
        "the trials already run would not be comparable with new ones"
    )


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
    if recipe.task.max_rows is not None:
        train = sample_rows(train, recipe.task.max_rows, split_seed)
    return dataset, train, test, metric


def sample_rows(dataset: Dataset, max_rows: int, seed: int) -> Dataset:
    """At most ``max_rows`` of the dataset's rows, a seeded sample (stratified for
    classification, every class kept when it can be), in their original order."""
    if dataset.n_rows <= max_rows:
        return dataset
    stratify = dataset.y if dataset.task == "classification" else None
    try:
        kept, _ = train_test_split(
            np.arange(dataset.n_rows), train_size=max_rows, random_state=seed, stratify=stratify
        )
    except ValueError:  # more classes than rows kept, or a class of one row
        kept, _ = train_test_split(
            np.arange(dataset.n_rows), train_size=max_rows, random_state=seed
        )
    return _rows(dataset, np.sort(kept), f"{max_rows} rows")


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


def smallest_class_rows(dataset: Dataset) -> int | None:
    """How many rows the rarest class has (None for regression)."""
    if dataset.task != "classification":
        return None
    _, counts = np.unique(np.asarray(dataset.y, dtype=str), return_counts=True)
    return int(counts.min())


def dataset_aliases(dataset: Dataset, named_by_source: bool = True) -> tuple[str, ...]:
    """The lower-case names ``dataset`` may have in meta-data: the source's own name for it
    (``german`` of ``keel:german``; not when a caller chose the name, ``named_by_source``
    False) and, where the source knows it, its OpenML name."""
    _, _, reference = dataset.name.partition(":")
    own = reference if named_by_source else ""
    names = [own, str(dataset.info.get("openml_name", ""))]
    return tuple(dict.fromkeys(n.lower() for n in names if n))


def dataset_fingerprint(dataset: Dataset) -> str:
    """A hash of the features (values, column names, dtypes) and the target: how a resumed
    run recognises the data held in memory that it searched before."""
    return str(joblib.hash((dataset.X, np.asarray(dataset.y), dataset.task)))


def _pipeline_space(
    recipe: Recipe, plugins: Plugins, metric: Metric, dataset: Dataset
) -> PipelineSpace:
    """The recipe's space, which must be a pipeline space for the dataset's task."""
    assert recipe.space is not None
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
    return space


def _space_params(recipe: Recipe, plugins: Plugins, metric: Metric) -> dict[str, Any]:
    """The space's params, plus the run's metric name when its factory takes a ``metric``
    parameter and the recipe does not set one: a space may suit its defaults to the metric
    (``autosklearn-classification`` weights classes by default under balanced accuracy)."""
    assert recipe.space is not None
    params = dict(recipe.space.params)
    if "metric" in plugins.get("space", recipe.space.name).parameters():  # named only
        params.setdefault("metric", metric.name)
    return params


def _metafeatures(recipe: Recipe, plugins: Plugins, data: Dataset) -> dict[str, float]:
    if recipe.metafeatures is None:
        return {}
    provider = plugins.create(
        "metafeature_provider", recipe.metafeatures.name, recipe.metafeatures.params
    )
    return dict(provider.compute(data.X, np.asarray(data.y), data.task))


def choose_policy(recipe: Recipe, plugins: Plugins, task: TaskDescription) -> Policy | None:
    """The policy selector's choice for ``task`` when the recipe says ``resampling: auto``.

    It is told the search's wall time. A resumed run does not ask again (its budget may
    have grown, and the selector's answer with it): it keeps the policy its trials were run
    with (:func:`~automl_engine.run_folder.stored_policy`).
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


def policy_resampling(policy: Policy) -> Resampling:
    """The policy's resampling, checked as a recipe's would be."""
    try:
        return parse_resampling(dict(policy.resampling))
    except RecipeError as error:
        raise PluginError(f"policy {policy.name!r} has an invalid resampling: {error}") from None


# ---------------------------------------------------------------------------------------------
# A table-lookup benchmark
# ---------------------------------------------------------------------------------------------


@dataclass
class LookupTask:
    """A search on one dataset of a table-lookup benchmark: a trial's loss is read from the
    benchmark's table, and the run ends with how far its best is from the best stored."""

    description: TaskDescription
    space: SearchSpace
    evaluator: Evaluator
    fidelity: Fidelity | None
    name: str
    benchmark: Benchmark
    #: The dataset's id in the benchmark.
    dataset_id: str

    @property
    def policy(self) -> Policy | None:
        """None: a benchmark's losses were measured with its own resampling."""
        return None

    @classmethod
    def build(
        cls, recipe: Recipe, plugins: Plugins, benchmark: Benchmark | None = None
    ) -> LookupTask:
        """The benchmark's pool on the recipe's dataset, and its look-up evaluator;
        ``benchmark`` is the recipe's, already built."""
        ref = recipe.task.benchmark
        assert ref is not None
        refuse_what_needs_data(recipe)
        if benchmark is None:
            benchmark = plugins.create("benchmark", ref.name, ref.params)
        dataset = _benchmark_dataset(recipe, benchmark)
        description = TaskDescription(
            dataset=f"{ref.name}:{dataset}",
            task="benchmark",
            n_rows=0,
            n_features=0,
            metric=benchmark.metric,
            aliases=(dataset.lower(),),
            benchmark=ref.name,
            resolve_metadata=metadata_resolver(plugins),
        )
        fidelity = _narrowed(recipe.search.fidelity, benchmark.fidelity(dataset), ref.name)
        return cls(
            description,
            benchmark.space(dataset),
            benchmark.evaluator(dataset, recipe.seed),
            fidelity,
            ref.name,
            benchmark,
            dataset,
        )

    def record(self, history: RunHistory) -> None:
        history.set_meta("benchmark", {"name": self.name, "dataset": self.dataset_id})

    def use_folder(self, run_dir: Path) -> None:
        """A table lookup keeps nothing but its history."""

    def use_threads(self, threads: int) -> None:
        """A table lookup fits nothing."""

    def trial_stored(self, history: RunHistory) -> None:
        """Nothing to tidy."""

    def finish(self, summary: RunSummary, history: RunHistory, finishing: Finishing) -> None:
        """The best trial, and its normalised regret on the benchmark's stored losses."""
        best = history.best(1)
        if best:
            summary.record_choice(FinalChoice(best, np.ones(1)))
        found: dict[str, Any] = {"name": self.name, "dataset": self.dataset_id}
        loss_range = self.benchmark.loss_range(self.dataset_id)
        if loss_range is not None:
            found["best_possible"], found["worst_possible"] = loss_range
            if summary.best_loss is not None:
                regret = normalised_regret(summary.best_loss, *loss_range)
                found["normalised_regret"] = float(regret)
        summary.benchmark = found

    def time_to_finish(
        self,
        best: StoredTrial | None,
        recipe: Recipe,
        others: Sequence[StoredTrial] | None = None,
        history: RunHistory | None = None,
    ) -> float:
        """Nothing to refit: the regret is read from the table."""
        return 0.0


def refuse_what_needs_data(recipe: Recipe) -> None:
    """A benchmark task is one dataset of stored losses: no suite here, no meta-features,
    no ensemble."""
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


def suite_datasets(recipe: Recipe, benchmark: Benchmark) -> list[str]:
    """The datasets of the recipe's suite (``task.suite``, a split of the benchmark), or a
    recipe error naming the splits there are."""
    split = recipe.task.suite
    if split is None:
        raise RecipeError("task.suite", split, "a benchmark task with a suite (split name)")
    try:
        datasets = benchmark.datasets(split)
    except AutoMLError as error:
        raise RecipeError("task.suite", split, f"one of {benchmark.splits()}", str(error)) from None
    if not datasets:
        raise RecipeError("task.suite", split, "a split with datasets (this one has none)")
    return datasets


def _benchmark_dataset(recipe: Recipe, benchmark: Benchmark) -> str:
    """The recipe's dataset, which must be one of the benchmark's."""
    ref, dataset = recipe.task.benchmark, recipe.task.dataset
    assert ref is not None and dataset is not None
    known = benchmark.datasets()
    if dataset not in known:
        close = difflib.get_close_matches(dataset, known, n=3)
        raise RecipeError(
            "task.dataset",
            dataset,
            f"one of the {len(known)} datasets of benchmark {ref.name!r}",
            f"Did you mean {', '.join(map(repr, close))}?" if close else "",
        )
    return dataset


def _narrowed(wanted: FidelitySpec, offered: Fidelity | None, name: str) -> Fidelity | None:
    """The benchmark's own budget range, narrowed by the recipe's ``search.fidelity``."""
    if wanted == type(wanted)():
        return offered
    if offered is None:
        raise RecipeError(
            "search.fidelity", asdict(wanted), f"nothing: benchmark {name!r} has no fidelities"
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
