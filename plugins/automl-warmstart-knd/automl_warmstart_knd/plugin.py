"""The plugin module named by the entry point: it only registers the warm-starter."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import WarmStarter
from automl_core.hookspecs import RegisterFactory
from automl_warmstart_knd.knd import KNearestDatasets

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_warmstarters(register: RegisterFactory[WarmStarter]) -> None:
    register(
        "knd",
        KNearestDatasets,
        "auto-sklearn 1.0: best configurations of the k nearest datasets by meta-features",
    )
