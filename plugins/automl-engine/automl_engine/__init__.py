"""automl-engine: runs recipes on the kernel's contracts (see the distribution's README).

``AutoMLClassifier`` and ``AutoMLRegressor`` (:mod:`automl_engine.estimator`) are imported on
first use: worker processes and plugins import this package without paying for the run loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automl_core.lazy import lazy_attributes

if TYPE_CHECKING:
    from automl_engine.estimator import AutoMLClassifier, AutoMLRegressor

__version__ = "0.1.0"

__all__ = ["AutoMLClassifier", "AutoMLRegressor", "__version__"]

__getattr__ = lazy_attributes(
    {"AutoMLClassifier": "automl_engine.estimator", "AutoMLRegressor": "automl_engine.estimator"}
)
