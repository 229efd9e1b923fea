"""Lets the tests run from a checkout without installing the plugin first; the fixtures the
peers' tests share are in ``contrib/conftest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="module")
def peer_plugin() -> str:
    """This plugin's module, added to the shared ``plugins`` fixture."""
    return "automl_smac3.plugin"
