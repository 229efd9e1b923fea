"""Registers the ``auto-sklearn-2`` policy selector, also under the name ``auto`` (so
``task.resampling: auto`` uses it), and ``bagged-by-rows`` (``task.resampling: {auto:
bagged-by-rows}``)."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import AUTO_POLICY_SELECTOR, PolicySelector
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_policy_selectors(register: RegisterFactory[PolicySelector]) -> None:
    auto_sklearn_2 = lazy("automl_policy.auto_sklearn_2:AutoSklearn2Selector")
    register(
        "auto-sklearn-2",
        auto_sklearn_2,
        "Auto-sklearn 2.0's policy selector (holdout / 3- / 5-fold CV x full budget / "
        "successive halving), trained on runs simulated from LCDB's learning curves",
    )
    register(
        AUTO_POLICY_SELECTOR,
        auto_sklearn_2,
        "the selector of `task.resampling: auto`: auto-sklearn-2's",
    )
    register(
        "bagged-by-rows",
        lazy("automl_policy.by_rows:BaggedByRows"),
        "Bagged k-fold CV (the fold models are the final model) up to a number of training "
        "rows, a holdout above",
    )
