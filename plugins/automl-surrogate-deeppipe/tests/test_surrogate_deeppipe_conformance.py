"""deeppipe passes the conformance kit (automl_engine.testing) for its kind, surrogate."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks(
    [Component("surrogate", "deeppipe", params={"preset": "quick", "steps": 60})]
)
def test_conformance(component, check):
    check(component)
