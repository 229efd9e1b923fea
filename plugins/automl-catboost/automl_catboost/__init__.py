"""CatBoost for automl-core: ``classifier:catboost`` and ``regressor:catboost``, which join
automl-sklearn's default spaces (see :mod:`automl_catboost.components`)."""

from automl_catboost.estimators import CatBoostClassifier, CatBoostRegressor

__all__ = ["CatBoostClassifier", "CatBoostRegressor"]
