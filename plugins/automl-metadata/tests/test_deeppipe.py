"""DeepPipe's PMF and Tensor-OBOE meta-datasets, read from the real deeppipe-api wheel.

The session fixtures convert each meta-dataset once per machine into the shared cache (about
15 s each the first time) and read the converted folder afterwards (about a second). The
spot checks compare the loaded data with the JSON text itself, sliced out of the wheel, so
they do not share the loader's parsing. Tests of broken packages put small archives under
``tmp_path`` and point the cache there, so the shared cache is never touched.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_engine.cache import CACHE_DIR_ENV
from automl_metadata.archive import read_member
from automl_metadata.deeppipe import (
    DEEPPIPE_PACKAGE,
    PMF,
    PMF_FILE,
    TENSOR_OBOE_FILE,
    TENSOR_OBOE_SPACE_FILE,
    TRAINING_INDEX_FILE,
    TensorOboe,
)
from automl_metadata.oboe import OBOE_PACKAGE
from automl_metadata.store import Package

OBOE_TENSOR_FILE = "oboe/defaults/TensorOboe/error_tensor_imputed_20-4-2-2-8-20_f16_compressed.npz"
DEEPPIPE_WHEEL = "deeppipe_api-0.1.1-py3-none-any.whl"
OBOE_WHEEL = "oboe-0.2.0-py3-none-any.whl"


@pytest.fixture(scope="module")
def pmf() -> MetaData:
    return PMF().load()


@pytest.fixture(scope="module")
def tensor_oboe() -> MetaData:
    return TensorOboe().load()


@pytest.fixture(scope="module")
def pmf_text() -> bytes:
    return read_member(DEEPPIPE_PACKAGE.fetch(), PMF_FILE)


@pytest.fixture(scope="module")
def tensor_oboe_text() -> bytes:
    return read_member(DEEPPIPE_PACKAGE.fetch(), TENSOR_OBOE_FILE)


# ---------------------------------------------------------------------------------------------
# PMF
# ---------------------------------------------------------------------------------------------


def test_pmf_has_553_openml_datasets_and_38151_pipelines(pmf: MetaData) -> None:
    assert pmf.shape == (553, 38151)
    assert len(set(pmf.datasets)) == 553
    assert all(d.isdigit() for d in pmf.datasets)
    assert pmf.configs[0] == {"candidate": 0} and pmf.configs[-1] == {"candidate": 38150}
    assert pmf.space == "pmf" and pmf.pool is not None and pmf.pool.name == "pmf"


def test_pmf_splits_partition_the_datasets(pmf: MetaData) -> None:
    sizes = {name: len(ids) for name, ids in pmf.splits.items()}
    assert sizes == {"train": 449, "validation": 15, "test": 89}
    members = [set(ids) for ids in pmf.splits.values()]
    assert sum(len(m) for m in members) == len(set().union(*members))
    assert set().union(*members) == set(pmf.datasets)


def test_pmf_errors_are_in_unit_range_and_a_fifth_is_missing(pmf: MetaData) -> None:
    missing = np.isnan(pmf.performance)
    assert missing.mean() == pytest.approx(0.20677, abs=0.001)
    assert not missing.all(axis=1).any() and not missing.all(axis=0).any()
    observed = pmf.performance[~missing]
    assert observed.min() == 0.0 and observed.max() == 1.0


def test_pmf_pool_has_two_stages_over_ten_encoding_blocks(pmf: MetaData) -> None:
    pool = pmf.pool
    assert pool is not None and pool.stage_choices is not None
    assert pool.encodings.shape == (38151, 72)
    assert pool.encodings.min() == 0.0 and pool.encodings.max() == 1.0
    assert pool.stage_names == ("preprocessor", "estimator")
    assert pool.stage_choices.shape == (38151, 2)
    assert set(np.unique(pool.stage_choices[:, 0])) == {0, 1}
    assert set(np.unique(pool.stage_choices[:, 1])) == set(range(8))
    assert pmf.info["algorithm_domain"] == [0, 3, 5, 14, 24, 37, 41, 51, 60, 66, 72]
    assert pmf.info["stage_algorithms"] == [[0, 1], [2, 3, 4, 5, 6, 7, 8, 9]]
    assert pool.descriptions is not None and len(pool.descriptions) == 38151
    assert pool.describe({"candidate": 0}) == {
        "preprocessor": {"algorithm": "preprocessor_0", "encoding_columns": [0, 3]},
        "estimator": {"algorithm": "estimator_0", "encoding_columns": [5, 14]},
    }


def test_pmf_descriptions_point_at_the_columns_their_algorithms_use(pmf: MetaData) -> None:
    assert_blocks_belong_to_their_algorithms(pmf)


def test_pmf_warm_starts_are_five_pipelines_per_test_dataset(pmf: MetaData) -> None:
    init_ids = pmf.info["init_ids"]
    assert init_ids["train"] == {} and init_ids["validation"] == {}
    assert set(init_ids["test"]) == set(pmf.splits["test"])
    assert {len(ids) for ids in init_ids["test"].values()} == {5}
    rows = [(pmf.row(d), j) for d, ids in init_ids["test"].items() for j in ids]
    assert all(0 <= j < 38151 for _, j in rows)
    # The file's own designs include 43 of 445 pipelines that were never run on their
    # dataset (DeepPipe's meta_test.py skips those).
    not_run = sum(np.isnan(pmf.performance[i, j]) for i, j in rows)
    assert (len(rows), not_run) == (445, 43)


def test_pmf_matches_the_json_text(pmf: MetaData, pmf_text: bytes) -> None:
    pool = pmf.pool
    assert pool is not None and pool.stage_choices is not None
    first, last = first_and_last_rows(pmf_text, "pipelines")
    np.testing.assert_array_equal(pool.encodings[[0, -1]], [first, last])
    first, last = first_and_last_rows(pmf_text, "error")
    np.testing.assert_array_equal(pmf.performance[[0, -1]], [first, last])
    small = small_fields(pmf_text)
    assert pmf.datasets == small["original_dataset_id"]
    validation, test, train = small["tasks_index"]
    assert pmf.splits["test"] == [pmf.datasets[i] for i in test]
    assert pmf.splits["validation"] == [pmf.datasets[i] for i in validation]
    assert pmf.splits["train"] == [pmf.datasets[i] for i in train]
    np.testing.assert_array_equal(pool.stage_choices, small["list_for_selector"])
    row, design = next(iter(small["init_ids"][1].items()))
    assert pmf.info["init_ids"]["test"][pmf.datasets[int(row)]] == design


# ---------------------------------------------------------------------------------------------
# Tensor-OBOE
# ---------------------------------------------------------------------------------------------


def test_tensor_oboe_has_551_openml_datasets_and_23424_pipelines(tensor_oboe: MetaData) -> None:
    assert tensor_oboe.shape == (551, 23424)
    assert len(set(tensor_oboe.datasets)) == 551
    assert all(d.isdigit() for d in tensor_oboe.datasets)
    assert tensor_oboe.space == "tensor-oboe"
    assert tensor_oboe.pool is not None and tensor_oboe.pool.name == "tensor-oboe"


def test_tensor_oboe_folds_partition_the_datasets(tensor_oboe: MetaData) -> None:
    assert [len(v) for v in tensor_oboe.splits.values()] == [110, 110, 110, 110, 111]
    assert list(tensor_oboe.splits) == [f"fold{k}" for k in range(5)]
    members = [set(ids) for ids in tensor_oboe.splits.values()]
    assert sum(len(m) for m in members) == 551
    assert set().union(*members) == set(tensor_oboe.datasets)


def test_tensor_oboe_missing_cells(tensor_oboe: MetaData) -> None:
    missing = np.isnan(tensor_oboe.performance)
    assert missing.mean() == pytest.approx(0.08652, abs=0.001)
    assert missing.all(axis=1).sum() == 2  # two datasets have no result at all
    assert not missing.all(axis=0).any()
    observed = tensor_oboe.performance[~missing]
    assert observed.min() >= 0.0 and observed.max() < 1.0


def test_tensor_oboe_errors_are_oboes_own_tensor(tensor_oboe: MetaData) -> None:
    """Oboe's imputed tensor keeps every observed cell: equal cells confirm that rows follow
    training_index.pkl's dataset order and pipelines the order of the space's settings."""
    data = read_member(OBOE_PACKAGE.fetch(), OBOE_TENSOR_FILE)
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        tensor = archive["a"]
    assert tensor.shape == (551, 4, 2, 2, 8, 183)
    flat = tensor.reshape(551, -1).astype(float)
    observed = ~np.isnan(tensor_oboe.performance)
    np.testing.assert_array_equal(flat[observed], tensor_oboe.performance[observed])


def test_tensor_oboe_pool_has_five_stages(tensor_oboe: MetaData) -> None:
    pool = tensor_oboe.pool
    assert pool is not None and pool.stage_choices is not None and pool.descriptions is not None
    assert pool.encodings.shape == (23424, 37)
    assert pool.stage_names == ("imputer", "encoder", "standardizer", "dim_reducer", "estimator")
    # DeepPipe's encoder blocks per stage (list_for_selector) ...
    selector = np.asarray(tensor_oboe.info["list_for_selector"])
    assert [len(np.unique(selector[:, s])) for s in range(5)] == [1, 1, 1, 3, 10]
    # ... are coarser than the algorithms, which are the stage choices ...
    names = tensor_oboe.info["stage_choice_names"]
    assert [len(np.unique(pool.stage_choices[:, s])) for s in range(5)] == [1, 2, 2, 4, 11]
    assert names["dim_reducer"] == ["none", "PCA", "SelectKBest", "VarianceThreshold"]
    for j in (0, 5000, 23423):
        chosen = pool.describe({"candidate": j})["estimator"]["algorithm"]
        assert names["estimator"][pool.stage_choices[j, 4]] == chosen
    # ... and coarser still than the settings the descriptions name: 4 x 2 x 2 x 8 x 183.
    settings = [
        len({json.dumps(d[stage], sort_keys=True) for d in pool.descriptions})
        for stage in pool.stage_names
    ]
    assert settings == [4, 2, 2, 8, 183]
    assert len({json.dumps(d, sort_keys=True) for d in pool.descriptions}) == 23424


def test_tensor_oboe_descriptions_follow_classification_json(tensor_oboe: MetaData) -> None:
    pool = tensor_oboe.pool
    assert pool is not None
    space = json.loads(read_member(DEEPPIPE_PACKAGE.fetch(), TENSOR_OBOE_SPACE_FILE))
    assert pool.describe({"candidate": 0}) == {
        "imputer": {"algorithm": "SimpleImputer", "hyperparameters": {"strategy": "mean"}},
        "encoder": {"algorithm": None, "hyperparameters": {}},
        "standardizer": {"algorithm": None, "hyperparameters": {}},
        "dim_reducer": {"algorithm": None, "hyperparameters": {}},
        "estimator": {"algorithm": "KNN", "hyperparameters": {"n_neighbors": 1, "p": 1}},
    }
    last = pool.describe({"candidate": 23423})
    for stage, setting in last.items():
        algorithm = space[stage]["algorithms"][-1]
        grid = space[stage]["hyperparameters"][algorithm]
        assert setting == {
            "algorithm": algorithm,
            "hyperparameters": {name: values[-1] for name, values in grid.items()},
        }


def test_tensor_oboe_descriptions_agree_with_the_encodings(tensor_oboe: MetaData) -> None:
    pool = tensor_oboe.pool
    assert pool is not None and pool.descriptions is not None
    # The imputer's four columns one-hot encode the strategy, categories sorted by name.
    strategies = sorted(["mean", "median", "most_frequent", "constant"])
    described = [
        strategies.index(d["imputer"]["hyperparameters"]["strategy"]) for d in pool.descriptions
    ]
    np.testing.assert_array_equal(pool.encodings[:, :4].argmax(axis=1), described)
    assert set(pool.encodings[:, :4].sum(axis=1)) == {1.0}
    # The 0/1 columns of the encoder and standardizer say whether the stage is used.
    for stage, column in (("encoder", 4), ("standardizer", 5)):
        used = [d[stage]["algorithm"] is not None for d in pool.descriptions]
        np.testing.assert_array_equal(pool.encodings[:, column], used)
    # KNN's block holds n_neighbors / 15 and p / 2 (each scaled by its largest value).
    knn = [j for j, d in enumerate(pool.descriptions) if d["estimator"]["algorithm"] == "KNN"]
    start, _ = block_columns(tensor_oboe, 4, int(selector_of(tensor_oboe)[knn[0], 4]))
    hyper = [pool.descriptions[j]["estimator"]["hyperparameters"] for j in knn]
    np.testing.assert_allclose(pool.encodings[knn, start], [h["n_neighbors"] / 15 for h in hyper])
    np.testing.assert_allclose(pool.encodings[knn, start + 1], [h["p"] / 2 for h in hyper])


def test_tensor_oboe_encoding_blocks_belong_to_their_algorithms(tensor_oboe: MetaData) -> None:
    assert_blocks_belong_to_their_algorithms(tensor_oboe)


def test_tensor_oboe_warm_starts_were_run_on_their_datasets(tensor_oboe: MetaData) -> None:
    init_ids = tensor_oboe.info["init_ids"]
    assert list(init_ids) == list(tensor_oboe.splits)
    performance = tensor_oboe.performance
    without_results = {
        d for d in tensor_oboe.datasets if np.isnan(performance[tensor_oboe.row(d)]).all()
    }
    for fold, designs in init_ids.items():
        assert set(designs) == set(tensor_oboe.splits[fold])
        for dataset, pipelines in designs.items():
            if dataset in without_results:
                assert pipelines == []
                continue
            assert len(pipelines) == 5
            assert np.isfinite(performance[tensor_oboe.row(dataset), pipelines]).all()


def test_tensor_oboe_matches_the_json_text(tensor_oboe: MetaData, tensor_oboe_text: bytes) -> None:
    pool = tensor_oboe.pool
    assert pool is not None and pool.stage_choices is not None
    first, last = first_and_last_rows(tensor_oboe_text, "pipelines")
    np.testing.assert_array_equal(pool.encodings[[0, -1]], [first, last])
    first, last = first_and_last_rows(tensor_oboe_text, "error")
    np.testing.assert_array_equal(tensor_oboe.performance[[0, -1]], [first, last])
    small = small_fields(tensor_oboe_text)
    for k, rows in enumerate(small["tasks_index"]):
        assert tensor_oboe.splits[f"fold{k}"] == [tensor_oboe.datasets[i] for i in rows]
    np.testing.assert_array_equal(tensor_oboe.info["list_for_selector"], small["list_for_selector"])
    row, design = next(iter(small["init_ids"][2].items()))
    assert tensor_oboe.info["init_ids"]["fold2"][tensor_oboe.datasets[int(row)]] == design


def test_tensor_oboe_dataset_ids_are_oboes_training_index(tensor_oboe: MetaData) -> None:
    """Read here with an unpickler that may not import anything (the recipe of Python's pickle
    documentation), independently of the loader's opcode walk."""

    class NoGlobals(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            raise pickle.UnpicklingError(f"refused {module}.{name}")

    data = read_member(OBOE_PACKAGE.fetch(), TRAINING_INDEX_FILE)
    ids = NoGlobals(io.BytesIO(data)).load()
    assert tensor_oboe.datasets == [str(i) for i in ids]


# ---------------------------------------------------------------------------------------------
# Broken packages
# ---------------------------------------------------------------------------------------------


def test_a_corrupt_wheel_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    wheel = cached_wheel(tmp_path, DEEPPIPE_PACKAGE, DEEPPIPE_WHEEL)
    wheel.write_bytes(b"this is not a zip archive")
    with pytest.raises(DatasetError, match=DEEPPIPE_WHEEL):
        PMF().load()
    assert not PMF().is_converted()


def test_a_truncated_meta_dataset_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pmf_text: bytes
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    wheel = cached_wheel(tmp_path, DEEPPIPE_PACKAGE, DEEPPIPE_WHEEL)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(PMF_FILE, pmf_text[:5000])  # the real file, cut off
    with pytest.raises(DatasetError, match=r"pmf_meta_dataset\.json .*corrupt or truncated"):
        PMF().load()
    assert not PMF().is_converted()


def test_a_missing_field_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pmf_text: bytes
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    wheel = cached_wheel(tmp_path, DEEPPIPE_PACKAGE, DEEPPIPE_WHEEL)
    first, last = first_and_last_rows(pmf_text, "pipelines")
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(PMF_FILE, json.dumps({"pipelines": [first, last]}))
    with pytest.raises(
        DatasetError, match=r"pmf_meta_dataset\.json lacks the field 'original_dataset_id'"
    ):
        PMF().load()


def test_a_training_index_that_would_run_code_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unpickling this would import a class; the reader refuses before anything runs."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    wheel = cached_wheel(tmp_path, OBOE_PACKAGE, OBOE_WHEEL)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(TRAINING_INDEX_FILE, pickle.dumps([2, 3, DatasetError], protocol=3))
    with pytest.raises(DatasetError, match=r"not a plain list of ints \(pickle opcode GLOBAL\)"):
        TensorOboe().load()


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def block_columns(metadata: MetaData, stage: int, choice: int) -> tuple[int, int]:
    domain = metadata.info["algorithm_domain"]
    algorithm = metadata.info["stage_algorithms"][stage][choice]
    return domain[algorithm], domain[algorithm + 1]


def selector_of(metadata: MetaData) -> np.ndarray:
    """DeepPipe's encoder per stage: Tensor-OBOE keeps it in info (its stage choices are the
    finer algorithms); for PMF the two coincide."""
    assert metadata.pool is not None and metadata.pool.stage_choices is not None
    if "list_for_selector" in metadata.info:
        return np.asarray(metadata.info["list_for_selector"])
    return metadata.pool.stage_choices


def assert_blocks_belong_to_their_algorithms(metadata: MetaData) -> None:
    """Outside the pipelines that use an algorithm, its encoding block is one constant
    pattern (zeros, or flags saying "inactive"): the block describes that algorithm only."""
    pool = metadata.pool
    assert pool is not None and pool.stage_choices is not None and pool.descriptions is not None
    selector = selector_of(metadata)
    for stage, algorithms in enumerate(metadata.info["stage_algorithms"]):
        name = pool.stage_names[stage]
        for choice in range(len(algorithms)):
            start, stop = block_columns(metadata, stage, choice)
            others = pool.encodings[selector[:, stage] != choice, start:stop]
            assert len(np.unique(others, axis=0)) <= 1, (name, choice)
            if "encoding_columns" in pool.descriptions[0][name]:
                users = np.flatnonzero(selector[:, stage] == choice)
                assert pool.descriptions[users[0]][name]["encoding_columns"] == [start, stop]


def first_and_last_rows(text: bytes, key: str) -> tuple[list[float], list[float]]:
    """The first and last rows of the matrix stored under ``key``, parsed from the JSON text
    (the rows are flat lists, so the matrix ends at the first ``]]``)."""
    prefix = f'"{key}": ['.encode()
    start = text.index(prefix + b"[") + len(prefix)
    end = text.index(b"]]", start) + 1
    first = json.loads(text[start : text.index(b"]", start) + 1])
    last = json.loads(text[text.rindex(b"[", start, end) : end])
    return first, last


def small_fields(text: bytes) -> dict[str, Any]:
    """Every field after the two big matrices (they come first in both files)."""
    start = text.index(b'"list_for_concatenator"')
    assert text.index(b'"error"') < start
    return json.loads(b"{" + text[start:])


def cached_wheel(cache: Path, package: Package, filename: str) -> Path:
    """Where the framework looks for ``package``'s wheel in the cache rooted at ``cache``."""
    folder = cache / "packages" / f"{package.name}-{package.version}"
    folder.mkdir(parents=True)
    return folder / filename
