"""A Gaussian-process surrogate for automl-core, registered as ``gp``."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "GPFallbackWarning": "automl_surrogate_gp.surrogate",
        "GPSurrogate": "automl_surrogate_gp.surrogate",
    }
)

__all__ = ["GPFallbackWarning", "GPSurrogate"]
