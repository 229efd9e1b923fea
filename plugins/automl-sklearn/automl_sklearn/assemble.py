"""The Assembler: one scikit-learn Pipeline from the components chosen in each stage.

::

    ColumnTransformer                                    (columns typed when fitting)
      categorical: missing -> own category, codes -> category_coalescence -> categorical_encoding
      numerical:   imputation -> rescaling
    feature_preprocessor                                 (class_weight if balancing says so)
    [densify]                                            (only before dense-only estimators)
    classifier | regressor                               (balanced as the balancing stage says)

An estimator that splits on categories itself (its scikit-learn tags say
``input_tags.categorical``: CatBoost) gets the categorical columns as categories when the
chosen encoding yields one code per column (``encoding``, ``no_encoding``) and the feature
preprocessor keeps the columns (``no_preprocessing``): the column transformer is wrapped in
:class:`~automl_sklearn.transformers.CategoriesAsFrame`. With one-hot encoding, or after a
preprocessor that mixes or selects columns, it gets numbers like every other estimator.

Columns are categorical per :func:`automl_engine.dataset.is_categorical` (category, object,
string and bool dtypes) in the DataFrame given to ``fit``; a NumPy array is all numerical.
The column transformer's output is always dense, as in auto-sklearn for dense data; the only
sparse producer in the space is ``random_trees_embedding``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags

from automl_core.space import BuildContext, PipelineComponent
from automl_engine.dataset import is_categorical
from automl_sklearn.data_preprocessing import ClassBalancing
from automl_sklearn.transformers import CategoriesAsFrame, categorical_codes, densifier

Choices = dict[str, tuple[PipelineComponent, dict[str, Any]]]

#: Categorical encodings that yield one integer code per categorical column.
CODE_ENCODINGS = frozenset({"encoding", "no_encoding"})
#: Feature preprocessors that pass their input columns through unchanged.
COLUMN_KEEPING_PREPROCESSORS = frozenset({"no_preprocessing"})


def categorical_columns(X: Any) -> np.ndarray:
    """Mask of the categorical columns of ``X`` (none unless ``X`` is a DataFrame)."""
    if not isinstance(X, pd.DataFrame):
        return np.zeros(np.shape(X)[1], dtype=bool)
    return np.array([is_categorical(X.iloc[:, i]) for i in range(X.shape[1])], dtype=bool)


def numerical_columns(X: Any) -> np.ndarray:
    """Mask of the numerical columns of ``X``."""
    return ~categorical_columns(X)


def accepts_sparse(estimator: Any) -> bool:
    """Whether ``estimator`` says (through its scikit-learn tags) that it takes sparse input."""
    try:
        return bool(get_tags(estimator).input_tags.sparse)
    except Exception:  # a third-party object without usable tags: assume dense only
        return False


def splits_categories(estimator: Any) -> bool:
    """Whether ``estimator`` says (through its scikit-learn tags) that it takes categories."""
    try:
        return bool(get_tags(estimator).input_tags.categorical)
    except Exception:  # a third-party object without usable tags: numbers only
        return False


def categories_reach_estimator(choices: Choices, estimator: Any) -> bool:
    """Whether the pipeline can hand ``estimator`` its categorical columns as categories:
    it takes them, and the encoding and feature preprocessor keep one column per category."""
    return (
        splits_categories(estimator)
        and choices["categorical_encoding"][0].name in CODE_ENCODINGS
        and choices["feature_preprocessor"][0].name in COLUMN_KEEPING_PREPROCESSORS
    )


def _build(choices: Choices, stage: str, context: BuildContext) -> Any:
    component, params = choices[stage]
    return component.build(params, context)


def data_preprocessor(choices: Choices, context: BuildContext) -> ColumnTransformer:
    """The column transformer for the categorical and numerical stages."""
    categorical = Pipeline(
        [
            ("codes", categorical_codes()),
            ("category_coalescence", _build(choices, "category_coalescence", context)),
            ("categorical_encoding", _build(choices, "categorical_encoding", context)),
        ]
    )
    numerical = Pipeline(
        [
            ("imputation", _build(choices, "imputation", context)),
            ("rescaling", _build(choices, "rescaling", context)),
        ]
    )
    return ColumnTransformer(
        [
            ("categorical", categorical, categorical_columns),
            ("numerical", numerical, numerical_columns),
        ],
        sparse_threshold=0.0,
    )


def assemble(choices: Choices, context: BuildContext) -> Pipeline:
    """The whole pipeline (see the module docstring); the final step is named after its
    stage, ``classifier`` or ``regressor``."""
    final_stage = "classifier" if "classifier" in choices else "regressor"
    balancing = (
        _build(choices, "balancing", context) if "balancing" in choices else ClassBalancing()
    )
    preprocessor = balancing.preprocessor(_build(choices, "feature_preprocessor", context))
    estimator = balancing.estimator(_build(choices, final_stage, context))
    columns: Any = data_preprocessor(choices, context)
    if categories_reach_estimator(choices, estimator):
        columns = CategoriesAsFrame(columns)
    steps: list[tuple[str, Any]] = [
        ("data_preprocessor", columns),
        ("feature_preprocessor", preprocessor),
    ]
    if not accepts_sparse(estimator):
        steps.append(("densify", densifier()))
    steps.append((final_stage, estimator))
    return Pipeline(steps)
