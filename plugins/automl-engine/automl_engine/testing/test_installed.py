"""Collected by ``pytest --pyargs automl_engine.testing --automl-distribution NAME``: every
component of the named installed distributions, with every check of its kind (see
:mod:`automl_engine.testing.pytest_plugin`)."""

from __future__ import annotations

import pytest

from automl_engine.testing import NotApplicable


def test_installed_component_conforms(component, check):
    try:
        check(component)
    except NotApplicable as why:
        pytest.skip(f"{check.__name__}: {why}")
