"""SMAC3 (the HPO facade: random forest, expected improvement) as an automl-core strategy."""

from automl_smac3.strategy import SMAC3

__all__ = ["SMAC3"]
