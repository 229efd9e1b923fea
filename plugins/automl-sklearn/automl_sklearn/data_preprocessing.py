"""auto-sklearn's data preprocessing stages: categorical encoding, category coalescence,
numerical imputation, rescaling, and class balancing.

Categorical columns go through [missing -> own category, codes] (fixed, see
:func:`~automl_sklearn.transformers.categorical_codes`) -> ``category_coalescence`` ->
``categorical_encoding``; numerical columns through ``imputation`` -> ``rescaling``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer
from sklearn.feature_selection import SelectFromModel
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)
from sklearn.utils.validation import has_fit_parameter

from automl_core.space import BuildContext
from automl_sklearn.components import ComponentList
from automl_sklearn.hyperparameters import make_space
from automl_sklearn.transformers import OTHER, MinorityCoalescer
from automl_sklearn.wrappers import BalancedSampleWeights, Wrapper

CATEGORICAL_ENCODINGS = ComponentList("categorical_encoding")
CATEGORY_COALESCENCES = ComponentList("category_coalescence")
IMPUTATIONS = ComponentList("imputation")
RESCALINGS = ComponentList("rescaling")
BALANCINGS = ComponentList("balancing", {"classification"})


def identity() -> FunctionTransformer:
    """A step that passes its input through (a real estimator, unlike ``"passthrough"``)."""
    return FunctionTransformer(accept_sparse=True)


# -- categorical encoding ----------------------------------------------------------------------
@CATEGORICAL_ENCODINGS.add("one_hot_encoding")
def one_hot_encoding(params: dict[str, Any], context: BuildContext) -> OneHotEncoder:
    """One column per category; unseen categories encode as all zeros."""
    return OneHotEncoder(handle_unknown="ignore", sparse_output=False)


@CATEGORICAL_ENCODINGS.add("encoding")
def ordinal_encoding(params: dict[str, Any], context: BuildContext) -> OrdinalEncoder:
    """Ordinal codes renumbered 0..k-1 after coalescence; unseen categories are -1."""
    return OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=OTHER)


@CATEGORICAL_ENCODINGS.add("no_encoding")
def no_encoding(params: dict[str, Any], context: BuildContext) -> FunctionTransformer:
    """The ordinal codes as they come (auto-sklearn encodes categories as codes up front)."""
    return identity()


# -- category coalescence ----------------------------------------------------------------------
def _minority_coalescer_space() -> ConfigurationSpace:
    return make_space(Float("minimum_fraction", (0.0001, 0.5), default=0.01, log=True))


@CATEGORY_COALESCENCES.add("minority_coalescer", _minority_coalescer_space)
def minority_coalescer(params: dict[str, Any], context: BuildContext) -> MinorityCoalescer:
    """Merges the categories rarer than ``minimum_fraction`` of the rows into one."""
    return MinorityCoalescer(float(params["minimum_fraction"]))


@CATEGORY_COALESCENCES.add("no_coalescense")  # sic: auto-sklearn's spelling
def no_coalescense(params: dict[str, Any], context: BuildContext) -> FunctionTransformer:
    """Keeps every category."""
    return identity()


# -- numerical imputation ----------------------------------------------------------------------
def _imputation_space() -> ConfigurationSpace:
    return make_space(Categorical("strategy", ["mean", "median", "most_frequent"], default="mean"))


@IMPUTATIONS.add("numerical_imputation", _imputation_space)
def numerical_imputation(params: dict[str, Any], context: BuildContext) -> SimpleImputer:
    """Fills missing numbers with the column's mean, median or most frequent value (a column
    that is empty in training is kept, filled with 0)."""
    return SimpleImputer(strategy=params["strategy"], keep_empty_features=True)


# -- rescaling ---------------------------------------------------------------------------------
@RESCALINGS.add("none")
def no_rescaling(params: dict[str, Any], context: BuildContext) -> FunctionTransformer:
    """Leaves numbers as they are."""
    return identity()


@RESCALINGS.add("minmax")
def minmax(params: dict[str, Any], context: BuildContext) -> MinMaxScaler:
    """Scales each column to [0, 1]."""
    return MinMaxScaler()


@RESCALINGS.add("normalize")
def normalize(params: dict[str, Any], context: BuildContext) -> Normalizer:
    """Scales each row (of the numerical columns) to unit L2 norm."""
    return Normalizer()


@RESCALINGS.add("power_transformer")
def power_transformer(params: dict[str, Any], context: BuildContext) -> PowerTransformer:
    """Yeo-Johnson transform to a Gaussian-like shape, then standardization."""
    return PowerTransformer()


def _quantile_transformer_space() -> ConfigurationSpace:
    return make_space(
        Integer("n_quantiles", (10, 2000), default=1000),
        Categorical("output_distribution", ["normal", "uniform"]),
    )


@RESCALINGS.add("quantile_transformer", _quantile_transformer_space)
def quantile_transformer(params: dict[str, Any], context: BuildContext) -> QuantileTransformer:
    """Maps each column through its quantiles to a uniform or normal distribution
    (``n_quantiles`` is capped at the number of rows by scikit-learn)."""
    return QuantileTransformer(
        n_quantiles=int(params["n_quantiles"]),
        output_distribution=params["output_distribution"],
        random_state=context.seed,
    )


def _robust_scaler_space() -> ConfigurationSpace:
    return make_space(
        Float("q_min", (0.001, 0.3), default=0.25),
        Float("q_max", (0.7, 0.999), default=0.75),
    )


@RESCALINGS.add("robust_scaler", _robust_scaler_space)
def robust_scaler(params: dict[str, Any], context: BuildContext) -> RobustScaler:
    """Centres on the median and scales by the ``q_min``..``q_max`` quantile range.

    ``q_min``/``q_max`` are fractions, scikit-learn wants percents: auto-sklearn 0.15 passes the
    fractions as percents (a 0.25%..0.75% range); here they are converted as intended.
    """
    return RobustScaler(quantile_range=(100 * float(params["q_min"]), 100 * float(params["q_max"])))


@RESCALINGS.add("standardize")
def standardize(params: dict[str, Any], context: BuildContext) -> StandardScaler:
    """Zero mean, unit variance per column."""
    return StandardScaler()


# -- class balancing ---------------------------------------------------------------------------
def _innermost(estimator: Any) -> tuple[str, Any]:
    """The estimator inside this package's wrappers and SelectFromModel, with the parameter
    path that reaches it (``estimator__estimator__``)."""
    path = ""
    while isinstance(estimator, (Wrapper, SelectFromModel)):
        estimator, path = estimator.estimator, path + "estimator__"
    return path, estimator


def _set_balanced_class_weight(estimator: Any) -> bool:
    path, inner = _innermost(estimator)
    if "class_weight" not in inner.get_params(deep=False):
        return False
    estimator.set_params(**{f"{path}class_weight": "balanced"})
    return True


@dataclass(frozen=True)
class ClassBalancing:
    """What the ``balancing`` stage builds: how the assembler weights the classes.

    With ``weighting`` every class gets the same total weight: through
    ``class_weight="balanced"`` where the estimator has that parameter, else through balanced
    ``sample_weight`` given to its ``fit`` (:class:`~automl_sklearn.wrappers.
    BalancedSampleWeights` wraps it). Estimators that take neither (k-NN, LDA, QDA) stay as
    they are, as in auto-sklearn; so do feature preprocessors without ``class_weight``.
    """

    strategy: str = "none"

    def estimator(self, estimator: Any) -> Any:
        """The final estimator, weighted as the strategy says."""
        if self.strategy != "weighting" or _set_balanced_class_weight(estimator):
            return estimator
        if has_fit_parameter(_innermost(estimator)[1], "sample_weight"):
            return BalancedSampleWeights(estimator)
        return estimator

    def preprocessor(self, transformer: Any) -> Any:
        """A feature preprocessor, with balanced ``class_weight`` if it has one."""
        if self.strategy == "weighting":
            _set_balanced_class_weight(transformer)
        return transformer


#: The values of ``balancing:strategy``, in auto-sklearn's order (which fixes the encoding).
BALANCING_STRATEGIES = ("none", "weighting")


def balancing_space(default: str = "none") -> ConfigurationSpace:
    """``strategy``: none or weighting; ``default`` is auto-sklearn's "none" unless the space
    says otherwise (see :func:`automl_sklearn.spaces.balancing_default`)."""
    return make_space(Categorical("strategy", list(BALANCING_STRATEGIES), default=default))


@BALANCINGS.add("balancing", balancing_space)
def balancing(params: dict[str, Any], context: BuildContext) -> ClassBalancing:
    """Class weighting for imbalanced data (classification); applied by the assembler to the
    classifier and the feature preprocessor rather than being a pipeline step."""
    return ClassBalancing(params["strategy"])
