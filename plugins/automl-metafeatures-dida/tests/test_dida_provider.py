"""The provider ``dida``: meta-features of a whole dataset from trained weights."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import load_iris

from automl_core.errors import AutoMLError
from automl_engine.testing import Component, parametrize_with_checks
from automl_metafeatures_dida.network import Architecture, Dida, DidaWeights
from automl_metafeatures_dida.provider import DidaMetaFeatures
from automl_metafeatures_dida.tables import numeric_table

SMALL = Architecture(per_feature=4, first=8, second=8, pooled=16, dense=(16, 8, 4), neighbours=10)
#: untrained weights the kit's checks build the provider with (written before they run)
WEIGHTS = Path(tempfile.gettempdir()) / "automl-dida-test-weights.npz"


@pytest.fixture(autouse=True, scope="module")
def weights_file():
    torch.manual_seed(0)
    DidaWeights.of(Dida(SMALL)).save(WEIGHTS)
    yield WEIGHTS


def iris() -> tuple[pd.DataFrame, np.ndarray]:
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y.to_numpy()


def test_a_dataset_gets_one_meta_feature_per_unit_the_same_every_time():
    X, y = iris()
    first = DidaMetaFeatures(weights=WEIGHTS, samples=3).compute(X, y, "classification")
    assert list(first) == [f"dida_{i}" for i in range(SMALL.size)]
    again = DidaMetaFeatures(weights=WEIGHTS, samples=3).compute(X, y, "classification")
    assert first == again
    reordered = DidaMetaFeatures(weights=WEIGHTS, samples=3).compute(
        X[X.columns[::-1]], y, "classification"
    )
    np.testing.assert_allclose(list(reordered.values()), list(first.values()), atol=1e-5)


def test_categories_and_missing_values_become_numbers():
    frame = pd.DataFrame(
        {
            "colour": pd.Series(["red", "blue", None, "red"], dtype="category"),
            "size": [1.0, None, 3.0, 4.0],
        }
    )
    x, _ = numeric_table(frame, np.array([0, 1, 0, 1]))
    assert x.shape == (4, 3) and np.all(np.isfinite(x))
    assert x[1, 2] == pytest.approx(8 / 3)  # the mean of the observed sizes


def test_a_regression_target_is_read_as_quantile_classes():
    X, _ = iris()
    values = DidaMetaFeatures(weights=WEIGHTS).compute(
        X, X["petal length (cm)"].to_numpy(), "regression"
    )
    assert all(np.isfinite(list(values.values())))


def without_the_shipped_network(monkeypatch, folder: Path) -> None:
    """As an install without the plugin's shipped network (a stripped wheel) would be."""
    from automl_metafeatures_dida import provider

    monkeypatch.setattr(provider, "SHIPPED", folder / "not-shipped.npz")


def test_on_an_empty_cache_the_shipped_network_describes_a_dataset(tmp_path, monkeypatch):
    """No training step first: ``metafeatures: dida`` on a fresh install reads the network
    shipped in the package (trained with ``automl dida train``'s defaults)."""
    from automl_metafeatures_dida.network import Architecture
    from automl_metafeatures_dida.train import SHIPPED

    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    provider = DidaMetaFeatures(samples=2)
    assert provider.path == SHIPPED and SHIPPED.stat().st_size < 2_000_000
    X, y = iris()
    values = provider.compute(X, y, "classification")
    assert len(values) == Architecture().size and all(np.isfinite(list(values.values())))
    info = DidaWeights.load(SHIPPED).info
    assert len(info["trained_on"]) + len(info["validation"]) == 43  # KEEL's balanced sets


def test_without_trained_weights_the_error_says_how_to_train(tmp_path, monkeypatch):
    """At build time, so that ``automl validate`` and a run's start say it (a run found
    out at its meta-features step, after loading the data)."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    without_the_shipped_network(monkeypatch, tmp_path)
    with pytest.raises(AutoMLError, match="automl dida train"):
        DidaMetaFeatures()
    with pytest.raises(AutoMLError, match="no weights at"):
        DidaMetaFeatures(weights=tmp_path / "none.npz")


def test_validate_refuses_a_recipe_naming_dida_before_it_is_trained(tmp_path, monkeypatch, capsys):
    from automl_engine.cli import main

    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    without_the_shipped_network(monkeypatch, tmp_path)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "name: dida\ntask: {dataset: 'sklearn:iris', metric: accuracy}\n"
        "space: autosklearn-classification\nsearch: random\nmetafeatures: dida\n"
        "budget: {trials: 2}\n"
    )
    assert main(["validate", str(recipe)]) == 2
    error = capsys.readouterr().err
    assert "metafeatures" in error and "automl dida train" in error


@parametrize_with_checks(
    [Component("metafeature_provider", "dida", params={"weights": str(WEIGHTS), "samples": 2})]
)
def test_conformance(component, check):
    check(component)


def test_dida_list_on_an_empty_cache_says_how_to_train(tmp_path, monkeypatch, capsys):
    from automl_engine.cli import main

    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    assert main(["dida", "list"]) == 0
    out = capsys.readouterr().out
    assert "no trained Dida network in" in out and "(shipped)" in out


def test_a_run_naming_dida_on_a_fresh_cache_describes_its_dataset(tmp_path, monkeypatch):
    """No `automl dida train` first: the recipe runs on the shipped network and the run's
    history keeps its dataset's Dida meta-features."""
    from automl_core.plugins import load_plugins
    from automl_engine.history import RunHistory
    from automl_engine.recipe import parse_recipe
    from automl_engine.run_folder import HISTORY_FILE
    from automl_engine.runner import run

    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "cache"))
    recipe = parse_recipe(
        {
            "name": "dida-fresh",
            "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
            "space": {
                "name": "autosklearn-classification",
                "params": {"include": {"classifier": ["lda"]}},
            },
            "search": "random",
            "metafeatures": {"name": "dida", "params": {"samples": 2}},
            "executor": "sequential",
            "budget": {"trials": 2},
        }
    )
    run(recipe, tmp_path / "run", plugins=load_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        described = history.get_meta("metafeatures")
    assert sorted(described) == sorted(f"dida_{i}" for i in range(len(described)))
    assert len(described) > 0 and all(np.isfinite(list(described.values())))
