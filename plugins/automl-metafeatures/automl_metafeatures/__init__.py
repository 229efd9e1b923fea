"""Hand-designed dataset meta-features for automl-core: auto-sklearn's 37 by default, with
information-theoretic, statistical, PCA, landmarking and decision-tree groups on request."""

from automl_metafeatures.provider import (
    GROUPS,
    HandcraftedMetaFeatures,
    MetaFeatureWarning,
    feature_names,
)

__all__ = ["GROUPS", "HandcraftedMetaFeatures", "MetaFeatureWarning", "feature_names"]
