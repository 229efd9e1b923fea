"""The plugin module named by the entry point: it only registers components."""

from __future__ import annotations

from typing import Any

from automl_core import hookimpl
from automl_hillclimb.strategy import HillClimbing


@hookimpl
def register_search_strategies(register: Any) -> None:
    register("hillclimb", HillClimbing, description="Hill climbing with random restarts")
