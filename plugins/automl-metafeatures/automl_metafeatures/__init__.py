"""Hand-designed dataset meta-features for automl-core: auto-sklearn's 37 by default, with
information-theoretic, statistical, PCA, landmarking and decision-tree groups on request."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "GROUPS": "automl_metafeatures.provider",
        "HandcraftedMetaFeatures": "automl_metafeatures.provider",
        "MetaFeatureWarning": "automl_metafeatures.provider",
        "feature_names": "automl_metafeatures.provider",
    }
)

__all__ = ["GROUPS", "HandcraftedMetaFeatures", "MetaFeatureWarning", "feature_names"]
