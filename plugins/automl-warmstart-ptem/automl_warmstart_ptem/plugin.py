"""The plugin module named by the entry point: it only registers the warm-starter."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import WarmStarter
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_warmstarters(register: RegisterFactory[WarmStarter]) -> None:
    register(
        "ptem",
        lazy("automl_warmstart_ptem.warmstart:RankedPTEM"),
        description="shared latent space BO: a LightGBM ranker picks the source PTEM the "
        "latent surrogate starts from (lightgbm is imported when it is first used)",
    )
