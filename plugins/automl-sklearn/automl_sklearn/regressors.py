"""auto-sklearn's regressors (the ``regressor`` stage), on today's scikit-learn.

Translations of renamed options: criterion ``mse``/``mae`` -> ``squared_error``/
``absolute_error`` (and the deprecated ``friedman_mse`` -> ``squared_error``); SGD
``squared_loss`` -> ``squared_error``; gradient boosting ``least_squares`` -> ``squared_error``;
ARD's ``n_iter`` -> ``max_iter``. As in auto-sklearn, the MLP, SGD and kernel SVM regressors
learn a standardized target (and predict in the original units). LightGBM and XGBoost come from
:mod:`automl_sklearn.boosted_trees`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    Constant,
    EqualsCondition,
    Float,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    InCondition,
    Integer,
)
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import (
    AdaBoostRegressor,
    ExtraTreesRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.linear_model import ARDRegression, Ridge, SGDRegressor
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR, LinearSVR
from sklearn.tree import DecisionTreeRegressor

from automl_core.space import BuildContext
from automl_sklearn.boosted_trees import lightgbm_component, xgboost_component
from automl_sklearn.components import ComponentList
from automl_sklearn.fit_time import at_most_n_samples, depth_from_factor, rbf_kernel, resolved
from automl_sklearn.hyperparameters import as_bool, make_space
from automl_sklearn.shared import (
    ADABOOST_ITERATIONS,
    BOOSTING_ITERATIONS,
    FOREST_ITERATIONS,
    MLP_ITERATIONS,
    SGD_ITERATIONS,
    decision_tree_kwargs,
    decision_tree_space,
    forest_kwargs,
    forest_space,
    hist_gradient_boosting_kwargs,
    hist_gradient_boosting_space,
    k_nearest_neighbors_space,
    libsvm_max_iter,
    mlp_kwargs,
    mlp_space,
    sgd_kwargs,
    sgd_space,
)

REGRESSORS = ComponentList("regressor", {"regression"})


def _standardized_target(regressor: Any) -> TransformedTargetRegressor:
    """``regressor`` fitted on the standardized target, predicting in the original units."""
    return TransformedTargetRegressor(regressor=regressor, transformer=StandardScaler())


def _criterion() -> Categorical:
    return Categorical("criterion", ["mse", "friedman_mse", "mae"])


def _adaboost_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_estimators", (50, 500), default=50),
        Float("learning_rate", (0.01, 2), default=0.1, log=True),
        Categorical("loss", ["linear", "square", "exponential"], default="linear"),
        Integer("max_depth", (1, 10), default=1),
    )


@REGRESSORS.add("adaboost", _adaboost_space, iterations=ADABOOST_ITERATIONS)
def adaboost(params: dict[str, Any], context: BuildContext) -> AdaBoostRegressor:
    """AdaBoost.R2 over regression trees of depth ``max_depth``."""
    return AdaBoostRegressor(
        estimator=DecisionTreeRegressor(max_depth=int(params["max_depth"])),
        n_estimators=int(params["n_estimators"]),
        learning_rate=float(params["learning_rate"]),
        loss=params["loss"],
        random_state=context.seed,
    )


def _ard_space() -> ConfigurationSpace:
    def prior(name: str, default: float = 1e-6) -> Float:
        return Float(name, (1e-10, 1e-3), default=default, log=True)

    return make_space(
        Constant("n_iter", 300),
        Float("tol", (1e-5, 1e-1), default=1e-3, log=True),
        Float("alpha_1", (1e-10, 1e-3), default=1e-6),  # not on a log scale in auto-sklearn
        prior("alpha_2"),
        prior("lambda_1"),
        prior("lambda_2"),
        Float("threshold_lambda", (1e3, 1e5), default=1e4, log=True),
        Constant("fit_intercept", "True"),
    )


@REGRESSORS.add("ard_regression", _ard_space)
def ard_regression(params: dict[str, Any], context: BuildContext) -> ARDRegression:
    """Bayesian ARD linear regression (``n_iter`` is scikit-learn's ``max_iter``)."""
    return ARDRegression(
        max_iter=int(params["n_iter"]),
        tol=float(params["tol"]),
        alpha_1=float(params["alpha_1"]),
        alpha_2=float(params["alpha_2"]),
        lambda_1=float(params["lambda_1"]),
        lambda_2=float(params["lambda_2"]),
        threshold_lambda=float(params["threshold_lambda"]),
        fit_intercept=as_bool(params["fit_intercept"]),
    )


def _decision_tree_space() -> ConfigurationSpace:
    return decision_tree_space(_criterion())


@REGRESSORS.add("decision_tree", _decision_tree_space)
def decision_tree(params: dict[str, Any], context: BuildContext) -> Any:
    """A regression tree of depth ``max_depth_factor`` * n_features (see the classifier)."""
    tree = DecisionTreeRegressor(**decision_tree_kwargs(params, context.seed))
    return resolved(tree, depth_from_factor, params["max_depth_factor"])


def _forest_space(bootstrap_default: str) -> ConfigurationSpace:
    return forest_space(
        _criterion(), Float("max_features", (0.1, 1.0), default=1.0), bootstrap_default
    )


@REGRESSORS.add("extra_trees", partial(_forest_space, "False"), iterations=FOREST_ITERATIONS)
def extra_trees(params: dict[str, Any], context: BuildContext) -> ExtraTreesRegressor:
    """Extra trees (512); each split draws the fraction ``max_features`` of the features."""
    kwargs = forest_kwargs(params, context)
    return ExtraTreesRegressor(max_features=float(params["max_features"]), **kwargs)


@REGRESSORS.add("random_forest", partial(_forest_space, "True"), iterations=FOREST_ITERATIONS)
def random_forest(params: dict[str, Any], context: BuildContext) -> RandomForestRegressor:
    """Random forest (512 trees); each split draws the fraction ``max_features`` of the
    features."""
    kwargs = forest_kwargs(params, context)
    return RandomForestRegressor(max_features=float(params["max_features"]), **kwargs)


def _gaussian_process_space() -> ConfigurationSpace:
    return make_space(
        # auto-sklearn's lower bound is 1e-14; ConfigSpace 1.2 rounds bounds to 13 decimals
        # (1e-14 would become 0, illegal on a log scale), so 1e-13 is the closest it allows.
        Float("alpha", (1e-13, 1.0), default=1e-8, log=True),
        Float("thetaL", (1e-10, 1e-3), default=1e-6, log=True),
        Float("thetaU", (1.0, 100000), default=100000.0, log=True),
    )


@REGRESSORS.add("gaussian_process", _gaussian_process_space)
def gaussian_process(params: dict[str, Any], context: BuildContext) -> Any:
    """Gaussian process with an anisotropic RBF kernel whose length scales lie in
    [``thetaL``, ``thetaU``] (10 optimizer restarts, normalized target)."""
    process = GaussianProcessRegressor(
        alpha=float(params["alpha"]),
        n_restarts_optimizer=10,
        normalize_y=True,
        random_state=context.seed,
    )
    bounds = (float(params["thetaL"]), float(params["thetaU"]))
    return resolved(process, rbf_kernel, bounds)


def _gradient_boosting_space() -> ConfigurationSpace:
    return hist_gradient_boosting_space(
        Categorical("loss", ["least_squares"], default="least_squares")
    )


@REGRESSORS.add("gradient_boosting", _gradient_boosting_space, iterations=BOOSTING_ITERATIONS)
def gradient_boosting(params: dict[str, Any], context: BuildContext) -> Any:
    """Histogram gradient boosting on the squared error (up to 512 iterations)."""
    kwargs = hist_gradient_boosting_kwargs(params, context.seed)
    if params["early_stop"] == "valid":
        kwargs["validation_fraction"] = float(params["validation_fraction"])
    return HistGradientBoostingRegressor(loss="squared_error", **kwargs)


@REGRESSORS.add("k_nearest_neighbors", k_nearest_neighbors_space)
def k_nearest_neighbors(params: dict[str, Any], context: BuildContext) -> Any:
    """k nearest neighbours (k is capped at the number of training rows)."""
    knn = KNeighborsRegressor(weights=params["weights"], p=int(params["p"]))
    return resolved(knn, at_most_n_samples, "n_neighbors", params["n_neighbors"])


def _liblinear_svr_space() -> ConfigurationSpace:
    loss = Categorical(
        "loss",
        ["epsilon_insensitive", "squared_epsilon_insensitive"],
        default="squared_epsilon_insensitive",
    )
    dual = Constant("dual", "False")
    return make_space(
        Float("C", (0.03125, 32768), default=1.0, log=True),
        loss,
        Float("epsilon", (0.001, 1), default=0.1, log=True),
        dual,
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        Constant("fit_intercept", "True"),
        Constant("intercept_scaling", 1),
        ForbiddenAndConjunction(
            ForbiddenEqualsClause(dual, "False"),
            ForbiddenEqualsClause(loss, "epsilon_insensitive"),
        ),
    )


@REGRESSORS.add("liblinear_svr", _liblinear_svr_space)
def liblinear_svr(params: dict[str, Any], context: BuildContext) -> LinearSVR:
    """Linear support vector regression (liblinear)."""
    return LinearSVR(
        C=float(params["C"]),
        loss=params["loss"],
        epsilon=float(params["epsilon"]),
        dual=as_bool(params["dual"]),
        tol=float(params["tol"]),
        fit_intercept=as_bool(params["fit_intercept"]),
        intercept_scaling=float(params["intercept_scaling"]),
        random_state=context.seed,
    )


def _libsvm_svr_space() -> ConfigurationSpace:
    kernel = Categorical("kernel", ["linear", "poly", "rbf", "sigmoid"], default="rbf")
    degree = Integer("degree", (2, 5), default=3)
    gamma = Float("gamma", (3.0517578125e-05, 8), default=0.1, log=True)
    coef0 = Float("coef0", (-1, 1), default=0)
    return make_space(
        Float("C", (0.03125, 32768), default=1.0, log=True),
        kernel,
        degree,
        gamma,
        coef0,
        Categorical("shrinking", ["True", "False"], default="True"),
        Float("tol", (1e-5, 1e-1), default=1e-3, log=True),
        Constant("max_iter", -1),
        Float("epsilon", (0.001, 1), default=0.1, log=True),
        EqualsCondition(degree, kernel, "poly"),
        InCondition(gamma, kernel, ["poly", "rbf"]),
        InCondition(coef0, kernel, ["poly", "sigmoid"]),
    )


@REGRESSORS.add("libsvm_svr", _libsvm_svr_space)
def libsvm_svr(params: dict[str, Any], context: BuildContext) -> TransformedTargetRegressor:
    """Kernel support vector regression (libsvm) on the standardized target (at most 10^6
    iterations, see :func:`~automl_sklearn.shared.libsvm_max_iter`)."""
    svr = SVR(
        kernel=params["kernel"],
        C=float(params["C"]),
        epsilon=float(params["epsilon"]),
        tol=float(params["tol"]),
        shrinking=as_bool(params["shrinking"]),
        degree=int(params.get("degree", 3)),
        gamma=float(params.get("gamma", 0.1)),
        coef0=float(params.get("coef0", 0.0)),
        max_iter=libsvm_max_iter(params["max_iter"]),
    )
    return _standardized_target(svr)


@REGRESSORS.add("mlp", partial(mlp_space, "tanh"), iterations=MLP_ITERATIONS)
def mlp(params: dict[str, Any], context: BuildContext) -> TransformedTargetRegressor:
    """Multi-layer perceptron (adam, up to 512 epochs, early stopping) on the standardized
    target."""
    return _standardized_target(MLPRegressor(**mlp_kwargs(params, context.seed)))


def _sgd_space() -> ConfigurationSpace:
    epsilon_losses = ["huber", "epsilon_insensitive", "squared_epsilon_insensitive"]
    loss = Categorical("loss", ["squared_loss", *epsilon_losses], default="squared_loss")
    epsilon = Float("epsilon", (1e-5, 1e-1), default=0.1, log=True)
    return sgd_space(
        loss,
        epsilon,
        lambda epsilon, loss: InCondition(epsilon, loss, epsilon_losses),
        power_t_default=0.25,
    )


@REGRESSORS.add("sgd", _sgd_space, iterations=SGD_ITERATIONS)
def sgd(params: dict[str, Any], context: BuildContext) -> TransformedTargetRegressor:
    """Linear model trained by stochastic gradient descent on the standardized target
    (``squared_loss`` is today's ``squared_error``)."""
    loss = "squared_error" if params["loss"] == "squared_loss" else params["loss"]
    kwargs = sgd_kwargs(params, context.seed, default_power_t=0.25)
    return _standardized_target(SGDRegressor(loss=loss, **kwargs))


def _ridge_space() -> ConfigurationSpace:
    return make_space(Float("alpha", (1e-5, 1e3), default=1.0, log=True))


@REGRESSORS.add("ridge", _ridge_space)
def ridge(params: dict[str, Any], context: BuildContext) -> Ridge:
    """L2-regularised least squares: not in auto-sklearn's list, added here because on small
    regression datasets a linear model with a tuned penalty is often the one to beat (ARD's
    priors and SGD's learning rate are harder to get right in a short search)."""
    return Ridge(alpha=float(params["alpha"]))


REGRESSORS.append(lightgbm_component("regression"))
REGRESSORS.append(xgboost_component("regression"))
