"""automl-core: a plugin-oriented AutoML framework.

The core defines the contracts (:mod:`automl_core.contracts`), the hooks plugins implement
(:mod:`automl_core.hookspecs`), recipes, the run loop, the run history and the CLI. Every
component that does real work -- search strategies, surrogates, meta-feature providers,
warm-starters, pipeline components -- is registered by a plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automl_core.hookspecs import hookimpl
from automl_core.lazy import lazy, lazy_attributes

if TYPE_CHECKING:
    from automl_core.estimator import AutoMLClassifier, AutoMLRegressor

__version__ = "0.1.0"

__all__ = ["AutoMLClassifier", "AutoMLRegressor", "__version__", "hookimpl", "lazy"]

#: Imported on first use: plugins and worker processes import this package for ``hookimpl``
#: and must not pay for scikit-learn, pandas and the run loop.
__getattr__ = lazy_attributes(
    {"AutoMLClassifier": "automl_core.estimator", "AutoMLRegressor": "automl_core.estimator"}
)
