"""FLAML's ``AutoML`` as a whole-system peer (``automl ablate --peer flaml``).

FLAML gets what a run of the same ablation cell gets and optimises the run's own metric:

* **Metric.** FLAML is handed a metric *function* (its ``metric=`` callable,
  ``(X_val, y_val, estimator, labels, X_train, y_train, weight_val, weight_train, *args) ->
  (val_loss, metrics)``) that computes ``metric.loss`` -- the core's loss, lower is better --
  on FLAML's label codes and ``estimator.predict_proba(X_val)`` (``estimator.predict(X_val)``
  for regression). So FLAML's validation losses, its best loss and its log are all in the
  core's loss convention, and FLAML's search, learner selection and final choice follow the
  run's metric, not FLAML's default (``1 - roc_auc`` or ``log_loss``).
* **Budget.** FLAML searches for ``time_budget * (1 - retrain_reserve)`` seconds; the rest is
  kept for what FLAML does after its search (refitting the chosen configuration on all rows),
  so that the whole ``fit`` stays within ``time_budget``.
* **Cores and seed.** ``n_jobs`` goes to FLAML (its learners' threads; trials run one at a
  time), ``seed`` to FLAML's search.
* **Labels.** FLAML label-encodes classification targets: its learners see the codes
  ``0..m-1`` of the ``m`` labels of ``y``. The metric function scores on those codes, and the
  returned model follows scikit-learn: ``classes_`` are the labels of ``y`` (FLAML's label
  encoder's classes, sorted) and ``predict_proba`` has a column per label in that order. The
  core places the columns among all the dataset's classes.
"""

from __future__ import annotations

import json
import logging
import math
import numbers
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from automl_bench.contracts import System, SystemResult

from automl_engine.evaluator import scores_on_codes
from automl_engine.metrics import Metric

log = logging.getLogger(__name__)

#: FLAML's learners for tabular classification and regression that were checked to work on
#: this project's stack (scikit-learn 1.9, lightgbm 4.7, xgboost 3.2, pandas 3): ``auto`` is
#: FLAML's default list for the task (lgbm, rf, xgboost, extra_tree, xgb_limitdepth, sgd, and
#: lrl1 for classification; catboost too where it is installed).
TABULAR_LEARNERS = (
    "lgbm",
    "rf",
    "xgboost",
    "xgb_limitdepth",
    "extra_tree",
    "histgb",
    "sgd",
    "lrl1",
    "lrl2",
    "svc",
    "kneighbor",
    "enet",
    "lassolars",
    "catboost",
)
#: What ``auto`` runs: FLAML's default learners for the task, without CatBoost, which FLAML
#: adds to them where catboost is installed (this project installs it, automl-catboost):
#: FLAML's CatBoost learner does not keep to the time budget (a search on wine with a 6 s
#: budget took 129 s once catboost was installed, 2-core VM), and the peer keeps the learners
#: it was measured with before.
AUTO_LEARNERS = {
    "classification": ["lgbm", "rf", "xgboost", "extra_tree", "xgb_limitdepth", "sgd", "lrl1"],
    "regression": ["lgbm", "rf", "xgboost", "extra_tree", "xgb_limitdepth", "sgd"],
}
EVAL_METHODS = ("auto", "cv", "holdout")
HPO_METHODS = ("auto", "cfo", "bs", "random")
#: FLAML settings this system sets itself from the ablation's cell: never passed in ``settings``.
OWNED_SETTINGS = frozenset(
    {
        "X_train",
        "y_train",
        "dataframe",
        "label",
        "task",
        "metric",
        "time_budget",
        "seed",
        "n_jobs",
        "log_file_name",
        "log_type",
        "estimator_list",
        "eval_method",
        "n_splits",
        "split_ratio",
        "hpo_method",
        "sample",
        "max_iter",
        "verbose",
        "X_val",
        "y_val",
        "n_concurrent_trials",
        "use_ray",
        "use_spark",
    }
)
LOG_FILE = "flaml.log"


def flaml_version() -> str:
    import flaml

    return str(flaml.__version__)


class FLAMLMetric:
    """The metric function FLAML calls for each trial (each fold under cross-validation).

    FLAML's ``y_val`` and its learners' ``classes_`` are its codes ``0..m-1``: the loss is the
    metric's on those codes, with a probability column per code
    (:func:`~automl_engine.evaluator.scores_on_codes`; all ``m`` unless a fold lacks a label,
    which FLAML's default ``auto_augment`` prevents).
    """

    def __init__(self, metric: Metric, task: str) -> None:
        self.metric = metric
        self.task = task

    def __call__(
        self, X_val: Any, y_val: Any, estimator: Any, *args: Any
    ) -> tuple[float, dict[str, float]]:
        start = time.perf_counter()
        if self.task == "classification":
            y_true, predictions = scores_on_codes(estimator, X_val, y_val)
        else:
            y_true = np.asarray(y_val, dtype=float)
            predictions = np.asarray(estimator.predict(X_val), dtype=float)
        # Seconds per row, which FLAML reads where its ``pred_time_limit`` is set.
        pred_time = (time.perf_counter() - start) / max(len(y_true), 1)
        try:
            loss = float(self.metric.loss(y_true, predictions))
        except ValueError as error:  # e.g. roc_auc on a fold that lacks a class
            name = self.metric.name
            log.warning("flaml: %s on a validation fold failed (%s); loss inf", name, error)
            loss = math.inf
        if not math.isfinite(loss):
            loss = math.inf
        return loss, {self.metric.name: loss, "pred_time": pred_time}


class FLAMLModel:
    """The fitted FLAML ``AutoML`` as a scikit-learn estimator: for classification
    ``classes_`` are the labels it was trained on (its label encoder's classes, sorted),
    ``predict_proba`` has a column per label in that order and ``predict`` gives the label of
    the largest; for regression ``predict`` gives values."""

    def __init__(self, automl: Any, task: str) -> None:
        self.automl = automl
        self.task = task
        if task == "classification":
            self.classes_ = np.asarray(automl.label_transformer.classes_)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.task != "classification":
            raise AttributeError("a regression model has no predict_proba")
        with warnings.catch_warnings():
            quiet_library_warnings()
            # A column per FLAML code 0..m-1: its final learner was fitted on every label.
            return np.asarray(self.automl.predict_proba(X), dtype=float)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if self.task == "classification":
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        with warnings.catch_warnings():
            quiet_library_warnings()
            return np.asarray(self.automl.predict(X), dtype=float)

    def __repr__(self) -> str:
        return f"FLAMLModel({self.automl.best_estimator}: {self.automl.model})"


class FLAMLSystem(System):
    """FLAML's ``AutoML`` optimising the run's metric within the run's budget; see the module
    docstring.

    ``estimator_list`` is ``auto`` (FLAML's default learners for the task, without CatBoost:
    :data:`AUTO_LEARNERS`) or a list of
    FLAML learner names (``TABULAR_LEARNERS``); ``eval_method``, ``n_splits``,
    ``split_ratio``, ``hpo_method`` and ``sample`` are FLAML's own settings, with FLAML's
    defaults. ``max_iter`` caps the number of trials (none: only the time budget).
    ``retrain_reserve`` is the share of the time budget kept for FLAML's final refit.
    ``settings`` passes any other ``AutoML.fit`` keyword (e.g. ``{"early_stop": true}``),
    except those this system sets from the cell (metric, budget, seed, cores...).
    """

    def learners(self, task: str) -> list[str]:
        """The learners FLAML searches over: :data:`AUTO_LEARNERS` for ``auto``."""
        if self.estimator_list == "auto":
            return list(AUTO_LEARNERS[task])
        return list(self.estimator_list)

    def __init__(
        self,
        estimator_list: str | Sequence[str] = "auto",
        eval_method: str = "auto",
        n_splits: int = 5,
        split_ratio: float = 0.1,
        hpo_method: str = "auto",
        sample: bool = True,
        max_iter: int | None = None,
        retrain_reserve: float = 0.1,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(estimator_list, str):
            if estimator_list != "auto":
                estimator_list = [estimator_list]
        elif isinstance(estimator_list, Sequence) and estimator_list:
            estimator_list = list(estimator_list)
        else:
            raise ValueError(
                f"flaml: estimator_list must be 'auto' or a non-empty list of learner names, "
                f"got {estimator_list!r}"
            )
        if estimator_list != "auto":
            unknown = [name for name in estimator_list if name not in TABULAR_LEARNERS]
            if unknown:
                raise ValueError(
                    f"flaml: unknown learner(s) {unknown} in estimator_list; choose from "
                    f"{list(TABULAR_LEARNERS)} or 'auto'"
                )
        _check_choice("eval_method", eval_method, EVAL_METHODS)
        _check_choice("hpo_method", hpo_method, HPO_METHODS)
        if not isinstance(n_splits, int) or isinstance(n_splits, bool) or n_splits < 2:
            raise ValueError(f"flaml: n_splits must be an integer >= 2, got {n_splits!r}")
        if not _is_number(split_ratio) or not 0 < split_ratio < 1:
            raise ValueError(f"flaml: split_ratio must be in (0, 1), got {split_ratio!r}")
        if not isinstance(sample, bool):
            raise ValueError(f"flaml: sample must be true or false, got {sample!r}")
        if max_iter is not None and (
            not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 1
        ):
            raise ValueError(f"flaml: max_iter must be a positive integer, got {max_iter!r}")
        if not _is_number(retrain_reserve) or not 0 <= retrain_reserve < 1:
            raise ValueError(f"flaml: retrain_reserve must be in [0, 1), got {retrain_reserve!r}")
        settings = dict(settings or {})
        owned = sorted(set(settings) & OWNED_SETTINGS)
        if owned:
            raise ValueError(
                f"flaml: settings may not set {owned}: this system sets them from the "
                "ablation's cell, or they have their own parameter"
            )
        self.estimator_list = estimator_list
        self.eval_method = eval_method
        self.n_splits = n_splits
        self.split_ratio = float(split_ratio)
        self.hpo_method = hpo_method
        self.sample = sample
        self.max_iter = max_iter
        self.retrain_reserve = float(retrain_reserve)
        self.settings = settings
        # Imported here, not in fit: FLAML's import takes a second that is no part of its search.
        from flaml import AutoML

        self.automl_class = AutoML

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
        log_file = workdir / LOG_FILE
        log_file.unlink(missing_ok=True)
        automl = self.automl_class()
        search_budget = time_budget * (1 - self.retrain_reserve) - (time.time() - start)
        with warnings.catch_warnings():
            quiet_library_warnings()
            automl.fit(
                X,
                y,
                task=task,
                metric=FLAMLMetric(metric, task),
                time_budget=max(search_budget, 0.1),
                max_iter=self.max_iter,
                estimator_list=self.learners(task),
                eval_method=self.eval_method,
                n_splits=self.n_splits,
                split_ratio=self.split_ratio,
                hpo_method=self.hpo_method,
                sample=self.sample,
                seed=seed,
                n_jobs=n_jobs,
                log_file_name=str(log_file),
                log_type="all",
                verbose=0,
                **self.settings,
            )
        if automl.model is None:
            raise RuntimeError(
                f"flaml: no configuration finished within {time_budget:g} s (see {log_file})"
            )
        offset = getattr(automl, "_start_time_flag", start) - start
        info = {
            "flaml_version": flaml_version(),
            "best_estimator": automl.best_estimator,
            "best_config": dict(automl.best_config),
            "estimator_list": list(automl.estimator_list),
            "eval_method": automl._state.eval_method,
            "time_to_find_best_model": automl.time_to_find_best_model,
            "search_budget": search_budget,
        }
        return SystemResult(
            model=FLAMLModel(automl, task),
            validation_loss=float(automl.best_loss),
            curve=read_curve(log_file, offset),
            info=info,
        )


def quiet_library_warnings() -> None:
    """Inside a ``warnings.catch_warnings()`` block: hide what FLAML's internals and its
    learners warn about on every trial (pandas 3 deprecations in FLAML's data handling, SGD's
    convergence), which would bury an ablation's own output."""
    from sklearn.exceptions import ConvergenceWarning

    for category in (DeprecationWarning, FutureWarning, ConvergenceWarning):
        warnings.simplefilter("ignore", category)


def read_curve(log_file: Path, offset: float = 0.0) -> list[tuple[float, float]]:
    """``(seconds since the fit began, validation loss)`` of each trial in FLAML's log (written
    with ``log_type="all"``); ``wall_clock_time`` counts from FLAML's own start, ``offset``
    seconds after the fit began. A missing or non-finite loss is ``inf`` (a failure)."""
    curve = []
    if not log_file.exists():
        return curve
    with log_file.open() as lines:
        for line in lines:
            record = json.loads(line)
            if "wall_clock_time" not in record:  # the checkpoint record at the end
                continue
            loss = record.get("validation_loss")
            loss = float(loss) if loss is not None and math.isfinite(loss) else math.inf
            curve.append((float(record["wall_clock_time"]) + offset, loss))
    curve.sort(key=lambda point: point[0])
    return curve


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"flaml: {name} must be one of {list(choices)}, got {value!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
