"""automl-core: a plugin-oriented AutoML framework.

This is the kernel, what a plugin author targets: the contracts (:mod:`automl_core.contracts`),
the hooks plugins implement (:mod:`automl_core.hookspecs`), the registry
(:mod:`automl_core.plugins`), the trial and space types and random search. It needs only
pluggy and numpy. The engine that runs recipes (the loop, the history, the evaluator, the CLI
and the estimators) is the distribution ``automl-engine`` (:mod:`automl_engine`); every
component that does real work -- search strategies, surrogates, meta-feature providers,
warm-starters, pipeline components -- is registered by a plugin.

``automl_core.AutoMLClassifier`` and ``AutoMLRegressor`` are the engine's estimators, imported
on first use (they need the engine installed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automl_core.hookspecs import hookimpl
from automl_core.lazy import lazy, lazy_attributes

if TYPE_CHECKING:
    from automl_engine.estimator import AutoMLClassifier, AutoMLRegressor

__version__ = "0.1.0"

__all__ = ["AutoMLClassifier", "AutoMLRegressor", "__version__", "hookimpl", "lazy"]

#: Imported on first use: plugins and worker processes import this package for ``hookimpl``
#: and must not pay for scikit-learn, pandas and the run loop.
__getattr__ = lazy_attributes(
    {"AutoMLClassifier": "automl_engine.estimator", "AutoMLRegressor": "automl_engine.estimator"}
)
