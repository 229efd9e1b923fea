"""Shared fixtures: plugin sets built from a known list, never from whatever is installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from toy_plugin import DoublesPlugin, ToyPlugin

from automl_core.plugins import Plugins, load_plugins


@pytest.fixture
def plugins() -> Plugins:
    """The core's defaults, the toy space and the test doubles; no installed plugins."""
    return load_plugins(extra=[ToyPlugin(), DoublesPlugin()], entry_points=False)
