"""knd passes the conformance kit (automl_engine.testing) for its kind, warmstarter."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("warmstarter", "knd")])
def test_conformance(component, check):
    check(component)
