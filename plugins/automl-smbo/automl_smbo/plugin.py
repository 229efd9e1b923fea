"""Registers the ``smbo`` search strategy."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_smbo.strategy import SMBO

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "smbo",
        SMBO,
        "SMAC-style model-based search: the recipe's surrogate, EI/PI/LCB, local + random "
        "acquisition optimisation, interleaved random configurations",
    )
