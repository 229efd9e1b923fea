"""The Dask executor passes the conformance kit (automl_core.testing) on a real
LocalCluster of one worker process."""

from automl_core.testing import Component, parametrize_with_checks


@parametrize_with_checks([Component("executor", "dask", params={"workers": 1})])
def test_conformance(component, check):
    check(component)
