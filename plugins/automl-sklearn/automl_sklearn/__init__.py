"""automl-sklearn: auto-sklearn 1.0's pipeline space for automl-core.

Registers auto-sklearn's data preprocessors, feature preprocessors, classifiers and regressors
(plus LightGBM and XGBoost) as pipeline components, and the ``autosklearn-classification`` and
``autosklearn-regression`` spaces built from them. See :mod:`automl_sklearn.spaces`.
"""

__version__ = "0.1.0"
