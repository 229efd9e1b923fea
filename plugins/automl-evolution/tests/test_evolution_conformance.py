"""evolution passes the conformance kit (automl_engine.testing) for its kind, search_strategy."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("search_strategy", "evolution")])
def test_conformance(component, check):
    check(component)
