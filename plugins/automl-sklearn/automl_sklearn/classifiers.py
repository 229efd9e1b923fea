"""auto-sklearn's classifiers (the ``classifier`` stage), on today's scikit-learn.

Where scikit-learn renamed or removed an option the space keeps auto-sklearn's value and the
builder translates it: SGD ``loss="log"`` is ``"log_loss"``; gradient boosting ``loss="auto"``
is ``"log_loss"``; AdaBoost's ``algorithm`` no longer exists (scikit-learn now always uses
SAMME, so both values build the same model); PassiveAggressiveClassifier is deprecated and
built as the equivalent SGDClassifier. Classifiers that only have a decision function get a
``predict_proba`` (see :class:`~automl_sklearn.wrappers.DecisionProba`). LightGBM and XGBoost
come from :mod:`automl_sklearn.boosted_trees`.
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
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.ensemble import (
    AdaBoostClassifier,
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import SGDClassifier
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

from automl_core.space import BuildContext
from automl_sklearn.boosted_trees import lightgbm_component, xgboost_component
from automl_sklearn.components import ComponentList
from automl_sklearn.fit_time import (
    at_most_n_samples,
    depth_from_factor,
    n_features_power,
    resolved,
    validation_size,
)
from automl_sklearn.hyperparameters import as_bool, make_space
from automl_sklearn.shared import (
    ADABOOST_ITERATIONS,
    BOOSTING_ITERATIONS,
    FOREST_ITERATIONS,
    MLP_ITERATIONS,
    SGD_ITERATIONS,
    SGD_MAX_ITER,
    decision_tree_kwargs,
    decision_tree_space,
    forest_kwargs,
    forest_space,
    hist_gradient_boosting_kwargs,
    hist_gradient_boosting_space,
    k_nearest_neighbors_space,
    libsvm_max_iter,
    linear_svc_kwargs,
    mlp_kwargs,
    mlp_space,
    sgd_kwargs,
    sgd_space,
)
from automl_sklearn.wrappers import DecisionProba, NonNegativeInput

CLASSIFIERS = ComponentList("classifier", {"classification"})


def _adaboost_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_estimators", (50, 500), default=50),
        Float("learning_rate", (0.01, 2), default=0.1, log=True),
        Categorical("algorithm", ["SAMME.R", "SAMME"], default="SAMME.R"),
        Integer("max_depth", (1, 10), default=1),
    )


@CLASSIFIERS.add("adaboost", _adaboost_space, iterations=ADABOOST_ITERATIONS)
def adaboost(params: dict[str, Any], context: BuildContext) -> AdaBoostClassifier:
    """AdaBoost over decision trees of depth ``max_depth``."""
    return AdaBoostClassifier(
        estimator=DecisionTreeClassifier(max_depth=int(params["max_depth"])),
        n_estimators=int(params["n_estimators"]),
        learning_rate=float(params["learning_rate"]),
        random_state=context.seed,
    )


def _naive_bayes_space() -> ConfigurationSpace:
    return make_space(
        Float("alpha", (1e-2, 100), default=1, log=True),
        Categorical("fit_prior", ["True", "False"], default="True"),
    )


@CLASSIFIERS.add("bernoulli_nb", _naive_bayes_space)
def bernoulli_nb(params: dict[str, Any], context: BuildContext) -> BernoulliNB:
    """Bernoulli naive Bayes (features binarised at 0)."""
    return BernoulliNB(alpha=float(params["alpha"]), fit_prior=as_bool(params["fit_prior"]))


@CLASSIFIERS.add("multinomial_nb", _naive_bayes_space)
def multinomial_nb(params: dict[str, Any], context: BuildContext) -> NonNegativeInput:
    """Multinomial naive Bayes; negative feature values are clipped to zero (as in
    auto-sklearn), so it runs after any rescaling or feature preprocessor."""
    return NonNegativeInput(
        MultinomialNB(alpha=float(params["alpha"]), fit_prior=as_bool(params["fit_prior"]))
    )


@CLASSIFIERS.add("gaussian_nb")
def gaussian_nb(params: dict[str, Any], context: BuildContext) -> GaussianNB:
    """Gaussian naive Bayes."""
    return GaussianNB()


def _decision_tree_space() -> ConfigurationSpace:
    return decision_tree_space(Categorical("criterion", ["gini", "entropy"], default="gini"))


@CLASSIFIERS.add("decision_tree", _decision_tree_space)
def decision_tree(params: dict[str, Any], context: BuildContext) -> Any:
    """A decision tree of depth ``max_depth_factor`` * n_features.

    (auto-sklearn 0.15 truncates the factor to an integer first, which makes its default a
    stump; the factor is used as a real number here.)
    """
    tree = DecisionTreeClassifier(**decision_tree_kwargs(params, context.seed))
    return resolved(tree, depth_from_factor, params["max_depth_factor"])


def _forest_space(bootstrap_default: str) -> ConfigurationSpace:
    return forest_space(
        Categorical("criterion", ["gini", "entropy"], default="gini"),
        Float("max_features", (0.0, 1.0), default=0.5),
        bootstrap_default,
    )


@CLASSIFIERS.add("extra_trees", partial(_forest_space, "False"), iterations=FOREST_ITERATIONS)
def extra_trees(params: dict[str, Any], context: BuildContext) -> Any:
    """Extra trees (512); each split draws n_features ** ``max_features`` features."""
    forest = ExtraTreesClassifier(**forest_kwargs(params, context))
    return resolved(forest, n_features_power, "max_features", params["max_features"])


@CLASSIFIERS.add("random_forest", partial(_forest_space, "True"), iterations=FOREST_ITERATIONS)
def random_forest(params: dict[str, Any], context: BuildContext) -> Any:
    """Random forest (512 trees); each split draws n_features ** ``max_features`` features."""
    forest = RandomForestClassifier(**forest_kwargs(params, context))
    return resolved(forest, n_features_power, "max_features", params["max_features"])


def _gradient_boosting_space() -> ConfigurationSpace:
    return hist_gradient_boosting_space(Constant("loss", "auto"))


@CLASSIFIERS.add("gradient_boosting", _gradient_boosting_space, iterations=BOOSTING_ITERATIONS)
def gradient_boosting(params: dict[str, Any], context: BuildContext) -> Any:
    """Histogram gradient boosting (up to 512 iterations), with optional early stopping."""
    model = HistGradientBoostingClassifier(
        loss="log_loss", **hist_gradient_boosting_kwargs(params, context.seed)
    )
    if params["early_stop"] != "valid":
        return model
    return resolved(model, validation_size, params["validation_fraction"])


@CLASSIFIERS.add("k_nearest_neighbors", k_nearest_neighbors_space)
def k_nearest_neighbors(params: dict[str, Any], context: BuildContext) -> Any:
    """k nearest neighbours (k is capped at the number of training rows)."""
    knn = KNeighborsClassifier(weights=params["weights"], p=int(params["p"]))
    return resolved(knn, at_most_n_samples, "n_neighbors", params["n_neighbors"])


def _lda_space() -> ConfigurationSpace:
    shrinkage = Categorical("shrinkage", ["None", "auto", "manual"], default="None")
    shrinkage_factor = Float("shrinkage_factor", (0.0, 1.0), default=0.5)
    return make_space(
        shrinkage,
        shrinkage_factor,
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        EqualsCondition(shrinkage_factor, shrinkage, "manual"),
    )


@CLASSIFIERS.add("lda", _lda_space)
def lda(params: dict[str, Any], context: BuildContext) -> LinearDiscriminantAnalysis:
    """Linear discriminant analysis: SVD without shrinkage, else least squares with
    Ledoit-Wolf (``auto``) or a fixed (``manual``) shrinkage."""
    shrinkage = params["shrinkage"]
    if shrinkage == "None":
        return LinearDiscriminantAnalysis(solver="svd", tol=float(params["tol"]))
    amount = "auto" if shrinkage == "auto" else float(params["shrinkage_factor"])
    return LinearDiscriminantAnalysis(solver="lsqr", shrinkage=amount, tol=float(params["tol"]))


def _liblinear_svc_space() -> ConfigurationSpace:
    penalty = Categorical("penalty", ["l1", "l2"], default="l2")
    loss = Categorical("loss", ["hinge", "squared_hinge"], default="squared_hinge")
    dual = Constant("dual", "False")
    return make_space(
        penalty,
        loss,
        dual,
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        Float("C", (0.03125, 32768), default=1.0, log=True),
        Constant("multi_class", "ovr"),
        Constant("fit_intercept", "True"),
        Constant("intercept_scaling", 1),
        ForbiddenAndConjunction(
            ForbiddenEqualsClause(penalty, "l1"), ForbiddenEqualsClause(loss, "hinge")
        ),
        ForbiddenAndConjunction(
            ForbiddenEqualsClause(dual, "False"),
            ForbiddenEqualsClause(penalty, "l2"),
            ForbiddenEqualsClause(loss, "hinge"),
        ),
        ForbiddenAndConjunction(
            ForbiddenEqualsClause(dual, "False"), ForbiddenEqualsClause(penalty, "l1")
        ),
    )


@CLASSIFIERS.add("liblinear_svc", _liblinear_svc_space)
def liblinear_svc(params: dict[str, Any], context: BuildContext) -> DecisionProba:
    """Linear SVM (liblinear), one-vs-rest."""
    return DecisionProba(LinearSVC(**linear_svc_kwargs(params, context.seed)))


def _libsvm_svc_space() -> ConfigurationSpace:
    kernel = Categorical("kernel", ["rbf", "poly", "sigmoid"], default="rbf")
    degree = Integer("degree", (2, 5), default=3)
    coef0 = Float("coef0", (-1, 1), default=0)
    return make_space(
        Float("C", (0.03125, 32768), default=1.0, log=True),
        kernel,
        degree,
        Float("gamma", (3.0517578125e-05, 8), default=0.1, log=True),
        coef0,
        Categorical("shrinking", ["True", "False"], default="True"),
        Float("tol", (1e-5, 1e-1), default=1e-3, log=True),
        Constant("max_iter", -1),
        EqualsCondition(degree, kernel, "poly"),
        InCondition(coef0, kernel, ["poly", "sigmoid"]),
    )


@CLASSIFIERS.add("libsvm_svc", _libsvm_svc_space)
def libsvm_svc(params: dict[str, Any], context: BuildContext) -> DecisionProba:
    """Kernel SVM (libsvm) with an RBF, polynomial or sigmoid kernel (at most 10^6
    iterations, see :func:`~automl_sklearn.shared.libsvm_max_iter`)."""
    return DecisionProba(
        SVC(
            C=float(params["C"]),
            kernel=params["kernel"],
            degree=int(params.get("degree", 3)),
            gamma=float(params["gamma"]),
            coef0=float(params.get("coef0", 0.0)),
            shrinking=as_bool(params["shrinking"]),
            tol=float(params["tol"]),
            max_iter=libsvm_max_iter(params["max_iter"]),
            decision_function_shape="ovr",
            random_state=context.seed,
        )
    )


@CLASSIFIERS.add("mlp", partial(mlp_space, "relu"), iterations=MLP_ITERATIONS)
def mlp(params: dict[str, Any], context: BuildContext) -> MLPClassifier:
    """Multi-layer perceptron (adam, up to 512 epochs, early stopping)."""
    return MLPClassifier(**mlp_kwargs(params, context.seed))


def _passive_aggressive_space() -> ConfigurationSpace:
    return make_space(
        Categorical("loss", ["hinge", "squared_hinge"], default="hinge"),
        Constant("fit_intercept", "True"),
        Float("tol", (1e-5, 1e-1), default=1e-4, log=True),
        Float("C", (1e-5, 10), default=1.0, log=True),
        Categorical("average", ["False", "True"], default="False"),
    )


@CLASSIFIERS.add("passive_aggressive", _passive_aggressive_space, iterations=SGD_ITERATIONS)
def passive_aggressive(params: dict[str, Any], context: BuildContext) -> DecisionProba:
    """Passive-aggressive linear classifier: ``loss`` hinge is PA-I, squared_hinge PA-II
    (built as scikit-learn's equivalent SGDClassifier, step size ``C``)."""
    return DecisionProba(
        SGDClassifier(
            loss="hinge",
            penalty=None,
            learning_rate="pa1" if params["loss"] == "hinge" else "pa2",
            eta0=float(params["C"]),
            fit_intercept=as_bool(params["fit_intercept"]),
            tol=float(params["tol"]),
            average=as_bool(params["average"]),
            max_iter=int(params.get("max_iter", SGD_MAX_ITER)),
            shuffle=True,
            random_state=context.seed,
        )
    )


def _qda_space() -> ConfigurationSpace:
    return make_space(Float("reg_param", (0.0, 1.0), default=0.0))


@CLASSIFIERS.add("qda", _qda_space)
def qda(params: dict[str, Any], context: BuildContext) -> QuadraticDiscriminantAnalysis:
    """Quadratic discriminant analysis with covariance regularisation ``reg_param``.

    Today's scikit-learn refuses classes whose covariance looks rank deficient (variance below
    ``tol`` along some direction), where the one auto-sklearn used only warned; ``tol=0``
    keeps the old behaviour, so ``reg_param=0`` works on correlated features. A class with no
    more rows than there are features is still refused (the old QDA fitted a degenerate model
    there).
    """
    return QuadraticDiscriminantAnalysis(reg_param=float(params["reg_param"]), tol=0.0)


def _sgd_space() -> ConfigurationSpace:
    loss = Categorical(
        "loss", ["hinge", "log", "modified_huber", "squared_hinge", "perceptron"], default="log"
    )
    epsilon = Float("epsilon", (1e-5, 1e-1), default=1e-4, log=True)
    return sgd_space(
        loss,
        epsilon,
        lambda epsilon, loss: EqualsCondition(epsilon, loss, "modified_huber"),
        power_t_default=0.5,
    )


#: SGD losses with a ``predict_proba`` of their own.
_PROBABILISTIC_LOSSES = {"log_loss", "modified_huber"}


@CLASSIFIERS.add("sgd", _sgd_space, iterations=SGD_ITERATIONS)
def sgd(params: dict[str, Any], context: BuildContext) -> Any:
    """Linear model trained by stochastic gradient descent (``loss="log"`` is logistic
    regression, today's ``"log_loss"``)."""
    loss = "log_loss" if params["loss"] == "log" else params["loss"]
    model = SGDClassifier(loss=loss, **sgd_kwargs(params, context.seed, default_power_t=0.5))
    return model if loss in _PROBABILISTIC_LOSSES else DecisionProba(model)


CLASSIFIERS.append(lightgbm_component("classification"))
CLASSIFIERS.append(xgboost_component("classification"))
