"""The flaml system passes the conformance kit's checks of a whole system (automl-bench's
kind), each fit within the kit's budget of a few seconds."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("system", "flaml")])
def test_conformance(component, check):
    check(component)
