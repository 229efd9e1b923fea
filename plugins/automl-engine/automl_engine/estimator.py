"""scikit-learn estimators that run a whole search: :class:`AutoMLClassifier` and
:class:`AutoMLRegressor`.

``fit(X, y)`` turns the data into a :class:`~automl_engine.dataset.Dataset`, builds a recipe
(a named recipe, a file or a mapping, with the constructor's arguments written over it) and
runs it through :func:`automl_engine.runner.run`, exactly as ``automl run`` would, so the
search, the history, the ensemble and the refit are the core's, not a second implementation.
What the estimator adds is scikit-learn's contract (parameters stored by the constructor,
fitted attributes with a trailing underscore, input checks, tags) and a time budget counted
from the start of ``fit``: see :func:`split_time_budget`.

Plugins are reached only through :func:`~automl_core.plugins.load_plugins`; this module never
imports one.
"""

from __future__ import annotations

import copy
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import joblib
import numpy as np
import pandas as pd
from pandas.api.types import is_object_dtype
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from automl_core.errors import AutoMLError
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import pipeline_space
from automl_engine.dataset import Dataset
from automl_engine.history import RunHistory, StoredTrial, rank_key
from automl_engine.model import TrainedModel
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import MEMORY_SOURCE, Recipe, named_recipe, parse_recipe, read_recipe
from automl_engine.run_folder import HISTORY_FILE, RunSummary, how_trials_ended, load_saved_model
from automl_engine.runner import run
from automl_engine.wall_time import WallTimeTooShort
from automl_spaces.pipeline_space import PipelineSpace

# ---------------------------------------------------------------------------------------------
# The time budget
# ---------------------------------------------------------------------------------------------

#: ``fit`` promises to end within this fraction of its budget or this many seconds,
#: whichever is larger.
TOLERANCE_FRACTION = 0.1
MIN_TOLERANCE_S = 5.0
#: The refit of the best trial is planned to fit in this share of the budget (at least
#: ``MIN_REFIT_S``, at most half) plus the tolerance: it sizes the per-trial limit.
REFIT_FRACTION = 0.1
MIN_REFIT_S = 2.0
#: A trial may take at most this many seconds, however small the budget.
MIN_TRIAL_S = 1.0
#: Seconds kept after the run for the leaderboard and removing a temporary run folder (the
#: model is the run's own, in memory: never read back from the folder).
FINISH_S = 0.5


@dataclass(frozen=True)
class TimeSplit:
    """How ``fit`` spends its ``time_budget`` (seconds)."""

    #: The run's wall time (``budget.wall_time``), counted from the start of ``fit``: the
    #: set-up, the search, the ensemble and the refit (see :func:`automl_engine.runner.run`).
    run: float
    #: The limit of one trial (``budget.trial_time``), enforced by the ``processes`` executor.
    trial: float
    #: How far past the budget ``fit`` may end (the refit of the best member is never cut).
    tolerance: float


def split_time_budget(time_budget: float) -> TimeSplit:
    """Divide ``time_budget`` between the run and reading its results back, and size the
    limit of one trial.

    The run stops its search early enough to refit the best trial by its estimate and
    kills the trials still running (:mod:`automl_engine.loop`). What can still run over is a
    refit slower than its estimate: the best trial's is never cut. Its trial took at most
    ``trial`` seconds on two thirds of the rows (a 0.33 holdout), so its refit takes about
    1.5 times that, twice with a margin for models that grow faster than linearly. ``trial``
    is therefore a third of a tenth of the budget (at least 2 s) plus the tolerance (for 30
    s: 2.7 s per trial; for 300 s: 20 s; auto-sklearn's default is a tenth of the budget).
    """
    refit = min(max(MIN_REFIT_S, REFIT_FRACTION * time_budget), 0.5 * time_budget)
    tolerance = max(MIN_TOLERANCE_S, TOLERANCE_FRACTION * time_budget)
    trial = max(MIN_TRIAL_S, (refit + tolerance) / 3)
    return TimeSplit(max(time_budget - FINISH_S, 0.5 * time_budget), trial, tolerance)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def _text_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns with numbers become numeric; the other object columns hold their
    values as text (missing values stay missing), so that a column mixing types (``1``,
    ``"a"``) is one categorical column whose categories compare, at fit and predict alike."""
    frame = frame.infer_objects()
    for column in frame.columns:
        values = frame[column]
        if is_object_dtype(values.dtype):
            frame[column] = values.where(values.isna(), values.astype(str))
    return frame


# ---------------------------------------------------------------------------------------------
# The estimators
# ---------------------------------------------------------------------------------------------


class NoModelError(AutoMLError):
    """The search ended without any trial that could be fitted."""


class _AutoMLEstimator(BaseEstimator):
    """What the classifier and the regressor share; see :class:`AutoMLClassifier`."""

    #: ``classification`` or ``regression``.
    _task: ClassVar[str]
    #: The named recipe used when ``recipe`` is None.
    _default_recipe: ClassVar[str]

    def __init__(
        self,
        recipe: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        time_budget: float | None = 300,
        metric: str | None = None,
        seed: int = 0,
        n_jobs: int = 1,
        max_trials: int | None = None,
        ensemble_size: int = 50,
        output_dir: str | os.PathLike[str] | None = None,
        trial_time: float | None = None,
        trial_memory_mb: int | None = None,
    ) -> None:
        self.recipe = recipe
        self.time_budget = time_budget
        self.metric = metric
        self.seed = seed
        self.n_jobs = n_jobs
        self.max_trials = max_trials
        self.ensemble_size = ensemble_size
        self.output_dir = output_dir
        self.trial_time = trial_time
        self.trial_memory_mb = trial_memory_mb

    # -- scikit-learn's contract -------------------------------------------------------------
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # the spaces impute
        tags.input_tags.string = True  # text columns are categorical features
        tags.input_tags.categorical = True
        # Under a time budget, or with trials in parallel, two fits may search differently.
        tags.non_deterministic = self.max_trials is None or self.n_jobs != 1
        return tags

    def fit(self, X: Any, y: Any) -> _AutoMLEstimator:
        """Search for the best pipeline (or ensemble) for ``X``, ``y`` within the budget,
        refit it on all the rows and keep it as ``model_``."""
        started = time.monotonic()
        self._time_budget()  # checked before anything runs
        frame, target = self._fit_input(X, y)
        plugins = load_plugins()
        raw = self._recipe_to_run(plugins, started)
        recipe = parse_recipe(raw)
        dataset = Dataset(raw["task"]["dataset"], frame, target, self._task)
        with _run_folder(self.output_dir, recipe.name) as (run_dir, kept):
            try:
                summary = run(recipe, run_dir, plugins=plugins, dataset=dataset, started=started)
            except WallTimeTooShort as error:  # in the words of the user's own argument
                raise AutoMLError(
                    f"time_budget={self.time_budget:g}s is too short for a fit: "
                    f"{error.detail()} (the run is given {error.wall_time:g}s of it, the rest "
                    "kept for the leaderboard). Give a larger time_budget"
                ) from None
            self._keep_results(run_dir, summary, recipe, plugins)
            self.run_dir_ = run_dir if kept else None
        self.recipe_ = raw
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of the fitted model, in the labels (or units) of ``y``."""
        return np.asarray(self._model().predict(self._predict_input(X)))

    def leaderboard(self) -> pd.DataFrame:
        """Every trial of the search, best first: ``rank``, ``trial``, ``loss`` (lower is
        better), the metric's score, ``status``, ``budget`` (fraction of full fidelity),
        ``duration`` (seconds), ``origin``, the component chosen in each stage of the space,
        and ``ensemble_weight`` in the final model (0 when not in it)."""
        check_is_fitted(self, "model_")
        return self.leaderboard_.copy()

    def report(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the run's report (``automl report``: one HTML page and its figures) and
        return the page's path: ``report/index.html`` in ``run_dir_``, or ``index.html`` in
        ``path``. Needs a fit with ``output_dir`` (a temporary run folder is gone after
        ``fit``) and the automl-report plugin, found through the commands plugins register,
        as the core never imports a plugin; without it the error names what to install."""
        check_is_fitted(self, "model_")
        if self.run_dir_ is None:
            raise AutoMLError(
                "report() reads the run folder, which a fit without output_dir removes: fit "
                "with output_dir=... to keep it"
            )
        from automl_engine.cli import run_plugin_command

        folder = Path(path) if path is not None else self.run_dir_ / "report"
        run_plugin_command(["report", str(self.run_dir_), "--out", str(folder), "--quiet"])
        return folder / "index.html"

    def _time_budget(self) -> float | None:
        """``time_budget`` in seconds, checked: it is split before anything runs."""
        budget = self.time_budget
        if budget is None:
            return None
        if isinstance(budget, bool) or not isinstance(budget, (int, float, np.number)):
            raise TypeError(f"time_budget must be a number of seconds or None, got {budget!r}")
        if not math.isfinite(budget) or budget <= 0:
            raise ValueError(f"time_budget must be a positive number of seconds, got {budget!r}")
        return float(budget)

    # -- input ---------------------------------------------------------------------------
    def _fit_input(self, X: Any, y: Any) -> tuple[pd.DataFrame, np.ndarray]:
        """The checked features as a DataFrame with the names the model will know them by,
        and the checked target; sets ``n_features_in_`` and ``feature_names_in_``."""
        array = _check_X(X, self, min_samples=2)
        validate_data(self, X, y, skip_check_array=True)  # feature names, n_features_in_, y
        target = self._check_y(y)
        check_consistent_length(array, target)
        return self._frame(X, array), target

    def _check_y(self, y: Any) -> np.ndarray:
        checked = check_array(
            y,
            ensure_2d=False,
            dtype="numeric" if self._task == "regression" else None,
            input_name="y",
            estimator=self,
        )
        return column_or_1d(checked, warn=True)

    def _predict_input(self, X: Any) -> pd.DataFrame:
        check_is_fitted(self, "model_")
        array = _check_X(X, self, min_samples=1)
        validate_data(self, X, reset=False, skip_check_array=True)  # column count and names
        return self._frame(X, array)

    def _frame(self, X: Any, array: Any) -> pd.DataFrame:
        """``X`` as the model's DataFrame: a DataFrame keeps its dtypes (categorical and
        text columns stay so) and is renamed by position, an array becomes numeric columns
        where it can."""
        frame = X.copy() if isinstance(X, pd.DataFrame) else pd.DataFrame(array)
        frame.columns = self._column_names()
        return _text_categories(frame.reset_index(drop=True))

    def _column_names(self) -> list[str]:
        """The string column names of ``fit``'s DataFrame, else ``x0``, ``x1``..."""
        if hasattr(self, "feature_names_in_"):
            names = [str(n) for n in self.feature_names_in_]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"X has repeated column names {repeated}; name each once")
            return names
        return [f"x{i}" for i in range(self.n_features_in_)]

    # -- the recipe ------------------------------------------------------------------------
    def _recipe_to_run(self, plugins: Plugins, started: float) -> dict[str, Any]:
        """The recipe named, read or given, with this estimator's arguments written over it
        (the estimator's data, its task, its budget, seed, workers and ensemble size)."""
        raw = self._base_recipe(plugins)
        raw["task"] = self._task_section(raw.get("task"))
        # a trial can be stopped at a time or memory limit only in a process of its own
        limits = (self._time_budget(), self.trial_time, self.trial_memory_mb)
        default = "sequential" if limits == (None,) * 3 else "processes"
        raw["executor"] = self._executor_section(raw.get("executor", default), plugins)
        raw["budget"] = self._budget_section(raw.get("budget"), plugins, raw, started)
        raw["seed"] = _plain(self.seed)
        ensemble = self._ensemble_section(raw.get("ensemble"), plugins)
        if ensemble is None:
            raw.pop("ensemble", None)
        else:
            raw["ensemble"] = ensemble
        return raw

    def _base_recipe(self, plugins: Plugins) -> dict[str, Any]:
        if self.recipe is None:
            return named_recipe(self._default_recipe, plugins)
        if isinstance(self.recipe, Mapping):
            return copy.deepcopy(dict(self.recipe))
        if isinstance(self.recipe, (str, os.PathLike)):
            return read_recipe(os.fspath(self.recipe), plugins)
        raise TypeError(
            "recipe must be None, a registered recipe name, the path of a YAML file or a "
            f"mapping; got {type(self.recipe).__name__}"
        )

    def _task_section(self, task: Any) -> dict[str, Any]:
        """The data is fit's: the recipe's dataset, target and test split do not apply; its
        resampling and metric do, unless ``metric`` is given."""
        task = dict(task) if isinstance(task, Mapping) else {}
        if "benchmark" in task:
            raise ValueError(
                f"recipe {self.recipe!r} is a table-lookup benchmark task "
                f"(task.benchmark: {task['benchmark']!r}); {type(self).__name__} needs a "
                "recipe that searches a pipeline space on data"
            )
        section: dict[str, Any] = {
            "dataset": f"{MEMORY_SOURCE}:{type(self).__name__}",
            "type": self._task,
        }
        metric = self.metric if self.metric is not None else task.get("metric")
        if metric is not None:
            section["metric"] = metric
        if "resampling" in task:
            section["resampling"] = task["resampling"]
        return section

    def _budget_section(
        self, budget: Any, plugins: Plugins, raw: Mapping[str, Any], started: float
    ) -> dict[str, Any]:
        """``time_budget`` split into the search's wall time and a per-trial limit (the
        limit only where the executor enforces it); ``max_trials`` and the limits given
        replace the recipe's."""
        section = dict(budget) if isinstance(budget, Mapping) else {}
        seconds = self._time_budget()
        if seconds is not None:
            split = split_time_budget(seconds)
            section["wall_time"] = round(split.run, 3)
            if _enforces_limits(raw.get("executor"), self.n_jobs, plugins):
                recipe_limit = section.get("trial_time")
                section["trial_time"] = round(
                    split.trial if recipe_limit is None else min(recipe_limit, split.trial), 3
                )
        if self.max_trials is not None:
            section["trials"] = _plain(self.max_trials)
        if self.trial_time is not None:
            section["trial_time"] = _plain(self.trial_time)
        if self.trial_memory_mb is not None:
            section["trial_memory_mb"] = _plain(self.trial_memory_mb)
        return section

    def _executor_section(self, executor: Any, plugins: Plugins) -> Any:
        """``n_jobs`` workers for an executor that takes ``workers`` (``processes``); with
        ``sequential`` and ``n_jobs`` 1 the trials stay in this process, with more they move
        to ``processes``."""
        name, params = _component(executor, "name")
        workers = int(joblib.effective_n_jobs(self.n_jobs))
        if name == "sequential":
            if workers == 1:
                return executor
            return {"name": "processes", "params": {"workers": workers}}
        if _takes(plugins, "executor", name, "workers"):
            return {"name": name, "params": {**params, "workers": workers}}
        if workers != 1:
            raise ValueError(
                f"n_jobs={self.n_jobs} cannot be applied: executor {name!r} has no 'workers' "
                "parameter; leave n_jobs=1 and size the executor in the recipe"
            )
        return executor

    def _ensemble_section(self, ensemble: Any, plugins: Plugins) -> Any:
        """No ensemble for ``ensemble_size`` 0 or 1 (the single best pipeline); otherwise
        the recipe's ensembler, given ``size`` when it takes one."""
        if self.ensemble_size is None or self.ensemble_size <= 1 or ensemble is None:
            return None
        name, params = _component(ensemble, "ensembler")
        if _takes(plugins, "ensembler", name, "size"):
            return {"ensembler": name, "params": {**params, "size": int(self.ensemble_size)}}
        return ensemble

    # -- results ---------------------------------------------------------------------------
    def _keep_results(
        self, run_dir: Path, summary: RunSummary, recipe: Recipe, plugins: Plugins
    ) -> None:
        """Read what the run left (the model, the trials) into fitted attributes, so that
        nothing depends on the run folder afterwards."""
        with RunHistory(run_dir / HISTORY_FILE) as history:
            trials = history.trials()
        if summary.model_path is None:
            raise NoModelError(
                f"no pipeline could be fitted: {how_trials_ended(trials, summary.stopped_because)}"
                ". A longer time_budget or trial_time, or a recipe with other components, "
                "may help"
            )
        if summary.model is not None:  # the model the run saved, as it is in memory
            self.model_: TrainedModel = summary.model
        else:  # a plugin's finishing phase (run_finishing) may return a summary without it
            allowed = declared_model_types(plugins)
            self.model_ = load_saved_model(run_dir, allowed=allowed)["model"]
        self.run_summary_ = summary
        space = _space_of(recipe, plugins)
        self.leaderboard_ = leaderboard_frame(trials, space, summary.metric, summary.ensemble)

    def _model(self) -> TrainedModel:
        check_is_fitted(self, "model_")
        return self.model_


class AutoMLClassifier(ClassifierMixin, _AutoMLEstimator):
    """A classifier that searches pipelines (and an ensemble of them) within a time budget.

    Parameters:
        recipe: a registered recipe name (``automl plugins --kind recipe``), the path of a
            YAML recipe or a mapping; None is ``default-classification``. The recipe's
            dataset, target and test split are replaced by the data given to ``fit``.
        time_budget: seconds for the whole ``fit`` (search, ensemble, refit); ``fit`` ends
            within 10% or 5 s of it, whichever is larger. None: the recipe's budget.
        metric: what the search optimises (``task.metric``); None keeps the recipe's.
        seed: seeds the search, the splits and the pipelines (``seed``).
        n_jobs: trials run at once (the ``processes`` executor's ``workers``); -1 for every
            core.
        max_trials: stop after this many trials (``budget.trials``).
        ensemble_size: the recipe's ensembler's ``size``; 0 or 1 keeps the single best
            pipeline instead.
        output_dir: a folder to keep the run folder in (``run_dir_``, readable by ``automl
            show`` and ``automl predict``); None uses a temporary folder, removed after fit.
        trial_time: seconds one trial may take; None derives it from ``time_budget``.
        trial_memory_mb: memory one trial may use (``budget.trial_memory_mb``).

    Fitted attributes: ``model_`` (the :class:`~automl_engine.model.TrainedModel`),
    ``classes_``, ``n_features_in_``, ``feature_names_in_`` (for a DataFrame with string
    column names), ``run_summary_``, ``run_dir_`` (None without ``output_dir``) and
    ``recipe_`` (the recipe that was run).
    """

    _task = "classification"
    _default_recipe = "default-classification"

    def __init__(
        self,
        recipe: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        time_budget: float | None = 300,
        metric: str | None = "balanced_accuracy",
        seed: int = 0,
        n_jobs: int = 1,
        max_trials: int | None = None,
        ensemble_size: int = 50,
        output_dir: str | os.PathLike[str] | None = None,
        trial_time: float | None = None,
        trial_memory_mb: int | None = None,
    ) -> None:
        super().__init__(
            recipe,
            time_budget,
            metric,
            seed,
            n_jobs,
            max_trials,
            ensemble_size,
            output_dir,
            trial_time,
            trial_memory_mb,
        )

    def fit(self, X: Any, y: Any) -> AutoMLClassifier:
        """Search for the best pipeline (or ensemble) for ``X``, ``y`` within the budget,
        refit it on all the rows and keep it as ``model_``."""
        super().fit(X, y)
        assert self.model_.label_encoder is not None
        self.classes_ = self.model_.label_encoder.classes_
        return self

    def _check_y(self, y: Any) -> np.ndarray:
        target = super()._check_y(y)
        check_classification_targets(target)
        classes = pd.unique(pd.Series(target))
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y; got 1 class ({classes[0]!r})"
            )
        return target

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, one column per class of ``classes_``."""
        return self._model().predict_proba(self._predict_input(X))


class AutoMLRegressor(RegressorMixin, _AutoMLEstimator):
    """A regressor that searches pipelines (and an ensemble of them) within a time budget.

    The parameters and fitted attributes are :class:`AutoMLClassifier`'s (without
    ``classes_``); ``recipe=None`` is ``default-regression`` and ``metric`` defaults to
    ``r2``.
    """

    _task = "regression"
    _default_recipe = "default-regression"

    def __init__(
        self,
        recipe: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        time_budget: float | None = 300,
        metric: str | None = "r2",
        seed: int = 0,
        n_jobs: int = 1,
        max_trials: int | None = None,
        ensemble_size: int = 50,
        output_dir: str | os.PathLike[str] | None = None,
        trial_time: float | None = None,
        trial_memory_mb: int | None = None,
    ) -> None:
        super().__init__(
            recipe,
            time_budget,
            metric,
            seed,
            n_jobs,
            max_trials,
            ensemble_size,
            output_dir,
            trial_time,
            trial_memory_mb,
        )

    def fit(self, X: Any, y: Any) -> AutoMLRegressor:
        """Search for the best pipeline (or ensemble) for ``X``, ``y`` within the budget,
        refit it on all the rows and keep it as ``model_``."""
        super().fit(X, y)
        return self


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _check_X(X: Any, estimator: BaseEstimator, min_samples: int) -> Any:
    """scikit-learn's checks of ``X`` (2-d, not empty, not sparse, no complex values, no
    infinity; NaN allowed), whatever the column types; the checked array is returned for
    non-DataFrames, a DataFrame is only checked."""
    return check_array(
        X,
        dtype=None,
        ensure_all_finite="allow-nan",
        ensure_min_samples=min_samples,
        estimator=estimator,
    )


def _plain(value: Any) -> Any:
    """A NumPy number as the Python number it holds: recipes are plain data (YAML, JSON),
    and their checks report a wrong type (``seed: 1.5``) rather than have it converted."""
    return value.item() if isinstance(value, np.generic) else value


@contextmanager
def _run_folder(output_dir: Any, name: str) -> Iterator[tuple[Path, bool]]:
    """A fresh run folder: under ``output_dir`` (kept, unique per fit so that clones can fit
    side by side), or a temporary one removed afterwards. Yields (folder, kept)."""
    if output_dir is None:
        folder = Path(tempfile.mkdtemp(prefix="automl-fit-"))
        try:
            yield folder, False
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    parent = Path(output_dir)
    parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    yield Path(tempfile.mkdtemp(prefix=f"{name}-{stamp}-", dir=parent)), True


def _component(value: Any, name_key: str) -> tuple[str, dict[str, Any]]:
    """A recipe component in either form (``name`` or ``{name_key: name, params}``) as
    (name, params); an ill-formed one is left for the recipe checks to report."""
    if isinstance(value, Mapping):
        return str(value.get(name_key)), dict(value.get("params") or {})
    return str(value), {}


def _takes(plugins: Plugins, kind: str, name: str, parameter: str) -> bool:
    """Whether the registered component accepts ``parameter``; False for a name that is not
    registered (the recipe checks report it)."""
    try:
        registration = plugins.get(kind, name)
    except AutoMLError:
        return False
    return registration.accepts(parameter)


def _enforces_limits(executor: Any, n_jobs: int, plugins: Plugins) -> bool:
    """Whether the executor the run will use can stop a trial at its time limit."""
    name, _ = _component(executor if executor is not None else "sequential", "name")
    if name == "sequential" and joblib.effective_n_jobs(n_jobs) != 1:
        name = "processes"
    try:
        factory = plugins.get("executor", name).obj
    except AutoMLError:
        return False
    return bool(getattr(factory, "enforces_limits", False))


def _space_of(recipe: Recipe, plugins: Plugins) -> PipelineSpace | None:
    assert recipe.space is not None
    space = plugins.create("space", recipe.space.name, recipe.space.params)
    return pipeline_space(space)


def leaderboard_frame(
    trials: list[StoredTrial],
    space: PipelineSpace | None,
    metric: str,
    ensemble: Mapping[int, float],
) -> pd.DataFrame:
    """The trials as a table, best first (see :meth:`AutoMLClassifier.leaderboard`)."""
    stages = [s.name for s in space.stages if s.choice] if space is not None else []
    rows = []
    for rank, stored in enumerate(sorted(trials, key=rank_key), 1):
        row: dict[str, Any] = {
            "rank": rank,
            "trial": stored.trial.id,
            "loss": stored.loss if math.isfinite(stored.loss) else math.nan,
            metric: stored.metrics.get(metric, math.nan),
            "status": stored.status,
            "budget": 1.0 if stored.trial.budget is None else stored.trial.budget,
            "duration": math.nan if stored.duration is None else stored.duration,
            "origin": stored.trial.origin,
        }
        row.update(_chosen_components(space, stored.trial.config, stages))
        row["ensemble_weight"] = float(ensemble.get(stored.trial.id, 0.0))
        rows.append(row)
    columns = ["rank", "trial", "loss", metric, "status", "budget", "duration", "origin"]
    return pd.DataFrame(rows, columns=[*columns, *stages, "ensemble_weight"])


def _chosen_components(
    space: PipelineSpace | None, config: Mapping[str, Any], stages: list[str]
) -> dict[str, str | None]:
    if space is None:
        return {}
    try:
        chosen = space.choices(config)
    except Exception:  # a configuration the space no longer accepts: show what is known
        return dict.fromkeys(stages)
    return {stage: chosen[stage][0].name for stage in stages}
