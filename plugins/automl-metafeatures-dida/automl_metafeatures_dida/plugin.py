"""The module named by the ``automl_core`` entry point ``metafeatures-dida``: it only registers
(torch is imported when the provider or a command is first used)."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import MetaDataLoader, MetaFeatureProvider
from automl_core.hookspecs import RegisterCommand, RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_metafeature_providers(register: RegisterFactory[MetaFeatureProvider]) -> None:
    register(
        "dida",
        lazy("automl_metafeatures_dida.provider:DidaMetaFeatures"),
        description="Dida: meta-features learned by a network invariant to rows, features "
        "and labels (train it first: automl dida train)",
    )


@hookimpl
def register_metadata(register: RegisterFactory[MetaDataLoader]) -> None:
    register(
        "dida",
        lazy("automl_metafeatures_dida.described:DidaMetaData"),
        description="a meta-data (`metadata`) described by Dida's meta-features (for knd)",
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from automl_metafeatures_dida.commands import register_dida_commands

    register_dida_commands(register)
