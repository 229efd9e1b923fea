"""The plugin module named by the entry point: it only registers the ``random-forest``,
``hist-gradient-boosting`` and ``ridge-cv`` systems."""

from __future__ import annotations

from automl_bench.contracts import System

from automl_core import hookimpl, lazy
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_systems(register: RegisterFactory[System]) -> None:
    register(
        "random-forest",
        lazy("automl_baselines.system:RandomForestSystem"),
        description="scikit-learn's random forest with its defaults (one-hot categories, "
        "imputed gaps), one fit, no search; a baseline peer",
    )
    register(
        "hist-gradient-boosting",
        lazy("automl_baselines.system:HistGradientBoostingSystem"),
        description="scikit-learn's histogram gradient boosting with its defaults (native "
        "categories and NaN), one fit, no search; a baseline peer",
    )
    register(
        "ridge-cv",
        lazy("automl_baselines.system:RidgeCVSystem"),
        description="scikit-learn's RidgeCV with its defaults (imputed, scaled, one-hot "
        "categories), one fit, no search; a regression baseline peer",
    )
