"""The plugin module named by the entry point: it only registers the ``flaml`` system."""

from __future__ import annotations

from typing import Any

from automl_core import hookimpl
from automl_flaml.system import FLAMLSystem


@hookimpl
def register_systems(register: Any) -> None:
    register(
        "flaml",
        FLAMLSystem,
        description="FLAML's AutoML (CFO over LightGBM, XGBoost, forests, linear models) "
        "optimising the run's metric; a whole-system peer",
    )
