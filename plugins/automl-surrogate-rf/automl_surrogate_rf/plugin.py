"""The plugin module named by the entry point: it only registers the surrogate."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import Surrogate
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    register(
        "rf",
        lazy("automl_surrogate_rf.forest:RandomForestSurrogate"),
        description="SMAC-style random forest: bootstrap CART trees, std across trees",
    )
