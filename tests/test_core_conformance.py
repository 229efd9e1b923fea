"""The core's own components pass the conformance kit (automl_engine.testing)."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks(
    [
        Component("search_strategy", "random"),
        Component("executor", "sequential"),
        Component("executor", "processes", params={"workers": 2}),
        Component("dataset_source", "sklearn", example="iris"),
        Component("dataset_source", "keel", example="pima"),
    ]
)
def test_conformance(component, check):
    check(component)
