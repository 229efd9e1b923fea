"""The module named by the ``automl_core`` entry point ``metafeatures-metabu``: it only
registers (POT and torch are imported when a component or a command is first used)."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import MetaDataLoader, MetaFeatureProvider
from automl_core.hookspecs import RegisterCommand, RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_metafeature_providers(register: RegisterFactory[MetaFeatureProvider]) -> None:
    register(
        "metabu",
        lazy("automl_metafeatures_metabu.provider:MetabuMetaFeatures"),
        description="Metabu: hand-crafted meta-features mapped by optimal transport onto the "
        "topology of the datasets' best configurations (needs `metadata`)",
    )


@hookimpl
def register_metadata(register: RegisterFactory[MetaDataLoader]) -> None:
    register(
        "metabu",
        lazy("automl_metafeatures_metabu.provider:MetabuMetaData"),
        description="a meta-data (`metadata`) described by its Metabu meta-features (for knd)",
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from automl_metafeatures_metabu.commands import register_metabu_commands

    register_metabu_commands(register)
