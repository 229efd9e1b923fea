"""caruana passes the conformance kit (automl_core.testing) for its kind, ensembler."""

from automl_core.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("ensembler", "caruana")])
def test_conformance(component, check):
    check(component)
