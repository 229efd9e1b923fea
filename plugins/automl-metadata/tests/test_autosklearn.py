"""auto-sklearn 0.15.0's meta-data, read from the real sdist.

The session fixtures convert each folder once per machine into the shared cache and read it
back afterwards. Tests of broken files build a small sdist of real files (some altered) under
``tmp_path`` and point the cache there, so the shared cache is never touched.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError, InvalidConfigurationError
from automl_engine.cache import CACHE_DIR_ENV
from automl_metadata.archive import read_member
from automl_metadata.autosklearn import FILES, AutoSklearnMetaData
from automl_spaces.pipeline_space import PipelineSpace

DENSE = "balanced_accuracy_binary.classification_dense"
MULTICLASS = "balanced_accuracy_multiclass.classification_dense"
SPARSE = "balanced_accuracy_binary.classification_sparse"
REGRESSION = "r2_regression_dense"
NOT_APPLICABLE = "roc_auc_binary.classification_dense"


@pytest.fixture(scope="module")
def dense() -> MetaData:
    return AutoSklearnMetaData(DENSE).load()


@pytest.fixture(scope="module")
def multiclass() -> MetaData:
    return AutoSklearnMetaData(MULTICLASS).load()


@pytest.fixture(scope="module")
def sparse() -> MetaData:
    return AutoSklearnMetaData(SPARSE).load()


@pytest.fixture(scope="module")
def regression() -> MetaData:
    return AutoSklearnMetaData(REGRESSION).load()


@pytest.fixture(scope="module")
def archive() -> Path:
    package = AutoSklearnMetaData.package
    assert package is not None
    return package.fetch()


def _runs_in_file(archive: Path, folder: str) -> dict[tuple[str, int], float]:
    """algorithm_runs.arff read plainly, independently of the module's reader:
    (dataset, configuration id) -> loss (NaN for '?')."""
    text = read_member(archive, f"{FILES}/{folder}/algorithm_runs.arff").decode()
    data = text.split("@DATA", 1)[1].split()
    runs = {}
    for line in data:
        instance, repetition, algorithm, loss, _status = line.split(",")
        assert repetition == "1.0"
        runs[(instance, int(algorithm))] = np.nan if loss == "?" else float(loss)
    return runs


def _observed(metadata: MetaData) -> dict[tuple[str, int], float]:
    ids = metadata.info["config_ids"]
    rows, cols = np.nonzero(np.isfinite(metadata.performance))
    return {
        (metadata.datasets[i], ids[j]): float(metadata.performance[i, j])
        for i, j in zip(rows, cols, strict=True)
    }


# ---------------------------------------------------------------------------------------------
# Folders and names
# ---------------------------------------------------------------------------------------------


def test_folders_lists_the_92_aslib_folders() -> None:
    folders = AutoSklearnMetaData.folders()
    assert len(folders) == 92
    classification = [f for f in folders if ".classification_" in f]
    regression = [f for f in folders if f.endswith(("_regression_dense", "_regression_sparse"))]
    assert len(classification) == 80  # 20 metrics x binary/multiclass x dense/sparse
    assert len(regression) == 12  # 6 metrics x dense/sparse
    assert {DENSE, MULTICLASS, SPARSE, REGRESSION} <= set(folders)


def test_cache_name_includes_the_folder() -> None:
    assert DENSE in AutoSklearnMetaData(DENSE).cache_name()
    assert AutoSklearnMetaData(DENSE).cache_name() != AutoSklearnMetaData(SPARSE).cache_name()
    assert AutoSklearnMetaData().cache_name() == AutoSklearnMetaData(DENSE).cache_name()


def test_an_unknown_folder_names_close_folders() -> None:
    with pytest.raises(DatasetError, match="did you mean") as error:
        AutoSklearnMetaData("balanced_acuracy_binary.classification_dense").load()
    assert repr(DENSE) in str(error.value)
    assert "folders()" in str(error.value)


def test_a_path_is_not_a_folder_name() -> None:
    with pytest.raises(DatasetError, match="not a folder name"):
        AutoSklearnMetaData("../balanced_accuracy_binary.classification_dense")


# ---------------------------------------------------------------------------------------------
# The balanced-accuracy classification folders
# ---------------------------------------------------------------------------------------------


def test_dense_counts_and_metafeatures(dense: MetaData) -> None:
    assert dense.shape == (208, 205)
    assert dense.space == "autosklearn-classification"
    features = dense.metafeatures
    assert features is not None
    assert features.shape == (208, 37)
    assert sorted(features.index) == dense.datasets
    assert not features.isna().any().any()  # no '?' in feature_values.arff
    assert {"ClassEntropy", "NumberOfClasses", "SkewnessSTD", "SymbolsSum"} <= set(features)
    # feature_values.arff, line 44: 2dplanes' ClassEntropy
    assert features.loc["2dplanes", "ClassEntropy"] == pytest.approx(0.9999998366087277, rel=1e-14)


def test_dense_info(dense: MetaData) -> None:
    info = dense.info
    assert info["metric"] == "balanced_accuracy"
    assert (info["task"], info["sparse"], info["folder"]) == ("binary", False, DENSE)
    assert info["licence"] == "BSD-3-Clause"
    assert info["source"] == "auto-sklearn==0.15.0 (sdist)"
    assert info["runstatus"] == {"ok": 205}
    assert info["description"]["maximize"] is False
    assert info["description"]["algorithm_cutoff_time"] == 1800
    assert len(info["config_ids"]) == len(set(info["config_ids"])) == 205


def test_dense_performance_is_exactly_the_runs_of_the_file(dense, archive) -> None:
    assert _observed(dense) == _runs_in_file(archive, DENSE)
    assert np.isfinite(dense.performance).sum() == 205
    # Every configuration is the best of exactly one run; one name has two runs.
    assert (np.isfinite(dense.performance).sum(axis=0) == 1).all()
    counts = np.isfinite(dense.performance).sum(axis=1)
    runs_per_dataset = dict(zip(dense.datasets, counts, strict=True))
    assert {d for d, n in runs_per_dataset.items() if n == 0} == {
        "cifar_10",
        "gtsrb-hog03",
        "kuzushiji-49",
        "svhn",
    }
    assert {d for d, n in runs_per_dataset.items() if n > 1} == {"steel-plates-fault"}
    # algorithm_runs.arff, line 10
    twonorm = dense.performance[dense.row("twonorm"), dense.info["config_ids"].index(1)]
    assert twonorm == 0.01565922561525568


def test_configurations_keep_auto_sklearns_names_and_types(dense: MetaData) -> None:
    config = dense.configs[dense.info["config_ids"].index(19)]  # configurations.csv, idx 19
    assert config["classifier:__choice__"] == "random_forest"
    assert config["classifier:random_forest:max_depth"] == "None"  # a value, not missing
    assert config["classifier:random_forest:bootstrap"] == "False"
    assert config["classifier:random_forest:max_features"] == 0.2349572029288535
    assert isinstance(config["classifier:random_forest:min_samples_leaf"], int)
    assert isinstance(config["classifier:random_forest:min_impurity_decrease"], float)
    assert config["feature_preprocessor:polynomial:degree"] == 3
    assert config["data_preprocessor:__choice__"] == "feature_type"
    # Inactive hyper-parameters (empty cells) are left out.
    assert not any(k.startswith(("classifier:lda:", "classifier:mlp:")) for k in config)
    assert len(config) == 21


def test_binary_and_multiclass_folders_hold_the_same_data(dense, multiclass) -> None:
    assert multiclass.info["task"] == "multiclass"
    assert multiclass.datasets == dense.datasets
    assert multiclass.configs == dense.configs
    np.testing.assert_array_equal(multiclass.performance, dense.performance)


def test_sparse_folder(sparse: MetaData, archive: Path) -> None:
    assert sparse.shape == (208, 197)
    assert sparse.metafeatures is not None and sparse.metafeatures.shape == (208, 37)
    assert sparse.info["sparse"] is True
    assert _observed(sparse) == _runs_in_file(archive, SPARSE)
    assert np.isfinite(sparse.performance).sum() == 197
    assert (np.isfinite(sparse.performance).any(axis=1)).sum() == 196


def test_not_applicable_runs_have_no_loss(archive: Path) -> None:
    metadata = AutoSklearnMetaData(NOT_APPLICABLE).load()
    assert metadata.info["runstatus"] == {"not_applicable": 80, "ok": 125}
    assert np.isfinite(metadata.performance).sum() == 125
    file_runs = _runs_in_file(archive, NOT_APPLICABLE)
    assert _observed(metadata) == {k: v for k, v in file_runs.items() if np.isfinite(v)}


def test_regression_folder(regression: MetaData, archive: Path) -> None:
    assert regression.shape == (111, 97)
    assert regression.space == "autosklearn-regression"
    assert (regression.info["metric"], regression.info["task"]) == ("r2", "regression")
    features = regression.metafeatures
    assert features is not None and features.shape == (111, 31)
    assert "ClassEntropy" not in features  # no class statistics for regression
    assert _observed(regression) == _runs_in_file(archive, REGRESSION)
    assert np.isfinite(regression.performance).sum() == 97


# ---------------------------------------------------------------------------------------------
# Membership in automl_sklearn's spaces (the k-nearest-datasets warm start needs it)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sklearn_spaces() -> dict[str, PipelineSpace]:
    pytest.importorskip("automl_sklearn")
    from automl_sklearn.plugin import COMPONENTS
    from automl_sklearn.spaces import classification_space, regression_space

    return {
        "autosklearn-classification": classification_space(list(COMPONENTS)),
        "autosklearn-regression": regression_space(list(COMPONENTS)),
    }


def _rejected(metadata: MetaData, spaces: dict[str, PipelineSpace]) -> dict[int, str]:
    space = spaces[metadata.space]
    rejected = {}
    for config_id, config in zip(metadata.info["config_ids"], metadata.configs, strict=True):
        try:
            space.validate(config)
        except InvalidConfigurationError as error:
            rejected[config_id] = str(error)
    return rejected


@pytest.mark.parametrize("name", ["dense", "multiclass", "sparse", "regression"])
def test_every_configuration_is_in_the_default_space(name, sklearn_spaces, request) -> None:
    metadata = request.getfixturevalue(name)
    assert _rejected(metadata, sklearn_spaces) == {}


def test_validation_is_strict(dense: MetaData, sklearn_spaces) -> None:
    # The membership test above means something only if a broken configuration fails.
    space = sklearn_spaces["autosklearn-classification"]
    config = dict(dense.configs[dense.info["config_ids"].index(19)])
    config["classifier:random_forest:max_depth"] = None  # what NA detection would have made
    with pytest.raises(InvalidConfigurationError):
        space.validate(config)


# ---------------------------------------------------------------------------------------------
# Broken files (a small sdist of real, partly altered files under tmp_path)
# ---------------------------------------------------------------------------------------------

MEMBERS = ("algorithm_runs.arff", "configurations.csv", "feature_values.arff", "description.txt")


@pytest.fixture(scope="module")
def dense_files(archive: Path) -> dict[str, bytes]:
    """The real files of the dense folder, read once."""
    return {m: read_member(archive, f"{FILES}/{DENSE}/{m}") for m in MEMBERS}


@pytest.fixture
def fake_sdist(
    dense_files: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., None]:
    """``fake_sdist(alter={file: function}, drop=(file,))``: an sdist holding the real files
    of the dense folder, altered or left out, as the cache's auto-sklearn package."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))

    def write(alter: dict[str, Callable[[bytes], bytes]] | None = None, drop=()) -> None:
        folder = tmp_path / "packages" / "auto-sklearn-0.15.0"
        folder.mkdir(parents=True)
        with tarfile.open(folder / "auto-sklearn-0.15.0.tar.gz", "w:gz") as tar:
            for member, data in dense_files.items():
                if member in drop:
                    continue
                data = (alter or {}).get(member, lambda d: d)(data)
                info = tarfile.TarInfo(f"auto-sklearn-0.15.0/{FILES}/{DENSE}/{member}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))

    return write


def _replace_line(prefix: str, change: Callable[[str], str]) -> Callable[[bytes], bytes]:
    def alter(data: bytes) -> bytes:
        lines = data.decode().split("\n")
        index = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        lines[index] = change(lines[index])
        return "\n".join(lines).encode()

    return alter


def test_a_missing_metafeature_becomes_nan(fake_sdist) -> None:
    # '?' is ARFF's missing value; replace 2dplanes' ClassEntropy (third field) with it.
    def unknown_entropy(line: str) -> str:
        fields = line.split(",")
        return ",".join([*fields[:2], "?", *fields[3:]])

    fake_sdist(alter={"feature_values.arff": _replace_line("2dplanes,", unknown_entropy)})
    features = AutoSklearnMetaData(DENSE).load().metafeatures
    assert features is not None
    assert np.isnan(features.loc["2dplanes", "ClassEntropy"])
    assert features.isna().sum().sum() == 1


def test_a_short_row_names_file_and_line(fake_sdist) -> None:
    fake_sdist(
        alter={"feature_values.arff": _replace_line("abalone,", lambda s: s[: s.rfind(",")])}
    )
    with pytest.raises(DatasetError, match=r"feature_values\.arff, line 45: 38 values"):
        AutoSklearnMetaData(DENSE).load()


def test_a_run_of_an_unknown_configuration_is_an_error(fake_sdist) -> None:
    # Drop configuration 1 (the row after the header), which twonorm's run names.
    def without_first_config(data: bytes) -> bytes:
        lines = data.decode().split("\n")
        assert lines[1].startswith("1,")
        return "\n".join([lines[0], *lines[2:]]).encode()

    fake_sdist(alter={"configurations.csv": without_first_config})
    with pytest.raises(DatasetError, match=r"runs of configurations \[1\] not in"):
        AutoSklearnMetaData(DENSE).load()


def test_a_missing_file_is_named(fake_sdist) -> None:
    fake_sdist(drop=("configurations.csv",))
    with pytest.raises(DatasetError, match=r"has no file .*configurations\.csv"):
        AutoSklearnMetaData(DENSE).load()


def test_a_second_repetition_is_refused(fake_sdist) -> None:
    fake_sdist(
        alter={
            "algorithm_runs.arff": _replace_line("twonorm,", lambda s: s.replace(",1.0,", ",2.0,"))
        }
    )
    with pytest.raises(DatasetError, match=r"repetitions \[2\.0\] besides 1"):
        AutoSklearnMetaData(DENSE).load()
