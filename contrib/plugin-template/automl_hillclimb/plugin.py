"""The plugin module named by the entry point: it only registers components."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_hillclimb.strategy import HillClimbing

#: The automl-core plugin API this plugin is written for: a core providing another one
#: refuses it at load, saying so, rather than failing later in a run.
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register("hillclimb", HillClimbing, description="Hill climbing with random restarts")
