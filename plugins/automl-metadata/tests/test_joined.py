"""The ``joined`` source: one meta-data's losses with another's meta-features."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_engine.metastore import save_metadata


def _folders(tmp_path):
    losses = MetaData(
        datasets=["1", "2", "3"],
        configs=[{"a": 1}, {"a": 2}],
        performance=np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]),
        runtimes=np.ones((3, 2)),
        splits={"train": ["1", "3"], "test": ["2"]},
    )
    described = MetaData(
        datasets=["3", "1", "9"],
        configs=[{"b": 0}],
        performance=np.zeros((3, 1)),
        metafeatures=pd.DataFrame({"m": [30.0, 10.0, 90.0]}, index=["3", "1", "9"]),
    )
    save_metadata(losses, tmp_path / "losses")
    save_metadata(described, tmp_path / "described")
    return str(tmp_path / "losses"), str(tmp_path / "described")


def test_the_shared_datasets_keep_one_sides_losses_and_the_others_metafeatures(tmp_path):
    losses, described = _folders(tmp_path)
    plugins = load_plugins()
    joined = plugins.create(
        "metadata", "joined", {"performance": losses, "metafeatures": described}
    )
    metadata = joined.load()
    assert metadata.datasets == ["1", "3"]
    np.testing.assert_array_equal(metadata.performance, [[0.1, 0.2], [0.5, 0.6]])
    assert metadata.metafeatures["m"].tolist() == [10.0, 30.0]
    assert metadata.configs == [{"a": 1}, {"a": 2}] and metadata.runtimes.shape == (2, 2)
    assert metadata.splits == {"train": ["1", "3"], "test": []}


def test_sides_without_metafeatures_or_shared_datasets_are_named(tmp_path):
    losses, described = _folders(tmp_path)
    plugins = load_plugins()
    with pytest.raises(ValueError, match="has no meta-features"):
        plugins.create(
            "metadata", "joined", {"performance": described, "metafeatures": losses}
        ).load()
    with pytest.raises(ValueError, match="neither a registered meta-data source"):
        plugins.create(
            "metadata", "joined", {"performance": "nowhere", "metafeatures": described}
        ).load()


def test_a_source_registered_by_another_plugin_in_the_process_is_joined_by_name(tmp_path):
    """The sides are built from the registry that built ``joined`` (any plugin's source,
    even one registered in the process), not from automl-metadata's own list."""
    from automl_core import hookimpl
    from automl_engine.metastore import load_metadata

    losses, _ = _folders(tmp_path)

    class ThirdParty:
        def load(self) -> MetaData:
            return load_metadata(tmp_path / "described")

    class ThirdPartyPlugin:
        @hookimpl
        def register_metadata(self, register):
            register("third-party", ThirdParty)

    plugins = load_plugins(extra=[ThirdPartyPlugin()])
    joined = plugins.create(
        "metadata", "joined", {"performance": losses, "metafeatures": "third-party"}
    )
    assert joined.load().metafeatures["m"].tolist() == [10.0, 30.0]
