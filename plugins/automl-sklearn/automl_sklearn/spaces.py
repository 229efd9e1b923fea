"""The ``autosklearn-classification`` and ``autosklearn-regression`` spaces.

Stages and hyper-parameter names are auto-sklearn 1.0's (0.15) for dense data, so that its
stored configurations (``metalearning/files/*/configurations.csv``) are members. In pipeline
order, with ``CAT`` = ``data_preprocessor:feature_type:categorical_transformer`` and ``NUM`` =
``data_preprocessor:feature_type:numerical_transformer``:

=========================  ======================================
stage                      hyper-parameter prefix
=========================  ======================================
categorical_encoding       ``CAT:categorical_encoding``
category_coalescence       ``CAT:category_coalescence``
imputation (fixed)         ``NUM:imputation``
rescaling                  ``NUM:rescaling``
balancing (fixed; classif) ``balancing``
feature_preprocessor       ``feature_preprocessor``
classifier | regressor     ``classifier`` | ``regressor``
=========================  ======================================

plus the constant ``data_preprocessor:__choice__ = "feature_type"``. A factory builds a space
from every registered component whose stage is one of these and whose tasks include the
space's task, so third-party components join the choice stages. The two fixed stages (no
``__choice__``) keep this plugin's component; others registered for them are ignored.

Class weighting (``balancing:strategy``) defaults to auto-sklearn's ``none`` unless the run's
metric weights every class the same (balanced accuracy): then the default is ``weighting``,
so the default pipelines that strategies evaluate first are class-weighted; the search still
tries both. The runner hands the factory the run's ``metric``; a recipe's ``balancing``
(``none`` or ``weighting``) sets the default outright. See :func:`balancing_default`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import product

from automl_core.space import Combination, PipelineComponent, Stage
from automl_sklearn.assemble import assemble
from automl_sklearn.data_preprocessing import BALANCING_STRATEGIES, balancing_space
from automl_spaces.pipeline_space import PipelineSpace

CATEGORICAL = "data_preprocessor:feature_type:categorical_transformer"
NUMERICAL = "data_preprocessor:feature_type:numerical_transformer"
CONSTANTS = {"data_preprocessor:__choice__": "feature_type"}


@dataclass(frozen=True)
class StageSpec:
    """A stage of the space: ``fixed`` names the single component of a stage without
    ``__choice__``; ``default`` the default component of a choice."""

    name: str
    prefix: str
    default: str | None = None
    fixed: str | None = None


def _stage_specs(estimator_stage: str, default_estimator: str) -> list[StageSpec]:
    return [
        StageSpec(
            "categorical_encoding", f"{CATEGORICAL}:categorical_encoding", "one_hot_encoding"
        ),
        StageSpec(
            "category_coalescence", f"{CATEGORICAL}:category_coalescence", "minority_coalescer"
        ),
        StageSpec("imputation", f"{NUMERICAL}:imputation", fixed="numerical_imputation"),
        StageSpec("rescaling", f"{NUMERICAL}:rescaling", "standardize"),
        StageSpec("balancing", "balancing", fixed="balancing"),
        StageSpec("feature_preprocessor", "feature_preprocessor", "no_preprocessing"),
        StageSpec(estimator_stage, estimator_stage, default_estimator),
    ]


STAGE_SPECS: dict[str, list[StageSpec]] = {
    "classification": _stage_specs("classifier", "random_forest"),
    "regression": [s for s in _stage_specs("regressor", "random_forest") if s.name != "balancing"],
}


#: Metrics under which class weighting is the default (``balancing: auto``). Balanced
#: accuracy only: on 14 imbalanced KEEL datasets weighting raised the default pipelines'
#: balanced accuracy by 0.068 on average, but ROC AUC by 0.008 and macro F1 by 0.004 with
#: about as many losses as wins, and it lowered accuracy (benchmarks/class_weighting.py,
#: docs/benchmarks.md "Class weighting on imbalanced data").
CLASS_BALANCED_METRICS = frozenset({"balanced_accuracy"})
#: What the ``balancing`` parameter of :func:`classification_space` takes.
BALANCING_CHOICES = ("auto", *BALANCING_STRATEGIES)


def balancing_default(balancing: str = "auto", metric: str | None = None) -> str:
    """The default of ``balancing:strategy``: ``balancing`` itself when it is ``none`` or
    ``weighting``; for ``auto``, ``weighting`` when ``metric`` is one of
    :data:`CLASS_BALANCED_METRICS`, else (another metric, or none known) ``none``, as
    auto-sklearn."""
    if balancing not in BALANCING_CHOICES:
        raise ValueError(f"balancing must be one of {list(BALANCING_CHOICES)}, not {balancing!r}")
    if balancing != "auto":
        return balancing
    return "weighting" if metric in CLASS_BALANCED_METRICS else "none"


def _never_together(
    stage: str, names: Iterable[str], other_stage: str, other_names: Iterable[str]
) -> list[Combination]:
    return [((stage, a), (other_stage, b)) for a, b in product(names, other_names)]


#: Feature learning that auto-sklearn keeps away from slow non-linear models.
_FEATURE_LEARNING = ["kernel_pca", "kitchen_sinks", "nystroem_sampler"]
#: random_trees_embedding's sparse output, which these estimators cannot take.
_SPARSE_OUTPUT = ["random_trees_embedding"]

#: auto-sklearn's forbidden stage combinations for dense data, per task.
FORBIDDEN: dict[str, list[Combination]] = {
    "classification": [
        *_never_together(
            "classifier",
            ["adaboost", "decision_tree", "extra_trees", "gradient_boosting",
             "k_nearest_neighbors", "libsvm_svc", "mlp", "random_forest", "gaussian_nb"],
            "feature_preprocessor",
            _FEATURE_LEARNING,
        ),
        *_never_together(
            "classifier",
            ["multinomial_nb"],
            "feature_preprocessor",
            ["kitchen_sinks", "pca", "fast_ica", "kernel_pca", "nystroem_sampler"],
        ),
        *_never_together(
            "classifier",
            ["gaussian_nb", "gradient_boosting", "lda", "qda"],
            "feature_preprocessor",
            _SPARSE_OUTPUT,
        ),
    ],
    "regression": [
        *_never_together(
            "regressor",
            ["adaboost", "ard_regression", "decision_tree", "extra_trees", "gaussian_process",
             "gradient_boosting", "k_nearest_neighbors", "libsvm_svr", "mlp", "random_forest"],
            "feature_preprocessor",
            _FEATURE_LEARNING,
        ),
        *_never_together(
            "regressor",
            ["ard_regression", "gaussian_process", "gradient_boosting"],
            "feature_preprocessor",
            _SPARSE_OUTPUT,
        ),
    ],
}  # fmt: skip


def _stage(
    spec: StageSpec, task: str, components: Sequence[PipelineComponent], balancing: str
) -> Stage:
    matching = [c for c in components if c.stage == spec.name and task in c.tasks]
    names = [c.name for c in matching]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"stage {spec.name!r}: more than one component named {duplicates}")
    if spec.fixed is not None:
        matching = [c for c in matching if c.name == spec.fixed]
        if not matching:
            raise ValueError(f"stage {spec.name!r} needs the component {spec.fixed!r}")
    if spec.name == "balancing":
        matching = [
            replace(c, hyperparameters=partial(balancing_space, balancing)) for c in matching
        ]
    return Stage(
        spec.name, tuple(matching), spec.prefix, choice=spec.fixed is None, default=spec.default
    )


def build_space(
    task: str,
    components: Sequence[PipelineComponent],
    include: Mapping[str, Iterable[str]] | None = None,
    exclude: Mapping[str, Iterable[str]] | None = None,
    balancing: str = "none",
) -> PipelineSpace:
    """The auto-sklearn space for ``task`` made of ``components``, restricted by
    ``include``/``exclude`` (``{stage: [component names]}``), with ``balancing`` (none or
    weighting) the default of ``balancing:strategy`` (classification)."""
    if balancing not in BALANCING_STRATEGIES:
        raise ValueError(
            f"balancing must be one of {list(BALANCING_STRATEGIES)}, not {balancing!r}"
        )
    space = PipelineSpace(
        name=f"autosklearn-{task}",
        task=task,
        stages=tuple(_stage(spec, task, components, balancing) for spec in STAGE_SPECS[task]),
        assemble=assemble,
        constants=dict(CONSTANTS),
        forbidden=tuple(FORBIDDEN[task]),
    )
    return space.restrict(include, exclude) if include or exclude else space


def classification_space(
    components: Sequence[PipelineComponent],
    *,
    include: Mapping[str, Iterable[str]] | None = None,
    exclude: Mapping[str, Iterable[str]] | None = None,
    balancing: str = "auto",
    metric: str | None = None,
) -> PipelineSpace:
    """auto-sklearn 1.0's classification space (plus LightGBM, XGBoost and any registered
    classification component), restricted by ``include``/``exclude``.

    ``balancing`` (``auto``, ``none`` or ``weighting``) chooses the default of
    ``balancing:strategy`` (:func:`balancing_default`); both values stay in the space.
    ``metric`` is the run's metric, which the runner supplies: with ``auto``, balanced
    accuracy makes ``weighting`` the default, anything else (or no metric) ``none``.
    """
    default = balancing_default(balancing, metric)
    return build_space("classification", components, include, exclude, default)


def regression_space(
    components: Sequence[PipelineComponent],
    *,
    include: Mapping[str, Iterable[str]] | None = None,
    exclude: Mapping[str, Iterable[str]] | None = None,
) -> PipelineSpace:
    """auto-sklearn 1.0's regression space (plus LightGBM, XGBoost and any registered
    regression component), restricted by ``include``/``exclude``."""
    return build_space("regression", components, include, exclude)
