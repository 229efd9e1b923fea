"""What the peers' tests (``automl-smac3``, ``automl-optuna``) share: the real oboe benchmark
and a cheap version of auto-sklearn's space, both searched through the real run loop. Each
package's own ``conftest.py`` names its plugin module in the ``peer_plugin`` fixture."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from automl_core.plugins import Plugins, load_plugins
from automl_core.space import PipelineSpace

sys.path.insert(0, str(Path(__file__).parent))  # peer_checks

#: Two cheap classifiers: every stage of auto-sklearn's space stays, so conditions and
#: forbidden clauses are all there, but each evaluation takes milliseconds.
CHEAP = {"classifier": ["decision_tree", "k_nearest_neighbors"]}


@pytest.fixture(scope="module")
def plugins(peer_plugin: str) -> Plugins:
    """The core's defaults, the installed automl-metadata (the oboe benchmark) and
    automl-sklearn (the auto-sklearn space) through their entry points, and the peer's
    plugin module."""
    pytest.importorskip("automl_metadata", reason="the oboe benchmark needs automl-metadata")
    pytest.importorskip("automl_sklearn", reason="the pipeline space needs automl-sklearn")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", "metadata,sklearn")
        loaded = load_plugins(extra=[importlib.import_module(peer_plugin)])
    assert not loaded.broken, loaded.broken
    return loaded


@pytest.fixture(scope="module")
def cheap_include() -> dict[str, list[str]]:
    """The ``include`` parameter of the cheap space, for recipes."""
    return {stage: list(names) for stage, names in CHEAP.items()}


@pytest.fixture(scope="module")
def cheap_space(plugins: Plugins, cheap_include: dict[str, list[str]]) -> PipelineSpace:
    """auto-sklearn's classification space with only the cheap classifiers."""
    return plugins.create("space", "autosklearn-classification", {"include": cheap_include})
