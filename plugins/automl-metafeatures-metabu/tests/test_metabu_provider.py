"""Metabu as a meta-feature provider: the configurations' encoding, the fit on a meta-data
and its cache, the mapped meta-data source, and the errors a user can meet."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_engine.metastore import save_metadata
from automl_metafeatures_metabu.encoding import tabulate
from automl_metafeatures_metabu.fitting import (
    FittedMetabu,
    MetabuSettings,
    cache_folder,
    fit_metabu,
)
from automl_metafeatures_metabu.learn import FGWSettings
from automl_metafeatures_metabu.provider import MetabuMetaData, MetabuMetaFeatures

FAST = MetabuSettings(top=4, fgw=FGWSettings(epochs=300))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "cache"))


def family(n: int = 24, seed: int = 0) -> MetaData:
    """Datasets whose best configurations (a learning rate and a model) follow their first
    meta-feature; the other meta-features are noise, one is constant, one has a hole."""
    rng = np.random.default_rng(seed)
    configs = [
        {"model": model, "lr": float(lr)}
        for model in ("tree", "linear")
        for lr in np.geomspace(1e-4, 1.0, 10)
    ]
    signal = rng.uniform(0, 1, n)
    performance = np.empty((n, len(configs)))
    for i, s in enumerate(signal):
        for j, config in enumerate(configs):
            best_lr = -4 + 4 * s
            model_penalty = 0.2 if (config["model"] == "tree") == (s > 0.5) else 0.0
            performance[i, j] = abs(np.log10(config["lr"]) - best_lr) / 4 + model_penalty
    names = [f"d{i}" for i in range(n)]
    table = pd.DataFrame(
        {
            "signal": signal,
            "noise_a": rng.normal(size=n),
            "noise_b": rng.normal(size=n),
            "constant": np.ones(n),
        },
        index=names,
    )
    table.loc["d3", "noise_a"] = np.nan
    return MetaData(names, configs, performance, metafeatures=table, space="toy")


def test_configurations_become_numbers_one_hot_scaled_and_zero_when_inactive():
    rows = tabulate(
        [
            {"kind": "a", "C": 0.001, "depth": 2, "flag": True},
            {"kind": "b", "C": 1.0, "depth": 4, "flag": False},
            {"kind": "a", "C": 1000.0},
        ]
    )
    # columns by name: C (log-scaled), depth (linear), flag (one-hot), kind (one-hot)
    np.testing.assert_allclose(
        rows,
        [
            [0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
            [0.5, 1.0, 1.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        ],
    )


def test_the_fitted_map_ranks_neighbours_better_than_the_basic_features_and_is_cached():
    metadata = family()
    fitted = fit_metabu(metadata, FAST)
    assert fitted.columns == ["signal", "noise_a", "noise_b"]  # the constant one is dropped
    assert fitted.info["ndcg10_all"] > fitted.info["ndcg10_basic"]
    importances = fitted.importances()
    assert importances.index[0] == "signal"
    mapped = fitted.transform(metadata.metafeatures)
    assert list(mapped.columns) == fitted.names() and mapped.notna().all().all()
    cached = list(cache_folder().glob("*.npz"))
    assert len(cached) == 1
    again = fit_metabu(metadata, FAST)
    pd.testing.assert_frame_equal(again.transform(metadata.metafeatures), mapped)
    restored = FittedMetabu.load(cached[0])
    pd.testing.assert_frame_equal(restored.transform(metadata.metafeatures), mapped)
    fit_metabu(metadata, FAST, exclude=["d0"])
    assert len(list(cache_folder().glob("*.npz"))) == 2  # leaving a dataset out is another fit
    assert "d0" not in fit_metabu(metadata, FAST, exclude=["D0"]).info["datasets"]


def test_missing_values_are_imputed_by_the_training_median_and_missing_columns_named():
    metadata = family()
    fitted = fit_metabu(metadata, FAST)
    row = metadata.metafeatures.loc[["d5"]].copy()
    holed = row.copy()
    holed["noise_b"] = np.nan
    imputed = row.copy()
    imputed["noise_b"] = float(np.nanmedian(metadata.metafeatures["noise_b"]))
    pd.testing.assert_frame_equal(fitted.transform(holed), fitted.transform(imputed))
    with pytest.raises(ValueError, match=r"lack \['noise_b'\]"):
        fitted.transform(row.drop(columns=["noise_b"]))


def test_meta_data_that_cannot_be_learned_from_is_refused_with_the_reason():
    metadata = family()
    no_features = MetaData(metadata.datasets, metadata.configs, metadata.performance)
    with pytest.raises(ValueError, match="no meta-features"):
        fit_metabu(no_features, FAST)
    with pytest.raises(ValueError, match="at least 5 are needed"):
        fit_metabu(metadata, FAST, exclude=metadata.datasets[3:])
    with pytest.raises(ValueError, match="no meta-data to fit on"):
        MetabuMetaFeatures().fitted_map()
    with pytest.raises(ValueError, match="alpha"):
        MetabuMetaFeatures(alpha=2.0)


def test_the_source_describes_the_meta_data_by_metabu_features(tmp_path):
    metadata = family()
    save_metadata(metadata, tmp_path / "family")
    source = load_plugins().create(
        "metadata", "metabu", {"metadata": str(tmp_path / "family"), "dimension": 3, "top": 4}
    )
    assert isinstance(source, MetabuMetaData)
    mapped = source.load()
    assert list(mapped.metafeatures.columns) == ["metabu_0", "metabu_1", "metabu_2"]
    assert mapped.datasets == metadata.datasets
    np.testing.assert_array_equal(mapped.performance, metadata.performance)


def test_the_provider_pickles_with_its_fitted_map():
    provider = MetabuMetaFeatures(top=4, dimension=2)
    provider.fit(family())
    restored = pickle.loads(pickle.dumps(provider))
    table = family().metafeatures
    pd.testing.assert_frame_equal(
        restored.fitted_map().transform(table), provider.fitted_map().transform(table)
    )


def test_other_metafeatures_for_the_same_losses_are_another_fit():
    metadata = family()
    first = fit_metabu(metadata, FAST)
    shuffled = metadata.metafeatures.copy()
    shuffled["signal"] = shuffled["signal"].to_numpy()[::-1]
    other = MetaData(
        metadata.datasets, metadata.configs, metadata.performance, metafeatures=shuffled
    )
    second = fit_metabu(other, FAST)
    assert first.info["key"] != second.info["key"]


def test_the_basic_provider_and_the_metadata_come_from_the_registry_that_built_metabu():
    """Built by a run's registry, Metabu builds its basic provider from it (a provider that
    plugin registered in the process, here), not from the installed plugins."""
    from automl_core import hookimpl

    class Basic:
        def compute(self, X, y, task):
            return {"rows": float(len(X))}

    class InProcess:
        @hookimpl
        def register_metafeature_providers(self, register):
            register("in-process-basic", Basic)

    plugins = load_plugins(extra=[InProcess()])
    provider = plugins.create("metafeature_provider", "metabu", {"basic": "in-process-basic"})
    assert provider.registry is plugins and isinstance(provider._basic(), Basic)


def test_the_fit_command_prints_what_metabu_learned(tmp_path, capsys):
    """``automl metabu fit`` on a meta-data folder: the map's dimension and ranking quality,
    and the meta-feature that decides the family's best configurations weighing most."""
    import json

    from automl_engine.cli import main

    save_metadata(family(), tmp_path / "meta")
    command = ["metabu", "fit", str(tmp_path / "meta"), "--top", "4", "--dimension", "2"]
    assert main([*command, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["dimension"] == 2 and printed["top"] == 4
    assert printed["ndcg10_all"] > printed["ndcg10_basic"]
    assert max(printed["importances"], key=printed["importances"].get) == "signal"
    assert main(command) == 0  # the fitted map is cached: the text report at once
    text = capsys.readouterr().out
    assert "Metabu on toy: 24 datasets" in text and "signal:" in text
