"""The recipe shape the ensemble's end-to-end tests share: a random search over a few
auto-sklearn classifiers on a holdout, then the Caruana ensemble."""

from collections.abc import Callable

import pytest


def _caruana_recipe(
    dataset: str,
    classifiers: list[str],
    preprocessors: list[str],
    size: int,
    trials: int,
    seed: int,
) -> dict:
    return {
        "name": "caruana",
        "task": {
            "dataset": dataset,
            "metric": "balanced_accuracy",
            "resampling": {"holdout": 0.33},
            "test_size": 0.25,
        },
        "space": {
            "name": "autosklearn-classification",
            "params": {
                "include": {"classifier": classifiers, "feature_preprocessor": preprocessors}
            },
        },
        "search": {"strategy": "random"},
        "ensemble": {"ensembler": "caruana", "params": {"size": size}},
        "budget": {"trials": trials},
        "seed": seed,
    }


@pytest.fixture
def caruana_recipe() -> Callable[..., dict]:
    """``caruana_recipe(dataset, classifiers, preprocessors, size, trials, seed)``."""
    return _caruana_recipe
