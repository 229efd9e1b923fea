"""The ``openml:<id>`` source on a cache imported from scikit-learn's saved OpenML responses:
shapes, targets, categoricals and classes as the responses state them, no network, and
errors that say what is missing and how to provide it."""

from __future__ import annotations

import shutil
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openml_testdata import (
    SKLEARN_OPENML,
    api,
    dataset_dir,
    feature_columns,
    nominal_columns,
    quality,
)

from automl_core.errors import DatasetError
from automl_engine.cli import build_parser
from automl_engine.dataset import infer_task
from automl_engine.sources import check_reference, load_dataset
from automl_openml.cache import openml_configured
from automl_openml.importer import import_openml_command, run_import
from automl_openml.sources import load_openml


@pytest.mark.parametrize("dataset_id", [3, 61, 62])
def test_classification_datasets_match_their_openml_description(cache, network, dataset_id):
    data = load_openml(str(dataset_id))
    description = api(dataset_id, "jd")["data_set_description"]
    target = description["default_target_attribute"]
    assert data.name == f"openml:{dataset_id}"
    assert data.task == "classification"
    assert data.n_rows == quality(dataset_id, "NumberOfInstances")
    assert list(data.X.columns) == feature_columns(dataset_id)
    # NumberOfFeatures counts the target, not the ignored attribute (zoo's 'animal')
    assert data.n_features + 1 == quality(dataset_id, "NumberOfFeatures")
    assert data.categorical_columns == nominal_columns(dataset_id)
    assert data.info["nominal_columns"] == nominal_columns(dataset_id)
    counts = Counter(data.y.tolist())
    assert len(counts) == quality(dataset_id, "NumberOfClasses")
    assert max(counts.values()) == quality(dataset_id, "MajorityClassSize")
    assert min(counts.values()) == quality(dataset_id, "MinorityClassSize")
    assert data.info["target"] == target
    assert data.info["name"] == description["name"]
    assert data.info["qualities"]["NumberOfInstances"] == data.n_rows
    assert data.info["data_file"] == str(dataset_dir(cache, dataset_id) / "dataset.arff")
    assert network == []


def test_iris_values_and_labels(cache):
    data = load_openml("61")
    assert data.categorical_columns == []
    assert data.X.iloc[0].tolist() == [5.1, 3.5, 1.4, 0.2]  # the file's first row
    assert sorted(set(data.y)) == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    assert data.info["ignored_columns"] == [] and data.info["row_id_column"] is None


def test_zoo_leaves_out_its_ignored_attribute(cache):
    data = load_openml("62")
    assert "animal" not in data.X.columns
    assert data.info["ignored_columns"] == ["animal"]
    # 15 boolean attributes arrive as categoricals; 'legs' is the one numeric feature
    assert [c for c in data.X.columns if c not in data.categorical_columns] == ["legs"]
    with pytest.raises(DatasetError, match=r"no column 'animal' \(it is an ignored"):
        load_openml("62", target="animal")


def test_numeric_target_is_regression_as_on_openml(cache, network):
    data = load_openml("561")
    assert data.task == "regression"
    assert data.y.dtype == float and data.n_rows == quality(561, "NumberOfInstances")
    assert data.categorical_columns == ["vendor"] == nominal_columns(561)
    # cpu's performance values are whole numbers: the core's guess would be classification
    assert infer_task(data.y) == "classification"
    assert load_openml("561", task="classification").task == "classification"
    with pytest.raises(DatasetError, match="regression needs a numeric target"):
        load_openml("61", task="regression")
    assert network == []


def test_loads_through_the_core_with_the_plugin_registered(cache, plugins, network):
    assert {"openml", "openml-task"} <= set(plugins.registry.names("dataset_source"))
    parsed = build_parser(plugins).parse_args(["data", "import-openml", "some-dir"])
    assert parsed.handler is run_import and [str(d) for d in parsed.dirs] == ["some-dir"]
    data = load_dataset(plugins, "openml:61")
    assert (data.name, data.n_rows, data.n_features) == ("openml:61", 150, 4)
    regression = load_dataset(plugins, "openml:62", target="legs", task="regression")
    assert regression.task == "regression" and "legs" not in regression.X.columns
    assert network == []


def test_validate_refuses_a_reference_that_is_not_an_id(plugins, network):
    assert "named by its numeric id" in check_reference(plugins, "openml:iris")
    assert "an OpenML task" in check_reference(plugins, "openml-task:0")
    assert check_reference(plugins, "openml:61") is None
    assert network == []


def test_description_with_parquet_url_loads_its_arff_without_network(cache, network):
    """wine_reviews' description names a parquet file on OpenML's MinIO server; only the
    ARFF file is cached, and it is read without asking the server."""
    description = api(42074, "jd")["data_set_description"]
    assert description["parquet_url"].endswith("dataset_42074.pq")
    with pytest.warns(UserWarning, match=r"NumberOfInstances = 150930"):  # a 10-row copy
        data = load_openml("42074", target="points")
    assert (data.n_rows, data.task) == (10, "regression")
    assert network == []


@pytest.mark.parametrize(("dataset_id", "target"), [(61, "class"), (42074, "points")])
def test_cached_parquet_file_is_preferred(empty_cache, network, dataset_id, target):
    """A dataset_<id>.pq file, as openml 0.15 downloads it, is read instead of the ARFF file,
    also when the description names the server's parquet_url (wine_reviews)."""
    import_openml_command([str(SKLEARN_OPENML / f"id_{dataset_id}")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # wine_reviews is a 10-row copy
        from_arff = load_openml(str(dataset_id), target=target)
        folder = dataset_dir(empty_cache, dataset_id)
        y = from_arff.y if from_arff.task == "regression" else pd.Categorical(from_arff.y)
        from_arff.X.assign(**{target: y}).to_parquet(folder / f"dataset_{dataset_id}.pq")
        for name in ("dataset.arff", "dataset.pkl.py3"):
            (folder / name).unlink()
        from_parquet = load_openml(str(dataset_id), target=target)
    assert from_parquet.info["data_file"] == str(folder / f"dataset_{dataset_id}.pq")
    pd.testing.assert_frame_equal(from_parquet.X, from_arff.X)
    assert np.array_equal(from_parquet.y, from_arff.y)
    assert network == []


def test_missing_dataset_says_where_and_how(empty_cache, network):
    with pytest.raises(DatasetError) as caught:
        load_openml("999999")
    message = str(caught.value)
    folder = dataset_dir(empty_cache, 999999)
    assert message.startswith("OpenML dataset 999999 is not in the local cache")
    assert "could not be downloaded (ConnectionError" in message
    assert f"Searched {folder}/ for description.xml and dataset.arff" in message
    assert "`automl data import-openml DIR`" in message
    assert "api-v1-jd-999999.json.gz" in message and "data-v1-dl-<file id>.arff.gz" in message
    assert "$AUTOML_CACHE_DIR" in message
    assert len(network) == 1  # one attempt, no retries
    assert not folder.exists()
    assert [p.name for p in (empty_cache / "openml").iterdir()] == []  # no download leftovers


def test_broken_description_is_reported_and_kept(empty_cache, tmp_path, network):
    folder = dataset_dir(empty_cache, 61)
    shutil.copytree(dataset_dir(_imported(tmp_path, 61), 61), folder)
    (folder / "description.xml").write_text("<oml:data_set_description")
    with pytest.raises(DatasetError, match=r"cannot read the OpenML dataset description .*61"):
        load_openml("61")
    # openml's get_dataset would have deleted the folder after failing to download it again
    assert (folder / "description.xml").exists() and (folder / "dataset.arff").exists()
    assert network == []


def test_dataset_errors(cache):
    with pytest.raises(DatasetError, match=r"named by its numeric id, e\.g\. 'openml:61'"):
        load_openml("iris")
    with pytest.raises(DatasetError, match=r"6 default target attributes \(amazed\.suprised"):
        load_openml("40589")
    assert load_openml("40589", target="amazed.suprised").n_rows == 13
    with pytest.raises(DatasetError, match="has no default target attribute on OpenML"):
        load_openml("42074")
    with pytest.raises(DatasetError, match="is stored as sparse ARFF"):
        load_openml("292")
    with pytest.raises(DatasetError, match="task 'ranking' is not one of"):
        load_openml("61", task="ranking")


def test_openml_settings_are_restored(cache):
    import openml

    before = openml.config.get_config_as_dict()
    load_openml("61")
    with openml_configured() as configured:
        assert configured.config.get_cache_directory() == str(
            cache / "openml" / "org" / "openml" / "www"
        )
    assert openml.config.get_config_as_dict() == before


def _imported(tmp_path: Path, dataset_id: int) -> Path:
    """A separate cache root holding one imported dataset."""
    root = tmp_path / "other-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_CACHE_DIR", str(root))
        status = import_openml_command([str(SKLEARN_OPENML / f"id_{dataset_id}")])
    assert status == 0
    return root
