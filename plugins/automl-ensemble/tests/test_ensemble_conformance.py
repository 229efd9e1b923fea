"""caruana passes the conformance kit (automl_engine.testing) for its kind, ensembler."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("ensembler", "caruana")])
def test_conformance(component, check):
    check(component)
