"""A practitioner's default models as whole-system peers for automl-core's ablations
(``random-forest``, ``hist-gradient-boosting``)."""

from automl_baselines.system import HistGradientBoostingSystem, RandomForestSystem

__all__ = ["HistGradientBoostingSystem", "RandomForestSystem"]
