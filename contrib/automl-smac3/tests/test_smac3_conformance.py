"""The smac3 peer strategy passes the conformance kit (automl_engine.testing)."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("search_strategy", "smac3")])
def test_conformance(component, check):
    check(component)
