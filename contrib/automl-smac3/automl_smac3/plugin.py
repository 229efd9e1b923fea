"""The plugin module named by the entry point: it only registers the ``smac3`` strategy."""

from __future__ import annotations

from typing import Any

from automl_core import hookimpl
from automl_smac3.strategy import SMAC3


@hookimpl
def register_search_strategies(register: Any) -> None:
    register(
        "smac3",
        SMAC3,
        description="SMAC3's HPO facade (random forest, EI) through ask/tell; a peer baseline",
    )
