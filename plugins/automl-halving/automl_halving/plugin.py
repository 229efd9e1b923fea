"""Registers ``successive_halving``, ``hyperband`` and ``asha``."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import SearchStrategy
from automl_core.hookspecs import RegisterFactory
from automl_halving.strategy import AsynchronousHalving, Hyperband, SuccessiveHalving

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "successive_halving",
        SuccessiveHalving,
        "successive halving (eta, budgets from search.fidelity); BOHB-style with a surrogate",
    )
    register(
        "hyperband",
        Hyperband,
        "Hyperband's brackets of successive halving; BOHB-style with a surrogate",
    )
    register(
        "asha",
        AsynchronousHalving,
        "asynchronous successive halving (ASHA): promotes without waiting for a rung",
    )
