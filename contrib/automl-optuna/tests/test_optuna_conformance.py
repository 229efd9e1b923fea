"""The optuna-tpe peer strategy passes the conformance kit (automl_engine.testing)."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("search_strategy", "optuna-tpe")])
def test_conformance(component, check):
    check(component)
