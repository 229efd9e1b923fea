"""Lets the tests run from a checkout without installing the plugin first (the entry-point
tests need it installed). The datasets and the ``system_plugins`` fixture the tests use are in
``contrib/conftest.py``, the checks in ``contrib/system_checks.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="module")
def system_distribution() -> str:
    """This distribution, loaded through its entry point by ``system_plugins``."""
    return "automl-baselines"
