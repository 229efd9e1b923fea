"""Oboe's meta-data, checked against the files of the real oboe 0.2.0 wheel.

The expected values are read from the wheel here with zipfile and pandas, independently of
the source's own reading code; the error-path tests corrupt a copy of the real files under
``tmp_path``.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automl_core.errors import DatasetError
from automl_core.space import INACTIVE
from automl_metadata.oboe import ALGORITHM_CLASSES, Oboe
from automl_metadata.store import metadata_dir

FOLDER = "oboe/defaults/Oboe/"

#: Models per algorithm in error_matrix.csv's headers, counted by hand from the file.
ALGORITHM_COUNTS = {
    "kSVM": 36,
    "Logit": 32,
    "ExtraTrees": 30,
    "RF": 30,
    "GBT": 28,
    "KNN": 16,
    "DT": 14,
    "MLP": 12,
    "AB": 10,
    "lSVM": 9,
    "GNB": 1,
    "Perceptron": 1,
}


@pytest.fixture(scope="module")
def wheel() -> Path:
    return Oboe.package.fetch()


@pytest.fixture(scope="module")
def oboe(wheel: Path):
    return Oboe().load()


@pytest.fixture(scope="module")
def members(wheel: Path) -> dict[str, bytes]:
    """The bytes of every file of oboe/defaults/Oboe/ in the wheel."""
    with zipfile.ZipFile(wheel) as zipped:
        return {
            name: zipped.read(name)
            for name in zipped.namelist()
            if name.startswith(FOLDER) and not name.endswith("/")
        }


def raw_matrix(members: dict[str, bytes], name: str) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(members[FOLDER + name]), index_col=0)


def test_datasets_are_the_unpadded_openml_ids_of_the_matrix(oboe, members) -> None:
    raw = raw_matrix(members, "error_matrix.csv")
    first_column = pd.read_csv(io.BytesIO(members[FOLDER + "error_matrix.csv"]), usecols=[0])
    assert first_column.iloc[:3, 0].astype(str).str.zfill(5).tolist() == ["00003", "00008", "00011"]
    assert oboe.shape == (418, 219)
    assert oboe.datasets == [str(int(i)) for i in raw.index]
    assert len(set(oboe.datasets)) == 418
    assert oboe.configs == [{"candidate": j} for j in range(219)]


def test_error_matrix_is_dense_and_equal_to_the_file(oboe, members) -> None:
    raw = raw_matrix(members, "error_matrix.csv")
    assert not np.isnan(oboe.performance).any()
    np.testing.assert_array_equal(oboe.performance, raw.to_numpy())
    assert oboe.performance.min() >= 0.0 and oboe.performance.max() < 1.0


def test_runtimes_are_positive_seconds_equal_to_the_file(oboe, members) -> None:
    raw = raw_matrix(members, "runtime_matrix.csv")
    assert oboe.runtimes.shape == (418, 219)
    assert (oboe.runtimes > 0).all()
    np.testing.assert_array_equal(oboe.runtimes, raw.to_numpy())


def test_every_header_is_parsed_into_algorithm_and_hyperparameters(oboe, members) -> None:
    headers = raw_matrix(members, "error_matrix.csv").columns
    descriptions = oboe.pool.descriptions
    assert descriptions == [ast.literal_eval(h) for h in headers]
    assert Counter(d["algorithm"] for d in descriptions) == ALGORITHM_COUNTS
    assert descriptions[0] == {
        "algorithm": "AB",
        "hyperparameters": {"n_estimators": 50, "learning_rate": 1},
    }


def test_models_are_the_full_grid_of_classification_json(oboe, members) -> None:
    space = json.loads(members[FOLDER + "classification.json"])
    assert oboe.info["algorithms"] == space["algorithms"]
    for algorithm, grid in space["hyperparameters"].items():
        expected = {
            tuple(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())
        }
        found = {
            tuple((name, d["hyperparameters"][name]) for name in grid)
            for d in oboe.pool.descriptions
            if d["algorithm"] == algorithm
        }
        assert found == expected, algorithm


def test_stage_choices_index_the_algorithm_list(oboe) -> None:
    algorithms = oboe.info["algorithms"]
    assert oboe.pool.name == oboe.space == "oboe"
    assert oboe.pool.stage_names == ("algorithm",)
    chosen = [algorithms[i] for i in oboe.pool.stage_choices[:, 0]]
    assert chosen == [d["algorithm"] for d in oboe.pool.descriptions]


def test_encodings_one_hot_then_scaled_hyperparameters(oboe) -> None:
    encodings = oboe.pool.encodings
    columns = oboe.info["encoding_columns"]
    assert encodings.shape == (219, len(columns)) == (219, 38)
    assert not np.isnan(encodings).any()
    one_hot = encodings[:, :12]
    np.testing.assert_array_equal(one_hot.argmax(axis=1), oboe.pool.stage_choices[:, 0])
    assert (one_hot.sum(axis=1) == 1).all()
    rest = encodings[:, 12:]
    assert ((rest == INACTIVE) | ((rest >= 0) & (rest <= 1))).all()
    assert len({tuple(row) for row in encodings}) == 219, "distinct models, distinct rows"
    for column, name in enumerate(columns[12:], start=12):
        algorithm = name.split(":")[0]
        own = [d["algorithm"] == algorithm for d in oboe.pool.descriptions]
        assert (encodings[~np.array(own), column] == INACTIVE).all(), name


def column_of(oboe, prefix: str) -> np.ndarray:
    (index,) = [i for i, c in enumerate(oboe.info["encoding_columns"]) if c.startswith(prefix)]
    return oboe.pool.encodings[:, index]


def test_spread_out_values_are_on_a_log_scale(oboe) -> None:
    # Logit's C runs from 0.25 to 4: C = 1 is half-way on a log scale.
    c = column_of(oboe, "Logit:C ")
    rows = [i for i, d in enumerate(oboe.pool.descriptions) if d["algorithm"] == "Logit"]
    at_one = [i for i in rows if oboe.pool.descriptions[i]["hyperparameters"]["C"] == 1]
    assert c[at_one] == pytest.approx(0.5)
    assert c[rows].min() == 0.0 and c[rows].max() == 1.0


def test_split_counts_and_fractions_get_separate_columns(oboe) -> None:
    counts = column_of(oboe, "DT:min_samples_split ")
    fractions = column_of(oboe, "DT:min_samples_split_fraction ")
    for row, description in enumerate(oboe.pool.descriptions):
        if description["algorithm"] != "DT":
            continue
        value = description["hyperparameters"]["min_samples_split"]
        is_fraction = isinstance(value, float)
        assert (counts[row] == INACTIVE) == is_fraction
        assert (fractions[row] == INACTIVE) != is_fraction


def test_metafeatures_are_the_recorded_sizes(oboe, members) -> None:
    sizes = pd.read_csv(io.BytesIO(members[FOLDER + "dataset_sizes.csv"]), index_col=0)
    features = oboe.metafeatures
    assert list(features.columns) == ["NumberOfInstances", "NumberOfFeatures"]
    assert list(features.index) == oboe.datasets
    assert features.loc["61"].tolist() == [150, 5]  # iris: 150 rows, 4 features + the class
    np.testing.assert_array_equal(features.to_numpy(), sizes.loc[[int(d) for d in oboe.datasets]])


def test_abbreviation_table_matches_oboes_own_imports(oboe, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zipped:
        util = zipped.read("oboe/util.py").decode()
    imported = {
        alias: f"{module}.{name}"
        for module, name, alias in re.findall(
            r"^from (sklearn\.\S+) import (\w+) as (\w+)", util, re.M
        )
    }
    imported.update(
        {
            name: f"{module}.{name}"
            for module, name in re.findall(r"^from (sklearn\.\S+) import (\w+)$", util, re.M)
        }
    )
    assert {a: imported[a] for a in ALGORITHM_CLASSES} == ALGORITHM_CLASSES
    assert oboe.info["algorithm_classes"] == ALGORITHM_CLASSES
    assert oboe.info["licence"] == "BSD-3-Clause"


def test_reuploaded_datasets_have_identical_rows(oboe) -> None:
    """The docstring's warning for whoever splits datasets: 7 groups of identical rows."""
    rows = pd.DataFrame(oboe.performance, index=oboe.datasets)
    twins = rows[rows.duplicated(keep=False)]
    groups = sorted(sorted(g) for g in twins.groupby(list(twins.columns)).groups.values())
    assert len(groups) == 7 and sum(map(len, groups)) == 17
    assert ["40474", "40475", "40476", "40477", "40478"] in groups


# ---------------------------------------------------------------------------------------------
# Error paths: a copy of the real files, broken, in a cache of the test's own
# ---------------------------------------------------------------------------------------------


def fake_wheel(cache: Path, members: dict[str, bytes]) -> None:
    folder = cache / "packages" / "oboe-0.2.0"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "oboe-0.2.0-py3-none-any.whl", "w") as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)


def test_header_that_is_not_a_dict_literal_names_the_file(members, tmp_path, monkeypatch) -> None:
    broken = dict(members)
    matrix = members[FOLDER + "error_matrix.csv"].decode()
    first_header = (
        "\"{'algorithm': 'AB', 'hyperparameters': {'n_estimators': 50, 'learning_rate': 1}}\""
    )
    assert matrix.startswith("," + first_header)
    broken[FOLDER + "error_matrix.csv"] = matrix.replace(
        first_header, "AB(n_estimators=50)", 1
    ).encode()
    fake_wheel(tmp_path, broken)
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"error_matrix\.csv: the header of column 1"):
        Oboe().load()
    assert not (metadata_dir() / "oboe-0.2.0").exists()


def test_missing_runtime_matrix_names_the_file(members, tmp_path, monkeypatch) -> None:
    fake_wheel(tmp_path, {k: v for k, v in members.items() if not k.endswith("runtime_matrix.csv")})
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"has no file oboe/defaults/Oboe/runtime_matrix\.csv"):
        Oboe().load()
