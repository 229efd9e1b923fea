"""latent and independent-gp pass the conformance kit (automl_engine.testing) for their kind,
surrogate."""

from automl_engine.testing import Component, parametrize_with_checks


@parametrize_with_checks(
    [
        Component("surrogate", "latent", params={"steps": 30, "pretrain_epochs": 200}),
        Component("surrogate", "independent-gp"),
    ]
)
def test_conformance(component, check):
    check(component)
