"""The plugin module named by the entry point: it only registers the ``flaml`` system."""

from __future__ import annotations

from automl_bench.contracts import System

from automl_core import hookimpl
from automl_core.hookspecs import RegisterFactory
from automl_flaml.system import FLAMLSystem

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_systems(register: RegisterFactory[System]) -> None:
    register(
        "flaml",
        FLAMLSystem,
        description="FLAML's AutoML (CFO over LightGBM, XGBoost, forests, linear models) "
        "optimising the run's metric; a whole-system peer",
    )
