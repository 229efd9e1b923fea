"""Lets the tests run from a checkout without installing the plugin first, and builds what the
tests share: a plugin set with the real oboe benchmark and auto-sklearn space, both searched
through the real run loop."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from automl_core.plugins import Plugins, load_plugins
from automl_core.space import PipelineSpace

#: Two cheap classifiers: every stage of auto-sklearn's space stays, so conditions and
#: forbidden clauses are all there, but each evaluation takes milliseconds.
CHEAP = {"classifier": ["decision_tree", "k_nearest_neighbors"]}


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    """The core's defaults, the installed automl-metadata (the oboe benchmark) and
    automl-sklearn (the auto-sklearn space) through their entry points, and this plugin."""
    pytest.importorskip("automl_metadata", reason="the oboe benchmark needs automl-metadata")
    pytest.importorskip("automl_sklearn", reason="the pipeline space needs automl-sklearn")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", "metadata,sklearn")
        loaded = load_plugins(extra=[importlib.import_module("automl_optuna.plugin")])
    assert not loaded.broken, loaded.broken
    return loaded


@pytest.fixture(scope="module")
def cheap_include() -> dict[str, list[str]]:
    """The ``include`` parameter of the cheap space, for recipes."""
    return {stage: list(names) for stage, names in CHEAP.items()}


@pytest.fixture(scope="module")
def cheap_space(plugins: Plugins) -> PipelineSpace:
    """auto-sklearn's classification space with only the cheap classifiers."""
    factory = plugins.get("space", "autosklearn-classification").obj
    return factory(plugins.components(), include=CHEAP)
