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
