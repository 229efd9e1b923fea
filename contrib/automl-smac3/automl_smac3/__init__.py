"""SMAC3 (the HPO facade: random forest, expected improvement) as an automl-core strategy."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "SMAC3": "automl_smac3.strategy",
    }
)

__all__ = ["SMAC3"]
