"""The racing strategies pass the conformance kit (automl_core.testing)."""

from automl_core.testing import Component, parametrize_with_checks

STRATEGIES = ("successive_halving", "hyperband", "asha")


@parametrize_with_checks([Component("search_strategy", name) for name in STRATEGIES])
def test_conformance(component, check):
    check(component)
