"""The Dask executor passes the conformance kit (automl_engine.testing) on a real
LocalCluster of one worker process."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("executor", "dask", params={"workers": 1})])
def test_conformance(component, check):
    check(component)
