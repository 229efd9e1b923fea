"""The module named by the ``automl_core`` entry point ``surrogate-deeppipe``: it only
registers (torch is imported when the surrogate or a command is first used)."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import Surrogate
from automl_core.hookspecs import RegisterCommand, RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    register(
        "deeppipe",
        lazy("automl_surrogate_deeppipe.surrogate:DeepPipeSurrogate"),
        description="DeepPipe: deep-kernel GP over per-component pipeline encoders, "
        "meta-trained on meta-data (metadata: pmf) or not (non-transfer)",
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from automl_surrogate_deeppipe.commands import register_deeppipe_commands

    register_deeppipe_commands(register)
