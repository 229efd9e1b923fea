"""The plugin module named by the entry point: it only registers the provider."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import MetaFeatureProvider
from automl_core.hookspecs import RegisterFactory


@hookimpl
def register_metafeature_providers(register: RegisterFactory[MetaFeatureProvider]) -> None:
    register(
        "handcrafted",
        lazy("automl_metafeatures.provider:HandcraftedMetaFeatures"),
        description="auto-sklearn's 37 meta-features, plus information-theoretic, "
        "statistical, PCA, landmarking and decision-tree groups",
    )
