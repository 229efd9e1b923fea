"""Registers the ``smbo`` search strategy."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_smbo.strategy import SMBO


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "smbo",
        SMBO,
        "SMAC-style model-based search: the recipe's surrogate, EI/PI/LCB, local + random "
        "acquisition optimisation, interleaved random configurations",
    )
