"""Registers the ``mcts`` search strategy (Mosaic)."""

from __future__ import annotations

from collections.abc import Callable

from automl_core import hookimpl
from automl_mcts.strategy import MCTS


@hookimpl
def register_search_strategies(register: Callable[..., None]) -> None:
    register(
        "mcts",
        MCTS,
        "Mosaic: Monte-Carlo tree search over pipeline structure (PUCT, surrogate prior, "
        "progressive widening) with an EI playout over hyper-parameters; one shared surrogate",
    )
