"""The plugin module named by the entry point: it only registers the ``tpot`` system. TPOT
itself is imported when the system is built, not when plugins load (it takes seconds)."""

from __future__ import annotations

import importlib.util

from automl_bench.contracts import System

from automl_core import hookimpl
from automl_core.errors import PluginError
from automl_core.hookspecs import RegisterFactory
from automl_tpot.system import TPOTSystem

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_systems(register: RegisterFactory[System]) -> None:
    if importlib.util.find_spec("tpot") is None:
        # Not a dependency of this distribution (see its README): without it the plugin is
        # reported as broken, with the way to install it.
        raise PluginError(
            "automl-tpot needs TPOT, installed without its dependencies so that xgboost stays "
            "the CPU build: pip install --no-deps 'tpot==1.1.0'"
        )
    register(
        "tpot",
        TPOTSystem,
        description="TPOT 1.x (genetic programming over scikit-learn pipelines) optimising "
        "the run's metric; a whole-system peer",
    )
