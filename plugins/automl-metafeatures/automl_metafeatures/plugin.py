"""The plugin module named by the entry point: it only registers the provider."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import MetaFeatureProvider
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_metafeature_providers(register: RegisterFactory[MetaFeatureProvider]) -> None:
    register(
        "handcrafted",
        lazy("automl_metafeatures.provider:HandcraftedMetaFeatures"),
        description="auto-sklearn's 37 meta-features, plus information-theoretic, "
        "statistical, PCA, landmarking and decision-tree groups",
    )
