"""The plugin module named by the entry point: it only registers the ``optuna-tpe`` strategy."""

from __future__ import annotations

from typing import Any

from automl_core import hookimpl
from automl_optuna.strategy import OptunaTPE


@hookimpl
def register_search_strategies(register: Any) -> None:
    register(
        "optuna-tpe",
        OptunaTPE,
        description="Optuna's TPE sampler through ask/tell; a peer baseline",
    )
