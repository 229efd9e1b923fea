"""auto-sklearn's feature preprocessors (the ``feature_preprocessor`` stage).

The classification-only ones (``*_classification``, ``liblinear_svc_preprocessor``) and the
regression-only ones (``*_regression``) say so in their tasks; the others serve both. Left out
from auto-sklearn 0.15: ``densifier`` and ``truncatedSVD``, which it offers only for sparse
data sets (pipelines here densify where an estimator needs it).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    Constant,
    EqualsCondition,
    Float,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    ForbiddenInClause,
    InCondition,
    Integer,
)
from sklearn.cluster import FeatureAgglomeration
from sklearn.decomposition import PCA, FastICA, KernelPCA
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomTreesEmbedding
from sklearn.feature_selection import (
    SelectFromModel,
    f_classif,
    f_regression,
    mutual_info_classif,
    mutual_info_regression,
)
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures
from sklearn.svm import LinearSVC

from automl_core.space import BuildContext
from automl_sklearn.components import ComponentList
from automl_sklearn.data_preprocessing import identity
from automl_sklearn.fit_time import (
    at_most_n_features,
    n_features_log,
    n_features_power,
    positive_kernel_components,
    resolved,
)
from automl_sklearn.hyperparameters import NONE, as_bool, make_space, optional
from automl_sklearn.shared import criterion, linear_svc_kwargs
from automl_sklearn.transformers import (
    NonEmptyGenericUnivariateSelect,
    NonEmptySelectPercentile,
    chi2_nonnegative,
)

FEATURE_PREPROCESSORS = ComponentList("feature_preprocessor")
CLASSIFICATION = {"classification"}
REGRESSION = {"regression"}


@FEATURE_PREPROCESSORS.add("no_preprocessing")
def no_preprocessing(params: dict[str, Any], context: BuildContext) -> FunctionTransformer:
    """Passes the features through."""
    return identity()


# -- selection by a model's importances ------------------------------------------------------
def _extra_trees_selector_space(
    criterion_hp: Categorical, max_features: Float, with_impurity: bool
) -> ConfigurationSpace:
    constants = [Constant("min_impurity_decrease", 0.0)] if with_impurity else []
    return make_space(
        Constant("n_estimators", 100),
        criterion_hp,
        max_features,
        Constant("max_depth", NONE),
        Constant("max_leaf_nodes", NONE),
        Integer("min_samples_split", (2, 20), default=2),
        Integer("min_samples_leaf", (1, 20), default=1),
        Constant("min_weight_fraction_leaf", 0.0),
        *constants,
        Categorical("bootstrap", ["True", "False"], default="False"),
    )


def _extra_trees_kwargs(params: dict[str, Any], context: BuildContext) -> dict[str, Any]:
    return {
        "n_estimators": int(params["n_estimators"]),
        "criterion": criterion(params["criterion"]),
        "max_depth": optional(params["max_depth"]),
        "max_leaf_nodes": optional(params["max_leaf_nodes"]),
        "min_samples_split": int(params["min_samples_split"]),
        "min_samples_leaf": int(params["min_samples_leaf"]),
        "min_weight_fraction_leaf": float(params["min_weight_fraction_leaf"]),
        "min_impurity_decrease": float(params.get("min_impurity_decrease", 0.0)),
        "bootstrap": as_bool(params["bootstrap"]),
        "n_jobs": context.threads,
        "random_state": context.seed,
    }


def _extra_trees_classification_space() -> ConfigurationSpace:
    return _extra_trees_selector_space(
        Categorical("criterion", ["gini", "entropy"], default="gini"),
        Float("max_features", (0, 1), default=0.5),
        with_impurity=True,
    )


@FEATURE_PREPROCESSORS.add(
    "extra_trees_preproc_for_classification",
    _extra_trees_classification_space,
    tasks=CLASSIFICATION,
)
def extra_trees_classification(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the features whose extra-trees importance is above the mean
    (``max_features`` = n_features ** max_features)."""
    selector = SelectFromModel(
        ExtraTreesClassifier(**_extra_trees_kwargs(params, context)), threshold="mean"
    )
    return resolved(selector, n_features_power, "estimator__max_features", params["max_features"])


def _extra_trees_regression_space() -> ConfigurationSpace:
    return _extra_trees_selector_space(
        Categorical("criterion", ["mse", "friedman_mse", "mae"]),
        Float("max_features", (0.1, 1.0), default=1.0),
        with_impurity=False,
    )


@FEATURE_PREPROCESSORS.add(
    "extra_trees_preproc_for_regression", _extra_trees_regression_space, tasks=REGRESSION
)
def extra_trees_regression(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the features whose extra-trees importance is above the mean
    (``max_features`` = max_features * (ln(n_features) + 1))."""
    selector = SelectFromModel(
        ExtraTreesRegressor(**_extra_trees_kwargs(params, context)), threshold="mean"
    )
    return resolved(selector, n_features_log, "estimator__max_features", params["max_features"])


def _liblinear_selector_space() -> ConfigurationSpace:
    penalty = Constant("penalty", "l1")
    loss = Categorical("loss", ["hinge", "squared_hinge"], default="squared_hinge")
    return make_space(
        penalty,
        loss,
        Constant("dual", "False"),
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        Float("C", (0.03125, 32768), default=1.0, log=True),
        Constant("multi_class", "ovr"),
        Constant("fit_intercept", "True"),
        Constant("intercept_scaling", 1),
        ForbiddenAndConjunction(
            ForbiddenEqualsClause(penalty, "l1"), ForbiddenEqualsClause(loss, "hinge")
        ),
    )


@FEATURE_PREPROCESSORS.add(
    "liblinear_svc_preprocessor", _liblinear_selector_space, tasks=CLASSIFICATION
)
def liblinear_svc_preprocessor(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the features with above-mean weight in an L1-penalised linear SVM."""
    svm = LinearSVC(**linear_svc_kwargs(params, context.seed))
    return SelectFromModel(svm, threshold="mean")


# -- univariate selection --------------------------------------------------------------------
def _score_function(name: str, seed: int) -> Any:
    """auto-sklearn's score function names -> functions (chi2 sees non-negative values)."""
    functions = {
        "chi2": chi2_nonnegative,
        "f_classif": f_classif,
        "f_regression": f_regression,
        "mutual_info_classif": partial(mutual_info_classif, random_state=seed),
        "mutual_info_regression": partial(mutual_info_regression, random_state=seed),
    }
    return functions[name]


def _select_percentile_space(score_functions: list[str], default: str) -> Any:
    def space() -> ConfigurationSpace:
        return make_space(
            Float("percentile", (1, 99), default=50),
            Categorical("score_func", score_functions, default=default),
        )

    return space


def _select_percentile(task: str, params: dict[str, Any], context: BuildContext) -> Any:
    name = params["score_func"]
    if name == "mutual_info":  # auto-sklearn's name in select_percentile_* only
        name = f"mutual_info_{'classif' if task == 'classification' else 'regression'}"
    return NonEmptySelectPercentile(
        _score_function(name, context.seed), percentile=int(float(params["percentile"]))
    )


@FEATURE_PREPROCESSORS.add(
    "select_percentile_classification",
    _select_percentile_space(["chi2", "f_classif", "mutual_info"], "chi2"),
    tasks=CLASSIFICATION,
)
def select_percentile_classification(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the ``percentile`` % best features by a univariate class-association score."""
    return _select_percentile("classification", params, context)


@FEATURE_PREPROCESSORS.add(
    "select_percentile_regression",
    _select_percentile_space(["f_regression", "mutual_info"], "f_regression"),
    tasks=REGRESSION,
)
def select_percentile_regression(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the ``percentile`` % best features by a univariate regression score."""
    return _select_percentile("regression", params, context)


def _select_rates_classification_space() -> ConfigurationSpace:
    score_func = Categorical(
        "score_func", ["chi2", "f_classif", "mutual_info_classif"], default="chi2"
    )
    mode = Categorical("mode", ["fpr", "fdr", "fwe"], default="fpr")
    return make_space(
        Float("alpha", (0.01, 0.5), default=0.1),
        score_func,
        mode,
        # auto-sklearn: mode != mutual_info_classif. Written as the equivalent InCondition
        # because ConfigSpace 1.2 holds a NotEqualsCondition satisfied when its parent is
        # inactive (here: whenever another feature preprocessor is chosen).
        InCondition(mode, score_func, ["chi2", "f_classif"]),
    )


def _select_rates_regression_space() -> ConfigurationSpace:
    # auto-sklearn offers mutual_info_regression here only for sparse data.
    return make_space(
        Float("alpha", (0.01, 0.5), default=0.1),
        Categorical("score_func", ["f_regression"], default="f_regression"),
        Categorical("mode", ["fpr", "fdr", "fwe"], default="fpr"),
    )


def _select_rates(params: dict[str, Any], context: BuildContext) -> Any:
    # Mutual information has no p-values: auto-sklearn then selects by percentile, with
    # ``alpha`` as the percentile.
    mode = params.get("mode", "percentile")
    return NonEmptyGenericUnivariateSelect(
        _score_function(params["score_func"], context.seed),
        mode=mode,
        param=float(params["alpha"]),
    )


@FEATURE_PREPROCESSORS.add(
    "select_rates_classification", _select_rates_classification_space, tasks=CLASSIFICATION
)
def select_rates_classification(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the features whose univariate test passes a false positive / discovery /
    family-wise error rate of ``alpha``."""
    return _select_rates(params, context)


@FEATURE_PREPROCESSORS.add(
    "select_rates_regression", _select_rates_regression_space, tasks=REGRESSION
)
def select_rates_regression(params: dict[str, Any], context: BuildContext) -> Any:
    """Keeps the features whose F-test passes a false positive / discovery / family-wise
    error rate of ``alpha``."""
    return _select_rates(params, context)


# -- projections and feature learning --------------------------------------------------------
def _fast_ica_space() -> ConfigurationSpace:
    n_components = Integer("n_components", (10, 2000), default=100)
    whiten = Categorical("whiten", ["False", "True"], default="False")
    return make_space(
        n_components,
        Categorical("algorithm", ["parallel", "deflation"], default="parallel"),
        whiten,
        Categorical("fun", ["logcosh", "exp", "cube"], default="logcosh"),
        EqualsCondition(n_components, whiten, "True"),
    )


@FEATURE_PREPROCESSORS.add("fast_ica", _fast_ica_space)
def fast_ica(params: dict[str, Any], context: BuildContext) -> Any:
    """Independent component analysis. ``whiten=True`` is scikit-learn's former behaviour,
    ``"arbitrary-variance"``; ``n_components`` (used only when whitening) is capped at the
    number of features."""
    whiten = as_bool(params["whiten"])
    ica = FastICA(
        algorithm=params["algorithm"],
        whiten="arbitrary-variance" if whiten else False,
        fun=params["fun"],
        random_state=context.seed,
    )
    if not whiten:
        return ica
    return resolved(ica, at_most_n_features, "n_components", params["n_components"])


def _feature_agglomeration_space() -> ConfigurationSpace:
    affinity = Categorical("affinity", ["euclidean", "manhattan", "cosine"], default="euclidean")
    linkage = Categorical("linkage", ["ward", "complete", "average"], default="ward")
    return make_space(
        Integer("n_clusters", (2, 400), default=25),
        affinity,
        linkage,
        Categorical("pooling_func", ["mean", "median", "max"]),
        ForbiddenAndConjunction(
            ForbiddenInClause(affinity, ["manhattan", "cosine"]),
            ForbiddenEqualsClause(linkage, "ward"),
        ),
    )


POOLING_FUNCTIONS = {"mean": np.mean, "median": np.median, "max": np.max}


@FEATURE_PREPROCESSORS.add("feature_agglomeration", _feature_agglomeration_space)
def feature_agglomeration(params: dict[str, Any], context: BuildContext) -> Any:
    """Merges similar features by hierarchical clustering (``affinity`` is scikit-learn's
    ``metric``; ``n_clusters`` is capped at the number of features)."""
    agglomeration = FeatureAgglomeration(
        metric=params["affinity"],
        linkage=params["linkage"],
        pooling_func=POOLING_FUNCTIONS[params["pooling_func"]],
    )
    return resolved(agglomeration, at_most_n_features, "n_clusters", params["n_clusters"])


def _kernel_space(kernels: list[str], default_gamma: float, gamma_kernels: list[str]) -> Any:
    """The kernel hyper-parameters kernel_pca and nystroem_sampler share."""
    kernel = Categorical("kernel", kernels, default="rbf")
    degree = Integer("degree", (2, 5), default=3)
    gamma = Float("gamma", (3.0517578125e-05, 8), default=default_gamma, log=True)
    coef0 = Float("coef0", (-1, 1), default=0)
    return [
        kernel,
        degree,
        gamma,
        coef0,
        EqualsCondition(degree, kernel, "poly"),
        InCondition(coef0, kernel, ["poly", "sigmoid"]),
        InCondition(gamma, kernel, gamma_kernels),
    ]


def _kernel_pca_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_components", (10, 2000), default=100),
        *_kernel_space(["poly", "rbf", "sigmoid", "cosine"], 0.01, ["poly", "rbf"]),
    )


#: Kernels that need not be positive semi-definite.
INDEFINITE_KERNELS = {"poly", "sigmoid"}


@FEATURE_PREPROCESSORS.add("kernel_pca", _kernel_pca_space)
def kernel_pca(params: dict[str, Any], context: BuildContext) -> Any:
    """Kernel principal components (at most one per training row; zero eigenvalues dropped;
    for the polynomial and sigmoid kernels, only components with positive eigenvalues)."""
    kernel = {
        "metric": params["kernel"],
        "degree": int(params.get("degree", 3)),
        "gamma": float(params.get("gamma", 0.25)),
        "coef0": float(params.get("coef0", 0.0)),
    }
    pca = KernelPCA(
        n_components=int(params["n_components"]),
        kernel=kernel["metric"],
        degree=kernel["degree"],
        gamma=kernel["gamma"],
        coef0=kernel["coef0"],
        remove_zero_eig=True,
        random_state=context.seed,
    )
    if kernel["metric"] not in INDEFINITE_KERNELS:
        return pca
    return resolved(pca, positive_kernel_components, params["n_components"], kernel)


def _kitchen_sinks_space() -> ConfigurationSpace:
    return make_space(
        Float("gamma", (3.0517578125e-05, 8), default=1.0, log=True),
        Integer("n_components", (50, 10000), default=100, log=True),
    )


@FEATURE_PREPROCESSORS.add("kitchen_sinks", _kitchen_sinks_space)
def kitchen_sinks(params: dict[str, Any], context: BuildContext) -> RBFSampler:
    """Random Fourier features approximating an RBF kernel."""
    return RBFSampler(
        gamma=float(params["gamma"]),
        n_components=int(params["n_components"]),
        random_state=context.seed,
    )


def _nystroem_space() -> ConfigurationSpace:
    # auto-sklearn adds the chi2 kernel only for signed dense data, never for its dense spaces.
    return make_space(
        *_kernel_space(["poly", "rbf", "sigmoid", "cosine"], 0.1, ["poly", "rbf", "sigmoid"]),
        Integer("n_components", (50, 10000), default=100, log=True),
    )


@FEATURE_PREPROCESSORS.add("nystroem_sampler", _nystroem_space)
def nystroem_sampler(params: dict[str, Any], context: BuildContext) -> Nystroem:
    """Nystroem approximation of a kernel feature map (at most one component per row)."""
    return Nystroem(
        kernel=params["kernel"],
        n_components=int(params["n_components"]),
        gamma=float(params.get("gamma", 1.0)),
        degree=int(params.get("degree", 3)),
        coef0=float(params.get("coef0", 1.0)),
        random_state=context.seed,
    )


def _pca_space() -> ConfigurationSpace:
    return make_space(
        Float("keep_variance", (0.5, 0.9999), default=0.9999),
        Categorical("whiten", ["False", "True"], default="False"),
    )


@FEATURE_PREPROCESSORS.add("pca", _pca_space)
def pca(params: dict[str, Any], context: BuildContext) -> PCA:
    """Principal components explaining ``keep_variance`` of the variance."""
    return PCA(
        n_components=float(params["keep_variance"]),
        whiten=as_bool(params["whiten"]),
        random_state=context.seed,
    )


def _polynomial_space() -> ConfigurationSpace:
    return make_space(
        Integer("degree", (2, 3), default=2),
        Categorical("interaction_only", ["False", "True"], default="False"),
        Categorical("include_bias", ["True", "False"], default="True"),
    )


@FEATURE_PREPROCESSORS.add("polynomial", _polynomial_space)
def polynomial(params: dict[str, Any], context: BuildContext) -> PolynomialFeatures:
    """Polynomial and interaction features of degree 2 or 3."""
    return PolynomialFeatures(
        degree=int(params["degree"]),
        interaction_only=as_bool(params["interaction_only"]),
        include_bias=as_bool(params["include_bias"]),
    )


def _random_trees_embedding_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_estimators", (10, 100), default=10),
        Integer("max_depth", (2, 10), default=5),
        Integer("min_samples_split", (2, 20), default=2),
        Integer("min_samples_leaf", (1, 20), default=1),
        Constant("min_weight_fraction_leaf", 1.0),
        Constant("max_leaf_nodes", NONE),
        Categorical("bootstrap", ["True", "False"]),
    )


@FEATURE_PREPROCESSORS.add("random_trees_embedding", _random_trees_embedding_space)
def random_trees_embedding(params: dict[str, Any], context: BuildContext) -> Any:
    """One-hot leaf indices of a forest of random trees (sparse output). Like auto-sklearn,
    ``min_weight_fraction_leaf`` and ``bootstrap`` are not passed on (1.0 would be invalid)."""
    return RandomTreesEmbedding(
        n_estimators=int(params["n_estimators"]),
        max_depth=int(params["max_depth"]),
        min_samples_split=int(params["min_samples_split"]),
        min_samples_leaf=int(params["min_samples_leaf"]),
        max_leaf_nodes=optional(params["max_leaf_nodes"]),
        sparse_output=True,
        n_jobs=context.threads,
        random_state=context.seed,
    )
