"""Registers the ``mcts`` search strategy (Mosaic)."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_mcts.strategy import MCTS

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "mcts",
        MCTS,
        "Mosaic: Monte-Carlo tree search over pipeline structure (PUCT, surrogate prior, "
        "progressive widening) with an EI playout over hyper-parameters; one shared surrogate",
    )
