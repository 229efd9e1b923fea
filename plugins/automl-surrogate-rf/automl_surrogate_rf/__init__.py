"""A SMAC-style random-forest surrogate for automl-core's model-based search strategies."""

from automl_surrogate_rf.forest import RandomForestSurrogate

__all__ = ["RandomForestSurrogate"]
