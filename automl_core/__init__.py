"""automl-core: a plugin-oriented AutoML framework.

The core defines the contracts (:mod:`automl_core.contracts`), the hooks plugins implement
(:mod:`automl_core.hookspecs`), recipes, the run loop, the run history and the CLI. Every
component that does real work -- search strategies, surrogates, meta-feature providers,
warm-starters, pipeline components -- is registered by a plugin.
"""

from automl_core.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]
