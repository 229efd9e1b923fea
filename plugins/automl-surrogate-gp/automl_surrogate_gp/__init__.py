"""A Gaussian-process surrogate for automl-core, registered as ``gp``."""

from automl_surrogate_gp.surrogate import GPFallbackWarning, GPSurrogate

__all__ = ["GPFallbackWarning", "GPSurrogate"]
