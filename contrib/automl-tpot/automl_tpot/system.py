"""TPOT 1.x as a whole-system peer (``automl ablate --peer tpot``).

TPOT gets what a run of the same ablation cell gets and optimises the run's own metric:

* **Metric.** TPOT's single objective (``scorers=[scorer]``, ``scorers_weights=[1]``) is a
  scikit-learn scorer built from the run's metric: ``-metric.loss`` (the core's loss, negated
  because TPOT maximises) on TPOT's label codes and ``predict_proba``, or on ``predict`` for
  regression. So TPOT's cross-validated scores, its selection and its final choice follow
  the run's metric, not TPOT's default (``roc_auc_ovr`` or the MSE).
* **Budget.** TPOT's search ends ``time_budget * (1 - reserve)`` seconds after ``fit``
  began (TPOT would count its ``max_time_mins`` from after its own set-up, and start a
  generation it has no time to evaluate: see :func:`deadline_evolver`); ``max_eval_time_mins``
  (one pipeline's cross-validation) defaults to a tenth of the budget, at most TPOT's own
  10 minutes. After its deadline TPOT waits for the next evaluation to finish or time out
  (checking every ``max_eval_time_mins``) and refits the chosen pipeline on all rows: the
  reserve is for that.
* **Cores and seed.** TPOT evaluates pipelines on a Dask ``LocalCluster`` of ``n_jobs``
  single-threaded workers that this system starts and closes (threads by default: process
  workers take several seconds to start, as each imports TPOT); ``seed`` is TPOT's
  ``random_state``.
* **Data.** TPOT's own preprocessing one-hot encodes only ``object`` columns, so the frame
  goes through a fixed ``ColumnTransformer`` (numbers: median imputation; ``category`` and
  ``object`` columns: most-frequent imputation, then one-hot), passed to TPOT as its
  ``preprocessing`` step: fitted once before TPOT's cross-validation, as TPOT does, and the
  first step of the returned pipeline.
* **Labels.** TPOT gets the labels as codes ``0..m-1`` (indices into the ``m`` sorted labels
  of ``y``), so it never re-encodes them; the scorer scores on those codes. The returned model
  follows scikit-learn: ``classes_`` are the labels of ``y`` and ``predict_proba`` has a
  column per label in that order. The core places the columns among all the dataset's classes.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import inspect
import logging
import math
import numbers
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from automl_bench.contracts import System, SystemResult

from automl_engine.evaluator import scores_on_codes
from automl_engine.metrics import Metric

log = logging.getLogger(__name__)

SEARCH_SPACES = ("linear", "linear-light", "graph", "graph-light")
#: TPOT's own limit on one evaluation, in minutes (TPOTClassifier's default).
TPOT_MAX_EVAL_MINS = 10.0
#: The name of the scorer, and so of TPOT's objective column in ``evaluated_individuals``.
SCORE_COLUMN = "neg_loss"
#: How much longer TPOT takes to make a generation's offspring than to generate as many new
#: individuals (3 to 11 times in a few runs on wine while this adapter was written; not
#: re-measured by the tests): the first estimate of the time the next generation's offspring
#: take, before one has been made.
OFFSPRING_PER_INITIAL = 5.0
OUTPUT_FILE = "tpot.out"
INDIVIDUALS_FILE = "tpot_individuals.csv"


def import_tpot() -> types.ModuleType:
    """``import tpot``. TPOT imports ``stopit``, whose ``__init__`` imports ``pkg_resources``
    (gone from setuptools >= 81) only to read its own version inside a ``try``: where
    ``pkg_resources`` is missing, a stand-in module is in ``sys.modules`` while ``stopit`` is
    imported, and removed again."""
    if "stopit" not in sys.modules and importlib.util.find_spec("pkg_resources") is None:
        stand_in = types.ModuleType("pkg_resources")

        def get_distribution(name: str) -> Any:
            raise LookupError(name)  # stopit then sets its __version__ to 'unknown'

        stand_in.get_distribution = get_distribution  # type: ignore[attr-defined]
        sys.modules["pkg_resources"] = stand_in
        try:
            importlib.import_module("stopit")
        finally:
            if sys.modules.get("pkg_resources") is stand_in:
                del sys.modules["pkg_resources"]
    return importlib.import_module("tpot")


class TPOTScorer:
    """The scorer TPOT maximises: ``-metric.loss``. ``y`` and the pipelines' ``classes_`` are
    TPOT's codes ``0..m-1``; the loss is the metric's on them, with a probability column per
    code (:func:`~automl_engine.evaluator.scores_on_codes`): all ``m`` unless TPOT left a class
    out of its search (fewer rows than folds), which then gets no column."""

    def __init__(self, metric: Metric, task: str) -> None:
        self.__name__ = SCORE_COLUMN  # TPOT names its objective after the scorer
        self.metric = metric
        self.task = task

    def __call__(self, estimator: Any, X: Any, y: Any) -> float:
        if self.task == "classification":
            y_true, predictions = scores_on_codes(estimator, X, y)
        else:
            y_true = np.asarray(y, dtype=float)
            predictions = np.asarray(estimator.predict(X), dtype=float)
        return 0.0 - float(self.metric.loss(y_true, predictions))


def preprocessor() -> Any:
    """Imputation and one-hot encoding for a frame of numeric and categorical columns."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    categorical = make_pipeline(
        SimpleImputer(strategy="most_frequent"),
        OneHotEncoder(handle_unknown="ignore", sparse_output=False),
    )
    return ColumnTransformer(
        [
            (
                "numeric",
                SimpleImputer(strategy="median", keep_empty_features=True),
                make_column_selector(dtype_include="number"),
            ),
            ("categorical", categorical, make_column_selector(dtype_exclude="number")),
        ]
    )


class TPOTModel:
    """TPOT's fitted pipeline (preprocessing first) as a scikit-learn estimator: for
    classification ``classes_`` are the labels it was trained on (``labels[code]`` of the
    pipeline's codes), ``predict_proba`` has a column per label in that order and ``predict``
    gives the label of the largest; for regression ``predict`` gives values."""

    def __init__(self, pipeline: Any, labels: np.ndarray | None = None) -> None:
        self.pipeline = pipeline
        if labels is not None:
            self.classes_ = labels[np.asarray(pipeline.classes_).astype(int)]

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        # A regressor's pipeline has no predict_proba: AttributeError, as scikit-learn's.
        return np.asarray(self.pipeline.predict_proba(X), dtype=float)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if hasattr(self, "classes_"):
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return np.asarray(self.pipeline.predict(X), dtype=float)

    def __repr__(self) -> str:
        return f"TPOTModel({self.pipeline})"


class TPOTSystem(System):
    """TPOT's ``TPOTClassifier``/``TPOTRegressor`` optimising the run's metric within the
    run's budget; see the module docstring.

    ``search_space``, ``cv``, ``population_size``, ``generations`` and ``early_stop`` are
    TPOT's own parameters (``generations=None``: until the time is up). The first three
    default to a light search (``linear-light``, 5 folds, 20 pipelines a generation) rather
    than TPOT's (``linear``, 10 folds, 50), which is made for hours: an ablation's budgets are
    tens of seconds to minutes, and TPOT's first generation has to be evaluated in them.
    ``max_eval_time_mins`` limits one pipeline's evaluation (none: a tenth of the budget, at
    most 10 minutes). ``reserve`` is the share of the budget kept for what TPOT does after its
    deadline. ``processes`` runs the Dask workers as processes rather than threads.
    """

    def __init__(
        self,
        search_space: str = "linear-light",
        cv: int = 5,
        population_size: int = 20,
        generations: int | None = None,
        early_stop: int | None = None,
        max_eval_time_mins: float | None = None,
        reserve: float = 0.15,
        processes: bool = False,
    ) -> None:
        if search_space not in SEARCH_SPACES:
            raise ValueError(
                f"tpot: search_space must be one of {list(SEARCH_SPACES)}, got {search_space!r}"
            )
        if not _is_int(cv) or cv < 2:
            raise ValueError(f"tpot: cv must be an integer >= 2, got {cv!r}")
        if not _is_int(population_size) or population_size < 1:
            raise ValueError(
                f"tpot: population_size must be a positive integer, got {population_size!r}"
            )
        for name, value in (("generations", generations), ("early_stop", early_stop)):
            if value is not None and (not _is_int(value) or value < 1):
                raise ValueError(f"tpot: {name} must be a positive integer, got {value!r}")
        if max_eval_time_mins is not None and (
            not _is_number(max_eval_time_mins) or max_eval_time_mins <= 0
        ):
            raise ValueError(
                f"tpot: max_eval_time_mins must be positive minutes, got {max_eval_time_mins!r}"
            )
        if not _is_number(reserve) or not 0 <= reserve < 1:
            raise ValueError(f"tpot: reserve must be in [0, 1), got {reserve!r}")
        if not isinstance(processes, bool):
            raise ValueError(f"tpot: processes must be true or false, got {processes!r}")
        self.search_space = search_space
        self.cv = cv
        self.population_size = population_size
        self.generations = generations
        self.early_stop = early_stop
        self.max_eval_time_mins = max_eval_time_mins
        self.reserve = float(reserve)
        self.processes = processes
        # Imported here, not in fit: TPOT's import (Dask, and torch where it is installed)
        # takes seconds that are no part of its search.
        self.tpot = import_tpot()

    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        start = time.time()
        deadline = start + time_budget * (1 - self.reserve)
        classification = task == "classification"
        # Classification: TPOT gets the codes 0..m-1, indices into the labels of y.
        labels, codes = np.unique(y, return_inverse=True) if classification else (None, y)
        max_eval_mins = self.max_eval_time_mins or min(TPOT_MAX_EVAL_MINS, time_budget / 600)

        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=n_jobs, threads_per_worker=1, processes=self.processes, silence_logs=50
        )
        client = Client(cluster)
        try:
            # What TPOTClassifier/TPOTRegressor.fit do: the template space for this data, then
            # a TPOTEstimator. Built here so that its evolver can be given the deadline.
            space = self.tpot.config.template_search_spaces.get_template_search_spaces(
                self.search_space,
                classification=classification,
                inner_predictors=None,
                n_classes=len(labels) if classification else None,
                n_samples=len(codes),
                n_features=X.shape[1],
                random_state=seed,
            )
            estimator = self.tpot.TPOTEstimator(
                search_space=space,
                scorers=[TPOTScorer(metric, task)],
                scorers_weights=[1],
                classification=classification,
                cv=self.cv,
                population_size=self.population_size,
                generations=self.generations,
                early_stop=self.early_stop,
                max_time_mins=None,  # the deadline evolver sets it when the search begins
                max_eval_time_mins=max_eval_mins,
                n_jobs=n_jobs,
                client=client,
                random_state=seed,
                preprocessing=preprocessor(),
                verbose=0,
            )
            estimator._evolver = deadline_evolver(estimator._evolver, deadline)
            # TPOT prints, and its pipelines warn in every fold, into the cell's folder. The
            # warning filters stay as they are: TPOT's worker threads save and restore them
            # (catch_warnings), which is not thread-safe, so changing them here could leave
            # them changed for the rest of the process.
            with (
                (workdir / OUTPUT_FILE).open("w") as out,
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(out),
            ):
                try:
                    estimator.fit(X, codes)
                except Exception as error:  # TPOT raises a bare Exception when nothing ran
                    raise RuntimeError(
                        f"tpot: the search failed: {error} (see {workdir / OUTPUT_FILE})"
                    ) from error
        finally:
            _close(client, cluster)
        individuals = estimator.evaluated_individuals
        _save_individuals(individuals, workdir / INDIVIDUALS_FILE, start)
        best = estimator.selected_best_score
        info = {
            "tpot_version": str(self.tpot.__version__),
            "pipeline": describe(estimator.fitted_pipeline_),
            "search_space": self.search_space,
            "cv": self.cv,
            "population_size": self.population_size,
            "max_eval_time_mins": max_eval_mins,
            "generations": int(individuals["Generation"].max()) + 1,
            "search_budget": deadline - start,
        }
        return SystemResult(
            model=TPOTModel(estimator.fitted_pipeline_, labels),
            validation_loss=0.0 - float(best[SCORE_COLUMN]) if best is not None else None,
            curve=read_curve(individuals, start),
            info=info,
        )


def deadline_evolver(evolver: type, deadline: float) -> type:
    """TPOT's evolver class, stopping by ``deadline`` (a ``time.time()``). Two changes to when
    TPOT stops, none to what it searches:

    * TPOT counts ``max_time_mins`` from the start of its evolutionary loop, after it has
      fitted the preprocessing, built the search space and generated the initial population
      (seconds, for a large population); here the limit is counted to ``deadline``.
    * TPOT checks the time only before each generation, whose first part, making the
      offspring, takes seconds (deep copies of every individual), and cancels every
      evaluation at the deadline. A generation is not begun when its offspring would not be
      ready before the deadline (judged by the last generation's, or at first by the time
      the initial population took), as none of them could be evaluated.
    """

    class DeadlineEvolver(evolver):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            begun = time.time()
            super().__init__(*args, **kwargs)  # generates the initial population
            # Until a generation has been made: making offspring (copies of two parents,
            # varied until new) takes several times as long as generating as many
            # individuals afresh.
            self.offspring_seconds = OFFSPRING_PER_INITIAL * (time.time() - begun)

        def optimize(self, *args: Any, **kwargs: Any) -> Any:
            self.max_time_mins = max(deadline - time.time(), 1.0) / 60
            return super().optimize(*args, **kwargs)

        def step(self) -> None:
            if time.time() + self.offspring_seconds >= deadline:
                self.max_time_mins = 0.0  # TPOT's loop stops at its next check
                return
            super().step()

        def generate_offspring(self) -> None:
            begun = time.time()
            super().generate_offspring()
            self.offspring_seconds = time.time() - begun

    return DeadlineEvolver


def read_curve(individuals: pd.DataFrame, start: float) -> list[tuple[float, float]]:
    """``(seconds since the fit began, loss)`` of each pipeline TPOT evaluated, by completion
    time: the loss is minus TPOT's score; ``inf`` for a pipeline that failed or timed out
    (``Eval Error``). Pipelines cancelled at the deadline (no score, no error) were never
    evaluated and are left out."""
    curve = []
    for _, row in individuals.iterrows():
        score, error, done = row[SCORE_COLUMN], row["Eval Error"], row["Completed Timestamp"]
        if pd.isna(done):
            continue
        if isinstance(error, str) and error:
            loss = math.inf
        elif pd.isna(score):
            continue
        else:
            loss = 0.0 - float(score) if math.isfinite(float(score)) else math.inf
        curve.append((float(done) - start, loss))
    curve.sort(key=lambda point: point[0])
    return curve


def _save_individuals(individuals: pd.DataFrame, path: Path, start: float) -> None:
    """TPOT's record of every pipeline it evaluated, as CSV, times in seconds since the fit
    began."""
    table = pd.DataFrame(
        {
            "generation": individuals["Generation"],
            "score": individuals[SCORE_COLUMN],
            "submitted": individuals["Submitted Timestamp"] - start,
            "completed": individuals["Completed Timestamp"] - start,
            "error": individuals["Eval Error"],
            "pipeline": individuals["Instance"].map(describe),
        }
    )
    table.to_csv(path, index_label="individual")


def describe(estimator: Any) -> str:
    """A compact one-line description of a pipeline: its steps, nested, each with the
    parameters it sets away from their defaults (scikit-learn's own repr takes about a
    second for one of TPOT's pipelines, and shortens them with '...')."""
    name = type(estimator).__name__
    if hasattr(estimator, "steps"):  # Pipeline
        return f"{name}({', '.join(describe(step) for _, step in estimator.steps)})"
    if hasattr(estimator, "transformer_list"):  # FeatureUnion
        parts = ", ".join(describe(part) for _, part in estimator.transformer_list)
        return f"{name}({parts})"
    if hasattr(estimator, "transformers"):  # ColumnTransformer: the fixed preprocessing
        return name
    try:
        params = estimator.get_params(deep=False)
    except (AttributeError, TypeError):
        return name
    defaults = _defaults(type(estimator))
    shown = []
    for key, value in sorted(params.items()):
        if hasattr(value, "get_params"):  # an inner estimator (TPOT's EstimatorTransformer)
            shown.append(f"{key}={describe(value)}")
        elif isinstance(value, (bool, int, float, str, np.generic)) and not (
            key in defaults and _same(defaults[key], value)
        ):
            shown.append(f"{key}={value.item() if isinstance(value, np.generic) else value!r}")
    return f"{name}({', '.join(shown)})"


@functools.cache
def _defaults(cls: type) -> dict[str, Any]:
    return {
        key: parameter.default
        for key, parameter in inspect.signature(cls.__init__).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


def _same(default: Any, value: Any) -> bool:
    try:
        return bool(default == value)
    except (TypeError, ValueError):
        return False


def _close(client: Any, cluster: Any) -> None:
    """Close the Dask client and cluster without waiting for a pipeline TPOT cancelled at its
    deadline: a thread cannot be stopped, so the workers are closed without waiting for their
    threads, and such an evaluation runs on in the background until it ends, at most
    ``max_eval_time_mins`` later, where TPOT's own timeout stops it."""
    from distributed import Worker

    try:
        client.close(timeout=1)
        for worker in list(cluster.workers.values()):
            if isinstance(worker, Worker):  # a thread worker; a process worker is killed
                cluster.sync(worker.close, executor_wait=False)
        cluster.close(timeout=5)
    except Exception as error:  # closing must not lose the result
        log.warning("tpot: closing the Dask cluster failed: %s", error)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
