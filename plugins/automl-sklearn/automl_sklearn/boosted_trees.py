"""LightGBM and XGBoost: additions to auto-sklearn's space, for both tasks.

The spaces cover the parameters that matter most for gradient-boosted trees, with ranges in
common use (e.g. in Optuna's and AutoGluon's presets), on a log scale where the effect is
multiplicative, and the libraries' own defaults as defaults (a zero regularisation becomes the
range's lower bound, 1e-8). At most 512 trees, auto-sklearn's cap for its own gradient
boosting, keeps a single fit affordable:

=====================  =========================  ==========================
hyper-parameter        lightgbm                   xgboost
=====================  =========================  ==========================
n_estimators           16..512, log, 100          16..512, log, 100
learning_rate          0.005..0.5, log, 0.1       0.005..0.5, log, 0.3
num_leaves / max_depth num_leaves 4..256, log, 31 max_depth 1..10, 6
min_child_samples      1..100, log, 20            --
min_child_weight       --                         0.01..100, log, 1
subsample              0.5..1, 1                  0.5..1, 1
colsample_bytree       0.3..1, 1                  0.3..1, 1
reg_alpha              1e-8..10, log, 1e-8        1e-8..10, log, 1e-8
reg_lambda             1e-8..10, log, 1e-8        1e-8..10, log, 1
=====================  =========================  ==========================

Both run single-threaded (the search parallelises across trials) and seeded. The libraries are
imported only when a model is built, not when the plugin loads.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ConfigSpace import ConfigurationSpace, Float, Integer

from automl_core.space import BuildContext, Iterations, PipelineComponent
from automl_sklearn.hyperparameters import make_space
from automl_sklearn.wrappers import EncodedLabels

STAGES = {"classification": "classifier", "regression": "regressor"}


def _shared_hyperparameters() -> list[Any]:
    return [
        Integer("n_estimators", (16, 512), default=100, log=True),
        Float("subsample", (0.5, 1.0), default=1.0),
        Float("colsample_bytree", (0.3, 1.0), default=1.0),
        Float("reg_alpha", (1e-8, 10.0), default=1e-8, log=True),
    ]


def lightgbm_space() -> ConfigurationSpace:
    return make_space(
        *_shared_hyperparameters(),
        Float("learning_rate", (0.005, 0.5), default=0.1, log=True),
        Integer("num_leaves", (4, 256), default=31, log=True),
        Integer("min_child_samples", (1, 100), default=20, log=True),
        Float("reg_lambda", (1e-8, 10.0), default=1e-8, log=True),
    )


def xgboost_space() -> ConfigurationSpace:
    return make_space(
        *_shared_hyperparameters(),
        Float("learning_rate", (0.005, 0.5), default=0.3, log=True),
        Integer("max_depth", (1, 10), default=6),
        Float("min_child_weight", (0.01, 100.0), default=1.0, log=True),
        Float("reg_lambda", (1e-8, 10.0), default=1.0, log=True),
    )


def _numbers(params: dict[str, Any]) -> dict[str, Any]:
    """Integer-valued hyper-parameters as ints, the others as floats."""
    integers = {"n_estimators", "num_leaves", "min_child_samples", "max_depth"}
    return {k: int(v) if k in integers else float(v) for k, v in params.items()}


def build_lightgbm(task: str, params: dict[str, Any], context: BuildContext) -> Any:
    """LightGBM, leaf-wise trees. Row subsampling (``subsample`` < 1) redraws every iteration."""
    import lightgbm

    model = lightgbm.LGBMClassifier if task == "classification" else lightgbm.LGBMRegressor
    values = _numbers(params)
    return model(
        **values,
        subsample_freq=1 if values["subsample"] < 1.0 else 0,
        n_jobs=context.threads,
        random_state=context.seed,
        verbose=-1,
    )


def build_xgboost(task: str, params: dict[str, Any], context: BuildContext) -> Any:
    """XGBoost, depth-wise histogram trees. The classifier is wrapped to accept any labels
    (XGBoost itself wants ``0..n_classes-1``)."""
    import xgboost

    common = {
        "tree_method": "hist",
        "n_jobs": context.threads,
        "random_state": context.seed,
        "verbosity": 0,
    }
    if task == "classification":
        return EncodedLabels(xgboost.XGBClassifier(**_numbers(params), **common))
    return xgboost.XGBRegressor(**_numbers(params), **common)


#: ``n_estimators`` is a hyper-parameter (16..512); a multi-fidelity budget shortens it.
BOOSTED_TREES_ITERATIONS = Iterations("n_estimators", 16, 512)


def lightgbm_component(task: str) -> PipelineComponent:
    return PipelineComponent(
        name="lightgbm",
        stage=STAGES[task],
        build=partial(build_lightgbm, task),
        hyperparameters=lightgbm_space,
        tasks=frozenset({task}),
        description="LightGBM gradient-boosted trees (not in auto-sklearn; documented space).",
        iterations=BOOSTED_TREES_ITERATIONS,
    )


def xgboost_component(task: str) -> PipelineComponent:
    return PipelineComponent(
        name="xgboost",
        stage=STAGES[task],
        build=partial(build_xgboost, task),
        hyperparameters=xgboost_space,
        tasks=frozenset({task}),
        description="XGBoost gradient-boosted trees (not in auto-sklearn; documented space).",
        iterations=BOOSTED_TREES_ITERATIONS,
    )
