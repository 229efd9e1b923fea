"""A practitioner's default models as whole-system peers for automl-core's ablations
(``random-forest``, ``hist-gradient-boosting``)."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "HistGradientBoostingSystem": "automl_baselines.system",
        "RandomForestSystem": "automl_baselines.system",
    }
)

__all__ = ["HistGradientBoostingSystem", "RandomForestSystem"]
