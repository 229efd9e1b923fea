"""Fitting and scoring a pipeline under holdout or k-fold cross-validation.

The splits are drawn once, when the evaluator is made, so that every trial is scored on the
same rows: losses are comparable and the stored out-of-sample predictions line up for
ensembling. An exception in a pipeline becomes a ``crashed`` result with its traceback; it
never stops the search.

A trial's ``budget`` (multi-fidelity search) is a fraction of the full fidelity, 0 < b <= 1,
spent one of two ways (the recipe's ``search.fidelity``):

* ``subsample``: each fold's model is trained on a fraction ``b`` of that fold's training rows
  (never fewer than ``MIN_SUBSAMPLE_ROWS``), always scored on the full validation rows. The
  subsample at a budget is a prefix of one fixed, class-interleaved order of the rows, so a
  larger budget sees a superset of the rows of a smaller one and every class early on.
* ``iterations``: the pipeline's iterative components (:class:`~automl_core.space.Iterations`:
  forests, boosting, MLP and SGD epochs) train ``b`` times their full length on all the rows;
  a pipeline with no iterative component is subsampled instead, so every budget below 1 is
  cheaper than a full evaluation.
"""

from __future__ import annotations

import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.preprocessing import LabelEncoder

from automl_core.contracts import DATA_FIDELITY_KINDS, Evaluator
from automl_core.errors import DatasetError
from automl_core.space import BuildContext
from automl_core.trial import Result, Status, Trial
from automl_engine.dataset import Dataset
from automl_engine.fold_models import FoldModels
from automl_engine.metrics import METRICS, Metric
from automl_spaces.pipeline_space import PipelineSpace

#: A subsample never has fewer training rows than this (or all of them, if fewer).
MIN_SUBSAMPLE_ROWS = 100


@dataclass(frozen=True)
class Resampling:
    """``holdout`` keeps ``fraction`` of the rows for validation; ``cv`` uses ``folds`` folds.
    ``bag``: the fold models of each trial are kept, and the final model averages those of
    its members instead of refitting them (:class:`~automl_engine.model.BaggedPipeline`)."""

    kind: str = "holdout"
    fraction: float = 0.33
    folds: int = 5
    bag: bool = False


def make_splits(
    y: np.ndarray, task: str, resampling: Resampling, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train rows, validation rows) per fold; stratified for classification when possible."""
    rows = np.arange(len(y))
    stratify = task == "classification" and np.min(np.bincount(y)) >= 2
    if resampling.kind == "holdout":
        train, valid = train_test_split(
            rows,
            test_size=resampling.fraction,
            random_state=seed,
            stratify=y if stratify else None,
        )
        return [(np.sort(train), np.sort(valid))]
    enough = stratify and np.min(np.bincount(y)) >= resampling.folds
    splitter = (StratifiedKFold if enough else KFold)(
        resampling.folds, shuffle=True, random_state=seed
    )
    return list(splitter.split(rows, y if enough else None))


def usable_splits(
    name: str, y: np.ndarray, task: str, resampling: Resampling, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`make_splits`, refused with a :class:`DatasetError` when the rows are too few
    for the resampling: a split with no validation rows, or fitted on fewer than two rows
    (on a single class, for classification), would fail every trial."""
    described = (
        f"holdout {resampling.fraction:g}"
        if resampling.kind == "holdout"
        else f"{resampling.folds}-fold cv"
    )
    why = f"dataset {name!r} has {len(y)} training rows, too few for {described}"
    try:
        splits = make_splits(y, task, resampling, seed)
    except ValueError as error:
        raise DatasetError(f"{why}: {error}") from None
    for train, valid in splits:
        if len(valid) == 0 or len(train) < 2:
            raise DatasetError(
                f"{why}: a split has {len(train)} rows to fit and {len(valid)} to validate"
            )
        if task == "classification" and len(np.unique(y[train])) < 2:
            raise DatasetError(f"{why}: a split fits on rows of a single class")
    return splits


def predict_scores(estimator: Any, X: pd.DataFrame, n_classes: int) -> np.ndarray:
    """Class probabilities in columns 0..n_classes-1, whatever the estimator offers."""
    classes = np.asarray(getattr(estimator, "classes_", np.arange(n_classes)), dtype=int)
    if hasattr(estimator, "predict_proba"):
        partial = np.asarray(estimator.predict_proba(X), dtype=float)
    elif hasattr(estimator, "decision_function"):
        decision = np.asarray(estimator.decision_function(X), dtype=float)
        if decision.ndim == 1:  # binary: one margin
            decision = np.column_stack([-decision, decision])
        shifted = np.exp(decision - decision.max(axis=1, keepdims=True))
        partial = shifted / shifted.sum(axis=1, keepdims=True)
    else:
        partial = np.eye(len(classes))[np.searchsorted(classes, estimator.predict(X))]
    proba = np.zeros((len(X), n_classes))
    proba[:, classes] = partial
    totals = proba.sum(axis=1, keepdims=True)
    return np.divide(proba, totals, out=np.full_like(proba, 1 / n_classes), where=totals > 0)


def scores_on_codes(estimator: Any, X: pd.DataFrame, codes: Any) -> tuple[np.ndarray, np.ndarray]:
    """A classifier's rows as a metric takes them when the true labels ``codes`` and the
    classifier's ``classes_`` are integer codes of which some may be absent (a fold that
    lacks a class, a class a whole system left out of its search): the targets re-coded
    ``0..c-1`` and an (n, c) probability matrix, with a column for each of the ``c`` codes
    that ``codes`` or ``classes_`` hold, in order. What a whole system's in-search loss on
    its own label codes is computed on."""
    codes = np.asarray(codes).astype(int)
    seen = np.union1d(np.asarray(estimator.classes_).astype(int), codes)
    proba = predict_scores(estimator, X, int(seen[-1]) + 1)[:, seen]
    return np.searchsorted(seen, codes), proba


class PipelineEvaluator(Evaluator):
    """Evaluates configurations of a :class:`PipelineSpace` on a dataset."""

    def __init__(
        self,
        dataset: Dataset,
        space: PipelineSpace,
        metric: Metric,
        resampling: Resampling,
        seed: int = 0,
        fidelity: str = "iterations",
    ) -> None:
        if fidelity not in DATA_FIDELITY_KINDS:
            raise ValueError(f"fidelity must be one of {DATA_FIDELITY_KINDS}, got {fidelity!r}")
        self.fidelity = fidelity
        self.dataset = dataset
        self.space = space
        self.metric = metric
        self.resampling = resampling
        self.seed = seed
        self.task = dataset.task
        if self.task == "classification":
            self.label_encoder: LabelEncoder | None = LabelEncoder().fit(dataset.y)
            self.y = self.label_encoder.transform(dataset.y)
            self.n_classes = len(self.label_encoder.classes_)
        else:
            self.label_encoder = None
            self.y = np.asarray(dataset.y, dtype=float)
            self.n_classes = 0
        self.splits = usable_splits(dataset.name, self.y, self.task, resampling, seed)
        #: per fold, its training rows in the order subsamples take them
        self.subsample_orders = [
            interleaved_order(
                len(train), self.y[train] if self.task == "classification" else None, seed
            )
            for train, _ in self.splits
        ]
        #: rows whose out-of-sample predictions a result carries, in this order
        self.validation_rows = np.sort(np.concatenate([valid for _, valid in self.splits]))
        #: where each full-fidelity trial's fold models are written (``resampling.bag``), set
        #: by the run once its folder exists (:meth:`~automl_engine.tasks.DataTask.use_folder`)
        self.fold_models: FoldModels | None = None
        #: threads each fit may use (:attr:`BuildContext.threads`), set by the composition
        #: from the executor (:meth:`~automl_engine.tasks.DataTask.use_threads`)
        self.threads = 1

    @property
    def validation_targets(self) -> np.ndarray:
        return self.y[self.validation_rows]

    def evaluate(self, trial: Trial) -> Result:
        start = time.perf_counter()
        try:
            result = self._fit_and_score(trial)
        except Exception as error:  # any failure of a pipeline is the trial's, not the run's
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            # Under a process executor's memory limit, running out is a MemoryError here.
            status = Status.MEMOUT if isinstance(error, MemoryError) else Status.CRASHED
            return Result.failure(status, text, time.perf_counter() - start)
        result.duration = time.perf_counter() - start
        return result

    def _fit_and_score(self, trial: Trial) -> Result:
        budget = trial.budget if trial.budget is not None and trial.budget < 1 else None
        spent = self._spent_as(trial, budget)
        context = BuildContext(
            task=self.task,
            seed=self.seed,
            budget=budget if spent == "iterations" else None,
            threads=self.threads,
        )
        template = self.space.build(trial.config, context)
        width = self.n_classes if self.task == "classification" else 1
        predictions = np.full((len(self.y), width), np.nan)
        fit_time = predict_time = fit_cpu_time = 0.0
        X = self.dataset.X
        fitted = []
        for (train, valid), order in zip(self.splits, self.subsample_orders, strict=True):
            if spent == "subsample" and budget is not None:
                train = np.sort(train[order[: subsample_size(len(train), budget)]])
            model = clone(template)
            tick, cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X.iloc[train], self.y[train])
            tock = time.perf_counter()
            fit_cpu_time += time.process_time() - cpu
            predictions[valid] = self._predict(model, X.iloc[valid])
            predict_time += time.perf_counter() - tock
            fit_time += tock - tick
            fitted.append(model)
        held_out = predictions[self.validation_rows]
        if self.task == "regression":
            held_out = held_out[:, 0]
        if not np.all(np.isfinite(held_out)):
            raise ValueError("the pipeline predicted NaN or infinite values")
        loss = self.metric.loss(self.validation_targets, held_out)
        if self.fold_models is not None and budget is None:  # only full fits are final models
            self.fold_models.write(trial.id, fitted)
        return Result(
            status=Status.OK,
            loss=loss,
            metrics=score_all(self.task, self.validation_targets, held_out),
            fit_time=fit_time,
            predict_time=predict_time,
            fit_cpu_time=fit_cpu_time,
            predictions=held_out.astype(np.float32),
            info={"budget": budget, "fidelity": spent} if budget is not None else {},
        )

    def _spent_as(self, trial: Trial, budget: float | None) -> str | None:
        """How ``budget`` is spent on this trial: ``iterations``, ``subsample``, or not at
        all (full fidelity)."""
        if budget is None:
            return None
        if self.fidelity == "iterations" and self.space.iterative(trial.config):
            return "iterations"
        return "subsample"

    def _predict(self, model: Any, X: pd.DataFrame) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.task == "classification":
                return predict_scores(model, X, self.n_classes)
            return np.asarray(model.predict(X), dtype=float).reshape(-1, 1)


def subsample_size(rows: int, budget: float) -> int:
    """Training rows at ``budget``: a fraction of ``rows``, at least ``MIN_SUBSAMPLE_ROWS``."""
    return min(rows, max(MIN_SUBSAMPLE_ROWS, round(budget * rows)))


def interleaved_order(rows: int, labels: np.ndarray | None, seed: int) -> np.ndarray:
    """A random order of ``rows`` rows in which every prefix is close to stratified.

    Each class's rows are shuffled and spread evenly over the order (row ``k`` of a class of
    ``c`` rows sits at ``k / c``), so the first rows hold one of every class and any prefix
    keeps the class proportions. Without labels (regression), a plain shuffle.
    """
    rng = np.random.default_rng(seed)
    if labels is None:
        return rng.permutation(rows)
    position = np.empty(rows)
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        position[members] = np.arange(len(members)) / len(members)
    return np.lexsort((rng.random(rows), position))


def score_all(task: str, y: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    """Every metric of ``task`` for ``predictions`` (probabilities or values)."""
    scores = {}
    for name, metric in METRICS.items():
        if metric.task != task:
            continue
        try:
            scores[name] = float(metric.score(y, predictions))
        except ValueError:
            scores[name] = float("nan")
    return scores
