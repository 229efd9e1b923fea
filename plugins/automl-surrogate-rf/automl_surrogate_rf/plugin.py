"""The plugin module named by the entry point: it only registers the surrogate."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import Surrogate
from automl_core.hookspecs import RegisterFactory
from automl_surrogate_rf.forest import RandomForestSurrogate


@hookimpl
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    register(
        "rf",
        RandomForestSurrogate,
        description="SMAC-style random forest: bootstrap CART trees, std across trees",
    )
