"""The plugin module named by the entry point: it registers the ``autogluon`` and
``autogluon-best`` systems."""

from __future__ import annotations

from automl_bench.contracts import System

from automl_autogluon.system import AutoGluonBestSystem, AutoGluonSystem
from automl_core import hookimpl
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_systems(register: RegisterFactory[System]) -> None:
    # AutoGluon is no dependency of this distribution: it runs in its own environment (see
    # README.md). The systems are registered whether it exists or not, so that installing
    # this adapter breaks nothing for those who never use it (`automl plugins` lists no
    # broken plugin); building one without the environment (`--peer autogluon`, checked
    # before any cell runs) is an error with the command that makes it (find_python).
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
