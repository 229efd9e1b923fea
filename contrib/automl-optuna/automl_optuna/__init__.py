"""Optuna's TPE sampler as an automl-core search strategy (``optuna-tpe``)."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "OptunaTPE": "automl_optuna.strategy",
    }
)

__all__ = ["OptunaTPE"]
