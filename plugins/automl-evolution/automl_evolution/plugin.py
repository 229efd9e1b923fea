"""Registers the ``evolution`` search strategy."""

from __future__ import annotations

from collections.abc import Callable

from automl_core import hookimpl
from automl_evolution.strategy import Evolution


@hookimpl
def register_search_strategies(register: Callable[..., None]) -> None:
    register(
        "evolution",
        Evolution,
        "regularised (aging) evolution: tournament selection, per-stage crossover, "
        "hyper-parameter and component-swap mutations",
    )
