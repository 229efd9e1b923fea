"""The automl-core plugin: registers auto-sklearn's pipeline components and its two spaces.

Found through the ``automl_core`` entry point ``sklearn``; every component is registered as
``<stage>:<name>`` (e.g. ``classifier:random_forest``).
"""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.hookspecs import RegisterComponent, RegisterFactory
from automl_core.space import PipelineComponent, SearchSpace
from automl_sklearn.classifiers import CLASSIFIERS
from automl_sklearn.data_preprocessing import (
    BALANCINGS,
    CATEGORICAL_ENCODINGS,
    CATEGORY_COALESCENCES,
    IMPUTATIONS,
    RESCALINGS,
)
from automl_sklearn.feature_preprocessors import FEATURE_PREPROCESSORS
from automl_sklearn.regressors import REGRESSORS
from automl_sklearn.spaces import classification_space, regression_space

#: Every component of this plugin, stage by stage in pipeline order.
COMPONENTS: tuple[PipelineComponent, ...] = (
    *CATEGORICAL_ENCODINGS,
    *CATEGORY_COALESCENCES,
    *IMPUTATIONS,
    *RESCALINGS,
    *BALANCINGS,
    *FEATURE_PREPROCESSORS,
    *CLASSIFIERS,
    *REGRESSORS,
)

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: What a fitted pipeline of this plugin's components holds beyond what skops trusts by
#: itself, as ``skops.io.get_untrusted_types`` names it: a saved model naming anything else is
#: refused (``automl_engine.model_trust``). Found by saving pipelines of every component of both
#: spaces, at its defaults and at each value of its categorical hyper-parameters, for binary,
#: multi-class and regression tasks; the round trip of ``tests/test_model_trust.py`` keeps it
#: complete. Only functions a pipeline needs are here: a model calls those it holds.
TRUSTED_MODEL_TYPES: tuple[str, ...] = (
    # the assembler's column selectors; this plugin's transformers, wrappers and the functions
    # they are given (score functions, fit-time resolvers bound with functools.partial)
    "automl_sklearn.assemble.categorical_columns",
    "automl_sklearn.assemble.numerical_columns",
    "automl_sklearn.fit_time.at_most_n_features",
    "automl_sklearn.fit_time.at_most_n_samples",
    "automl_sklearn.fit_time.depth_from_factor",
    "automl_sklearn.fit_time.n_features_log",
    "automl_sklearn.fit_time.n_features_power",
    "automl_sklearn.fit_time.positive_kernel_components",
    "automl_sklearn.fit_time.rbf_kernel",
    "automl_sklearn.fit_time.validation_size",
    "automl_sklearn.transformers.CategoriesAsFrame",
    "automl_sklearn.transformers.MinorityCoalescer",
    "automl_sklearn.transformers.NonEmptyGenericUnivariateSelect",
    "automl_sklearn.transformers.NonEmptySelectPercentile",
    "automl_sklearn.transformers.as_category_strings",
    "automl_sklearn.transformers.chi2_nonnegative",
    "automl_sklearn.transformers.to_dense",
    "automl_sklearn.wrappers.BalancedSampleWeights",
    "automl_sklearn.wrappers.DecisionProba",
    "automl_sklearn.wrappers.EncodedLabels",
    "automl_sklearn.wrappers.FitTimeParams",
    "automl_sklearn.wrappers.NonNegativeInput",
    "functools.partial",
    # scikit-learn's fitted internals and the functions its estimators are given
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",  # gradient_boosting
    "sklearn.feature_selection._mutual_info.mutual_info_classif",
    "sklearn.feature_selection._mutual_info.mutual_info_regression",
    "sklearn.feature_selection._univariate_selection.f_classif",
    "sklearn.feature_selection._univariate_selection.f_regression",
    "sklearn.gaussian_process.kernels.RBF",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",  # k_nearest_neighbors, p=2
    "sklearn.metrics._dist_metrics.ManhattanDistance64",  # k_nearest_neighbors, p=1
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",  # mlp
    "sklearn.tree._tree.Tree",
    # NumPy and SciPy: feature_agglomeration's pooling functions, SimpleImputer's dtype,
    # the training rows a k-NN or SVM keeps after random_trees_embedding (sparse)
    "numpy.dtype",
    "numpy.max",
    "numpy.mean",
    "numpy.median",
    "scipy.sparse._csr.csr_matrix",
    # LightGBM and XGBoost
    "collections.OrderedDict",  # in LightGBM's models
    "lightgbm.basic.Booster",
    "lightgbm.sklearn.LGBMClassifier",
    "lightgbm.sklearn.LGBMRegressor",
    "xgboost.core.Booster",
    "xgboost.sklearn.XGBClassifier",
    "xgboost.sklearn.XGBRegressor",
)

#: The spaces, by registered name.
SPACES = {
    "autosklearn-classification": classification_space,
    "autosklearn-regression": regression_space,
}


@hookimpl
def register_components(register: RegisterComponent) -> None:
    for component in COMPONENTS:
        register(component)


@hookimpl
def register_spaces(register: RegisterFactory[SearchSpace]) -> None:
    for name, factory in SPACES.items():
        register(name, factory)


@hookimpl
def trusted_model_types() -> tuple[str, ...]:
    return TRUSTED_MODEL_TYPES
