"""handcrafted passes the conformance kit (automl_core.testing) for meta-feature providers."""

from automl_core.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("metafeature_provider", "handcrafted")])
def test_conformance(component, check):
    check(component)
