"""The plugin module named by the entry point: it registers the ``autogluon`` and
``autogluon-best`` systems, when AutoGluon's environment exists."""

from __future__ import annotations

from automl_bench.contracts import System

from automl_autogluon.system import AutoGluonBestSystem, AutoGluonSystem, find_python
from automl_core import hookimpl
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_systems(register: RegisterFactory[System]) -> None:
    # AutoGluon is no dependency of this distribution: it runs in its own environment (see
    # README.md). Without it the plugin is reported as broken, with the command that builds
    # it (`automl plugins`), as automl-tpot is without TPOT.
    find_python()
    register(
        "autogluon",
        AutoGluonSystem,
        description="AutoGluon-Tabular 1.6 with its default preset (medium_quality: tree "
        "ensembles, neural networks, a weighted ensemble) optimising the run's metric, in its "
        "own environment; a whole-system peer",
    )
    register(
        "autogluon-best",
        AutoGluonBestSystem,
        description="AutoGluon-Tabular 1.6 with presets=best_quality (bagging, stacking, its "
        "zero-shot portfolio) optimising the run's metric, in its own environment; a "
        "whole-system peer",
    )
