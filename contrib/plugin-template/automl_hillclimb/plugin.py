"""The plugin module named by the entry point: it only registers components."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_hillclimb.strategy import HillClimbing


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register("hillclimb", HillClimbing, description="Hill climbing with random restarts")
