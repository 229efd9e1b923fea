"""The plugin module named by the entry point: it only registers the ``optuna-tpe`` strategy."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_optuna.strategy import OptunaTPE


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "optuna-tpe",
        OptunaTPE,
        description="Optuna's TPE sampler through ask/tell; a peer baseline",
    )
