"""Hyper-parameter spaces and translations that auto-sklearn's classifiers and regressors share.

The spaces reproduce auto-sklearn 0.15 (names, ranges, log scales, defaults, conditions), with
its constants (``Constant``/``UnParametrized`` hyper-parameters) kept, since its stored
configurations name them. The ``*_kwargs`` functions translate a configuration into today's
scikit-learn arguments.
"""

from __future__ import annotations

from typing import Any

from ConfigSpace import (
    Categorical,
    ConfigurationSpace,
    Constant,
    EqualsCondition,
    Float,
    InCondition,
    Integer,
)

from automl_core.space import BuildContext, Iterations
from automl_sklearn.hyperparameters import NONE, as_bool, make_space, optional

#: auto-sklearn (scikit-learn < 1.0) criterion names -> today's names. ``friedman_mse`` is
#: deprecated since scikit-learn 1.9, which documents it as always equivalent to
#: ``squared_error``.
CRITERIA = {"mse": "squared_error", "mae": "absolute_error", "friedman_mse": "squared_error"}

#: Trees per forest: auto-sklearn grows forests iteratively up to this many trees.
FOREST_SIZE = 512
#: Boosting iterations of gradient boosting and epochs of the MLP (auto-sklearn's maximum).
MAX_ITER = 512
#: Epochs of the linear SGD models (auto-sklearn's maximum).
SGD_MAX_ITER = 1024
#: Multi-fidelity budgets shorten these (auto-sklearn 2.0: trees 32 -> 512, linear 64 -> 1024).
FOREST_ITERATIONS = Iterations("n_estimators", 32, FOREST_SIZE)
BOOSTING_ITERATIONS = Iterations("max_iter", 32, MAX_ITER)
MLP_ITERATIONS = Iterations("max_iter", 32, MAX_ITER)
SGD_ITERATIONS = Iterations("max_iter", 64, SGD_MAX_ITER)
#: AdaBoost's ``n_estimators`` is a hyper-parameter (50..500); a budget shortens it to 16+.
ADABOOST_ITERATIONS = Iterations("n_estimators", 16, 500)
#: libsvm iterations for auto-sklearn's ``max_iter = -1`` ("no limit"). A kernel SVM that
#: cannot converge (e.g. a cubic kernel on unscaled features with C = 10^4) otherwise runs
#: forever; converging fits of data this framework handles stay far below this.
LIBSVM_MAX_ITER = 1_000_000


def libsvm_max_iter(value: Any) -> int:
    """auto-sklearn's libsvm ``max_iter``, with "no limit" (-1) capped at LIBSVM_MAX_ITER."""
    value = int(value)
    return LIBSVM_MAX_ITER if value < 0 else value


def criterion(value: str) -> str:
    """A tree criterion in today's scikit-learn spelling."""
    return CRITERIA.get(value, value)


# -- trees -----------------------------------------------------------------------------------
def forest_space(
    criterion_hp: Categorical, max_features: Float, bootstrap_default: str
) -> ConfigurationSpace:
    """Random forest and extra trees: what varies between them and between tasks is the
    criterion, the ``max_features`` range and whether bootstrapping is on by default."""
    return make_space(
        criterion_hp,
        max_features,
        Constant("max_depth", NONE),
        Integer("min_samples_split", (2, 20), default=2),
        Integer("min_samples_leaf", (1, 20), default=1),
        Constant("min_weight_fraction_leaf", 0.0),
        Constant("max_leaf_nodes", NONE),
        Constant("min_impurity_decrease", 0.0),
        Categorical("bootstrap", ["True", "False"], default=bootstrap_default),
    )


def forest_kwargs(params: dict[str, Any], context: BuildContext) -> dict[str, Any]:
    """Arguments of a scikit-learn forest, ``max_features`` excepted (its meaning varies),
    on the trial's threads."""
    return {
        "n_estimators": int(params.get("n_estimators", FOREST_SIZE)),
        "criterion": criterion(params["criterion"]),
        "max_depth": optional(params["max_depth"]),
        "min_samples_split": int(params["min_samples_split"]),
        "min_samples_leaf": int(params["min_samples_leaf"]),
        "min_weight_fraction_leaf": float(params["min_weight_fraction_leaf"]),
        "max_leaf_nodes": optional(params["max_leaf_nodes"]),
        "min_impurity_decrease": float(params["min_impurity_decrease"]),
        "bootstrap": as_bool(params["bootstrap"]),
        "n_jobs": context.threads,
        "random_state": context.seed,
    }


def decision_tree_space(criterion_hp: Categorical) -> ConfigurationSpace:
    return make_space(
        criterion_hp,
        Constant("max_features", 1.0),
        Float("max_depth_factor", (0.0, 2.0), default=0.5),
        Integer("min_samples_split", (2, 20), default=2),
        Integer("min_samples_leaf", (1, 20), default=1),
        Constant("min_weight_fraction_leaf", 0.0),
        Constant("max_leaf_nodes", NONE),
        Constant("min_impurity_decrease", 0.0),
    )


def decision_tree_kwargs(params: dict[str, Any], seed: int) -> dict[str, Any]:
    """Arguments of a scikit-learn decision tree, ``max_depth`` excepted (it depends on the
    number of features). auto-sklearn never passes ``max_features`` on: it is 1.0, all of them.
    """
    return {
        "criterion": criterion(params["criterion"]),
        "min_samples_split": int(params["min_samples_split"]),
        "min_samples_leaf": int(params["min_samples_leaf"]),
        "min_weight_fraction_leaf": float(params["min_weight_fraction_leaf"]),
        "max_leaf_nodes": optional(params["max_leaf_nodes"]),
        "min_impurity_decrease": float(params["min_impurity_decrease"]),
        "random_state": seed,
    }


# -- histogram gradient boosting -------------------------------------------------------------
def hist_gradient_boosting_space(loss: Any) -> ConfigurationSpace:
    """auto-sklearn's ``gradient_boosting`` (scikit-learn's HistGradientBoosting*)."""
    early_stop = Categorical("early_stop", ["off", "valid", "train"], default="off")
    n_iter_no_change = Integer("n_iter_no_change", (1, 20), default=10)
    validation_fraction = Float("validation_fraction", (0.01, 0.4), default=0.1)
    return make_space(
        loss,
        Float("learning_rate", (0.01, 1), default=0.1, log=True),
        Integer("min_samples_leaf", (1, 200), default=20, log=True),
        Constant("max_depth", NONE),
        Integer("max_leaf_nodes", (3, 2047), default=31, log=True),
        Constant("max_bins", 255),
        Float("l2_regularization", (1e-10, 1), default=1e-10, log=True),
        early_stop,
        Constant("tol", 1e-7),
        Constant("scoring", "loss"),
        n_iter_no_change,
        validation_fraction,
        InCondition(n_iter_no_change, early_stop, ["valid", "train"]),
        EqualsCondition(validation_fraction, early_stop, "valid"),
    )


def hist_gradient_boosting_kwargs(params: dict[str, Any], seed: int) -> dict[str, Any]:
    """Arguments of HistGradientBoosting*, ``loss`` and ``validation_fraction`` excepted.

    ``early_stop``: ``off`` -- none; ``train`` -- on the training loss; ``valid`` -- on a
    held-out fraction.
    """
    early_stop = params["early_stop"]
    return {
        "learning_rate": float(params["learning_rate"]),
        "max_iter": int(params.get("max_iter", MAX_ITER)),
        "min_samples_leaf": int(params["min_samples_leaf"]),
        "max_depth": optional(params["max_depth"]),
        "max_leaf_nodes": optional(params["max_leaf_nodes"]),
        "max_bins": int(params["max_bins"]),
        "l2_regularization": float(params["l2_regularization"]),
        "early_stopping": early_stop != "off",
        "n_iter_no_change": int(params.get("n_iter_no_change", 10)),
        "validation_fraction": None,
        "tol": float(params["tol"]),
        "scoring": optional(params["scoring"]),
        "random_state": seed,
    }


# -- k nearest neighbours, multi-layer perceptron --------------------------------------------
def k_nearest_neighbors_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_neighbors", (1, 100), default=1, log=True),
        Categorical("weights", ["uniform", "distance"], default="uniform"),
        Categorical("p", [1, 2], default=2),
    )


def mlp_space(default_activation: str) -> ConfigurationSpace:
    """auto-sklearn's MLP: adam, always early stopping (on the training loss or a validation
    split); the classifier defaults to relu, the regressor to tanh."""
    early_stopping = Categorical("early_stopping", ["valid", "train"], default="valid")
    validation_fraction = Constant("validation_fraction", 0.1)
    return make_space(
        Integer("hidden_layer_depth", (1, 3), default=1),
        Integer("num_nodes_per_layer", (16, 264), default=32, log=True),
        Categorical("activation", ["tanh", "relu"], default=default_activation),
        Float("alpha", (1e-7, 1e-1), default=1e-4, log=True),
        Float("learning_rate_init", (1e-4, 0.5), default=1e-3, log=True),
        early_stopping,
        Constant("n_iter_no_change", 32),
        validation_fraction,
        Constant("tol", 1e-4),
        Constant("solver", "adam"),
        Constant("batch_size", "auto"),
        Constant("shuffle", "True"),
        Constant("beta_1", 0.9),
        Constant("beta_2", 0.999),
        Constant("epsilon", 1e-8),
        InCondition(validation_fraction, early_stopping, ["valid"]),
    )


def mlp_kwargs(params: dict[str, Any], seed: int) -> dict[str, Any]:
    """Arguments of MLPClassifier/MLPRegressor. ``early_stopping="train"`` stops when the
    training loss stalls (scikit-learn's behaviour without a validation split)."""
    batch_size = params["batch_size"]
    return {
        "hidden_layer_sizes": (int(params["num_nodes_per_layer"]),)
        * int(params["hidden_layer_depth"]),
        "activation": params["activation"],
        "solver": params["solver"],
        "alpha": float(params["alpha"]),
        "batch_size": batch_size if batch_size == "auto" else int(batch_size),
        "learning_rate_init": float(params["learning_rate_init"]),
        "max_iter": int(params.get("max_iter", MAX_ITER)),
        "shuffle": as_bool(params["shuffle"]),
        "tol": float(params["tol"]),
        "early_stopping": params["early_stopping"] == "valid",
        "validation_fraction": float(params.get("validation_fraction", 0.1)),
        "n_iter_no_change": int(params["n_iter_no_change"]),
        # auto-sklearn 0.15 passes beta_1 and beta_2 swapped; they are passed as named here.
        "beta_1": float(params["beta_1"]),
        "beta_2": float(params["beta_2"]),
        "epsilon": float(params["epsilon"]),
        "random_state": seed,
    }


def sgd_kwargs(params: dict[str, Any], seed: int, default_power_t: float) -> dict[str, Any]:
    """Arguments of SGDClassifier/SGDRegressor, ``loss`` excepted. Inactive hyper-parameters
    take auto-sklearn's defaults."""
    return {
        "penalty": params["penalty"],
        "alpha": float(params["alpha"]),
        "l1_ratio": float(params.get("l1_ratio", 0.15)),
        "fit_intercept": as_bool(params["fit_intercept"]),
        "max_iter": int(params.get("max_iter", SGD_MAX_ITER)),
        "tol": float(params["tol"]),
        "epsilon": float(params.get("epsilon", 0.1)),
        "learning_rate": params["learning_rate"],
        "eta0": float(params.get("eta0", 0.01)),
        "power_t": float(params.get("power_t", default_power_t)),
        "average": as_bool(params["average"]),
        "shuffle": True,
        "random_state": seed,
    }


def linear_svc_kwargs(params: dict[str, Any], seed: int) -> dict[str, Any]:
    """liblinear's LinearSVC arguments: the classifier and the feature selector share them."""
    return {
        "penalty": params["penalty"],
        "loss": params["loss"],
        "dual": as_bool(params["dual"]),
        "tol": float(params["tol"]),
        "C": float(params["C"]),
        "multi_class": params["multi_class"],
        "fit_intercept": as_bool(params["fit_intercept"]),
        "intercept_scaling": float(params["intercept_scaling"]),
        "random_state": seed,
    }


def sgd_space(
    loss: Categorical, epsilon: Float, epsilon_condition: Any, power_t_default: float
) -> ConfigurationSpace:
    """auto-sklearn's SGD space; the classifier and the regressor differ in their losses, in
    ``epsilon`` (and which losses use it) and in ``power_t``'s default.
    ``epsilon_condition(epsilon, loss)`` makes the condition on ``epsilon``."""
    penalty = Categorical("penalty", ["l1", "l2", "elasticnet"], default="l2")
    l1_ratio = Float("l1_ratio", (1e-9, 1.0), default=0.15, log=True)
    learning_rate = Categorical(
        "learning_rate", ["optimal", "invscaling", "constant"], default="invscaling"
    )
    eta0 = Float("eta0", (1e-7, 1e-1), default=0.01, log=True)
    power_t = Float("power_t", (1e-5, 1), default=power_t_default)
    return make_space(
        loss,
        penalty,
        Float("alpha", (1e-7, 1e-1), default=0.0001, log=True),
        l1_ratio,
        Constant("fit_intercept", "True"),
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        epsilon,
        learning_rate,
        eta0,
        power_t,
        Categorical("average", ["False", "True"], default="False"),
        EqualsCondition(l1_ratio, penalty, "elasticnet"),
        epsilon_condition(epsilon, loss),
        EqualsCondition(power_t, learning_rate, "invscaling"),
        InCondition(eta0, learning_rate, ["invscaling", "constant"]),
    )
