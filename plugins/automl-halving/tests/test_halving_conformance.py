"""The racing strategies pass the conformance kit (automl_engine.testing)."""

from automl_engine.testing import Component, parametrize_with_checks

STRATEGIES = ("successive_halving", "hyperband", "asha")


@parametrize_with_checks([Component("search_strategy", name) for name in STRATEGIES])
def test_conformance(component, check):
    check(component)
