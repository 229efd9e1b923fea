"""Fixtures for the gp surrogate's tests; the package is importable from a checkout too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="session")
def autosklearn_space():
    """auto-sklearn's classification space, from the installed automl-sklearn plugin."""
    from automl_core.errors import UnknownComponentError
    from automl_core.plugins import load_plugins

    plugins = load_plugins()
    try:
        return plugins.create("space", "autosklearn-classification")
    except UnknownComponentError:
        pytest.skip("automl-sklearn (space autosklearn-classification) is not installed")
