"""CatBoost as the component ``catboost`` of the ``classifier`` and ``regressor`` stages.

A space is made of every registered component whose stage it names, so these join
automl-sklearn's ``autosklearn-classification`` and ``autosklearn-regression`` spaces beside
its LightGBM and XGBoost, with a space in the same style: ranges in common use, on a log
scale where the effect is multiplicative, CatBoost's own defaults as defaults, and at most
512 trees (auto-sklearn's cap for its gradient boosting, and LightGBM's and XGBoost's here):

===============  =====================  ================================================
hyper-parameter  range, scale, default  what it is
===============  =====================  ================================================
iterations       16..512, log, 100      trees (the multi-fidelity budget shortens it)
learning_rate    0.005..0.5, log, 0.1   shrinkage (CatBoost picks one from the data when
                                        unset: 0.085 binary, 0.27 regression, 0.5 three
                                        classes at 100 trees on 1,000 rows; 0.1 is
                                        LightGBM's)
depth            4..8, 6                depth of the symmetric (oblivious) trees
l2_leaf_reg      1..10, log, 3          L2 regularisation of the leaf values
random_strength  0.01..10, log, 1       noise added to split scores
subsample        0.5..1, 0.8            MVS bootstrap rate of rows per tree
rsm              0.3..1, 1              features considered per split level
                                        (``colsample_bylevel``)
===============  =====================  ================================================

Threads: the trial's (``thread_count`` = :attr:`~automl_core.space.BuildContext.threads`, the
executor's ``threads_per_trial``, 1 unless a recipe gives more), as LightGBM's and XGBoost's
``n_jobs``. CatBoost's thread pool is its own, which neither the worker's OpenMP/BLAS limits
nor threadpoolctl reach (its default is every core), so the count must be given.

Categorical columns reach CatBoost as categories (its ``cat_features``, split with ordered
target statistics) when the pipeline keeps one code per categorical column: the
``categorical_encoding`` stage chose ordinal codes (``encoding`` or ``no_encoding``) and the
``feature_preprocessor`` stage ``no_preprocessing``. The estimator's scikit-learn tags say it
takes categories; automl-sklearn's assembler then hands it a DataFrame whose code columns
have the ``category`` dtype, which is how :mod:`automl_catboost.estimators` finds them (its
``build`` never sees the data). With one-hot encoding, or after a preprocessor that mixes or
selects columns (PCA, polynomial, selection...), it gets numbers, as LightGBM and XGBoost do
in these spaces; the search chooses between the two as it chooses every stage.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ConfigSpace import ConfigurationSpace, Float, Integer

from automl_catboost.estimators import CatBoostClassifier, CatBoostRegressor
from automl_core.space import BuildContext, Iterations, PipelineComponent

STAGES = {"classification": "classifier", "regression": "regressor"}

#: ``iterations`` is a hyper-parameter (16..512); a multi-fidelity budget shortens it.
CATBOOST_ITERATIONS = Iterations("iterations", 16, 512)

#: The integer-valued hyper-parameters (the others are floats).
INTEGERS = frozenset({"iterations", "depth"})


def catboost_space() -> ConfigurationSpace:
    """The hyper-parameters of the module docstring's table."""
    space = ConfigurationSpace()
    space.add(
        Integer("iterations", (16, 512), default=100, log=True),
        Float("learning_rate", (0.005, 0.5), default=0.1, log=True),
        Integer("depth", (4, 8), default=6),
        Float("l2_leaf_reg", (1.0, 10.0), default=3.0, log=True),
        Float("random_strength", (0.01, 10.0), default=1.0, log=True),
        Float("subsample", (0.5, 1.0), default=0.8),
        Float("rsm", (0.3, 1.0), default=1.0),
    )
    return space


def build_catboost(
    task: str, params: dict[str, Any], context: BuildContext
) -> CatBoostClassifier | CatBoostRegressor:
    """The estimator for ``task``, seeded with the trial's seed, on one thread."""
    values: dict[str, Any] = {k: int(v) if k in INTEGERS else float(v) for k, v in params.items()}
    model = CatBoostClassifier if task == "classification" else CatBoostRegressor
    return model(**values, thread_count=context.threads, random_seed=int(context.seed))


def catboost_component(task: str) -> PipelineComponent:
    return PipelineComponent(
        name="catboost",
        stage=STAGES[task],
        build=partial(build_catboost, task),
        hyperparameters=catboost_space,
        tasks=frozenset({task}),
        description="CatBoost gradient-boosted symmetric trees (not in auto-sklearn; "
        "documented space).",
        iterations=CATBOOST_ITERATIONS,
    )


#: The classifier and the regressor.
COMPONENTS: tuple[PipelineComponent, ...] = (
    catboost_component("classification"),
    catboost_component("regression"),
)
