"""The model a run leaves behind: one refitted pipeline or a weighted ensemble of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.preprocessing import LabelEncoder

from automl_engine.evaluator import predict_scores


@dataclass
class BaggedPipeline:
    """One cross-validated trial's fold models, averaged: the k pipelines its validation
    loss was measured with, each fitted on k-1 folds (bagging, as AutoGluon's models are;
    no refit on all rows). Classification: the mean of the folds' class probabilities over
    the label codes ``0..n_classes-1``; regression: the mean prediction."""

    folds: list[Any]
    n_classes: int = 0

    @property
    def classes_(self) -> np.ndarray:
        return np.arange(self.n_classes)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if not self.n_classes:
            raise AttributeError("predict_proba is only defined for classification")
        return np.mean([predict_scores(fold, X, self.n_classes) for fold in self.folds], axis=0)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if self.n_classes:
            return np.argmax(self.predict_proba(X), axis=1)
        return np.mean([np.asarray(f.predict(X), dtype=float) for f in self.folds], axis=0)


@dataclass
class TrainedModel:
    """Fitted pipelines with weights, predicting in the dataset's original labels.

    A single best pipeline is an ensemble of one with weight 1.
    """

    task: str
    estimators: Sequence[Any]
    weights: np.ndarray
    label_encoder: LabelEncoder | None = None
    configs: list[dict[str, Any]] = field(default_factory=list)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.label_encoder is None:
            raise AttributeError("predict_proba is only defined for classification")
        n_classes = len(self.label_encoder.classes_)
        blend = np.zeros((len(X), n_classes))
        for weight, estimator in zip(self.weights, self.estimators, strict=True):
            blend += weight * predict_scores(estimator, X, n_classes)
        return blend

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if self.label_encoder is not None:
            return self.label_encoder.inverse_transform(np.argmax(self.predict_proba(X), axis=1))
        return sum(
            w * np.asarray(e.predict(X), dtype=float)
            for w, e in zip(self.weights, self.estimators, strict=True)
        )  # type: ignore[return-value]

    def raw_predictions(self, X: pd.DataFrame) -> np.ndarray:
        """Probabilities (classification) or values (regression), as metrics take them."""
        return self.predict_proba(X) if self.label_encoder is not None else self.predict(X)
