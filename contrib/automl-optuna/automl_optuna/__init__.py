"""Optuna's TPE sampler as an automl-core search strategy (``optuna-tpe``)."""

from automl_optuna.strategy import OptunaTPE

__all__ = ["OptunaTPE"]
