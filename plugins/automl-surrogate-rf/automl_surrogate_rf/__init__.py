"""A SMAC-style random-forest surrogate for automl-core's model-based search strategies."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "RandomForestSurrogate": "automl_surrogate_rf.forest",
    }
)

__all__ = ["RandomForestSurrogate"]
