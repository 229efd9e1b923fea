"""handcrafted passes the conformance kit (automl_engine.testing) for meta-feature providers."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("metafeature_provider", "handcrafted")])
def test_conformance(component, check):
    check(component)
