"""metabu, fitted on auto-sklearn's meta-data, passes the conformance kit (automl_engine.testing)
for meta-feature providers."""

import pytest

from automl_engine.testing import Component, parametrize_with_checks

pytest.importorskip("automl_metafeatures")  # the basic (hand-crafted) provider

PARAMS = {"metadata": "autosklearn", "dimension": 3}


@parametrize_with_checks([Component("metafeature_provider", "metabu", params=PARAMS)])
def test_conformance(component, check):
    check(component)
