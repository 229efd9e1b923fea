"""Registers the ``evolution`` search strategy."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_evolution.strategy import Evolution

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "evolution",
        Evolution,
        "regularised (aging) evolution: tournament selection, per-stage crossover, "
        "hyper-parameter and component-swap mutations",
    )
