"""The plugin module named by the entry point: it only registers the ``random-forest`` and
``hist-gradient-boosting`` systems."""

from __future__ import annotations

from typing import Any

from automl_baselines.system import HistGradientBoostingSystem, RandomForestSystem
from automl_core import hookimpl


@hookimpl
def register_systems(register: Any) -> None:
    register(
        "random-forest",
        RandomForestSystem,
        description="scikit-learn's random forest with its defaults (one-hot categories, "
        "imputed gaps), one fit, no search; a baseline peer",
    )
    register(
        "hist-gradient-boosting",
        HistGradientBoostingSystem,
        description="scikit-learn's histogram gradient boosting with its defaults (native "
        "categories and NaN), one fit, no search; a baseline peer",
    )
