"""The baseline systems pass the conformance kit's checks of a whole system (automl-bench's
kind), each fit within the kit's budget of a few seconds."""

from automl_engine.testing import Component, parametrize_with_checks

SYSTEMS = ("random-forest", "hist-gradient-boosting")


@parametrize_with_checks([Component("system", name) for name in SYSTEMS])
def test_conformance(component, check):
    check(component)
