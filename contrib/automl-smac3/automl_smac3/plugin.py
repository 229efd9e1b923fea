"""The plugin module named by the entry point: it only registers the ``smac3`` strategy."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "smac3",
        lazy("automl_smac3.strategy:SMAC3"),
        description="SMAC3's HPO facade (random forest, EI) through ask/tell; a peer baseline",
    )
