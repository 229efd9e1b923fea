"""LCDB's learning curves, checked against the CSV files of the real lcdb 0.1.0 sdist.

Expected values are computed here from rows read straight out of the archive with tarfile
and pandas, independently of the source's reading code. The error-path tests build small
archives from the real file's first lines under ``tmp_path``.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automl_core.errors import DatasetError
from automl_metadata.lcdb import LCDB
from automl_metadata.store import metadata_dir

CURVES = "lcdb/database-accuracy.csv"
DATASETS = "lcdb/datasets.csv"

#: kr-vs-kp (largest anchor 2588), letter (16200) and 1085 (whose largest anchor, 128, is
#: itself on the grid).
SPOT_DATASETS = (3, 6, 1085)

LEARNERS = [
    "SVC_linear",
    "SVC_poly",
    "SVC_rbf",
    "SVC_sigmoid",
    "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
    "sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis",
    "sklearn.ensemble.ExtraTreesClassifier",
    "sklearn.ensemble.GradientBoostingClassifier",
    "sklearn.ensemble.RandomForestClassifier",
    "sklearn.linear_model.LogisticRegression",
    "sklearn.linear_model.PassiveAggressiveClassifier",
    "sklearn.linear_model.Perceptron",
    "sklearn.linear_model.RidgeClassifier",
    "sklearn.linear_model.SGDClassifier",
    "sklearn.naive_bayes.BernoulliNB",
    "sklearn.naive_bayes.MultinomialNB",
    "sklearn.neighbors.KNeighborsClassifier",
    "sklearn.neural_network.MLPClassifier",
    "sklearn.tree.DecisionTreeClassifier",
    "sklearn.tree.ExtraTreeClassifier",
]

#: LCDB's anchor grid, round(2 ** (4 + k / 2)): 16, 23, 32, 45, 64, 91, 128...
GRID = np.array([round(2 ** (4 + k / 2)) for k in range(40)])


def member_of(archive: tarfile.TarFile, member: str) -> io.BufferedReader:
    """Streams through the archive up to ``member`` (no index of the whole archive)."""
    for info in archive:
        if info.name.endswith("/" + member):
            handle = archive.extractfile(info)
            assert handle is not None
            return handle
    raise AssertionError(f"{member} is not in the sdist")


@pytest.fixture(scope="module")
def sdist() -> Path:
    return LCDB.package.fetch()


@pytest.fixture(scope="module")
def lcdb(sdist: Path):
    return LCDB().load()


@pytest.fixture(scope="module")
def raw_rows(sdist: Path) -> pd.DataFrame:
    """Every row of the curves file for the spot-checked datasets."""
    with tarfile.open(sdist, "r:gz") as archive:
        chunks = pd.read_csv(member_of(archive, CURVES), chunksize=500_000)
        return pd.concat(chunk[chunk["openmlid"].isin(SPOT_DATASETS)] for chunk in chunks)


@pytest.fixture(scope="module")
def raw_datasets(sdist: Path) -> pd.DataFrame:
    with tarfile.open(sdist, "r:gz") as archive:
        return pd.read_csv(member_of(archive, DATASETS))


def cell(lcdb, dataset: int, learner: str, size: int) -> tuple[int, int, int]:
    k = int(np.flatnonzero(lcdb.budgets == size)[0])
    return lcdb.row(str(dataset)), LEARNERS.index(learner), k


def test_datasets_learners_and_pool(lcdb) -> None:
    assert lcdb.shape == (248, 20)
    assert lcdb.datasets == sorted(lcdb.datasets, key=int)
    assert len(set(lcdb.datasets)) == 248
    assert [d["learner"] for d in lcdb.pool.descriptions] == LEARNERS
    assert lcdb.configs == [{"candidate": j} for j in range(20)]
    assert lcdb.space == lcdb.pool.name == "lcdb"
    assert lcdb.pool.stage_names == ("learner",)
    np.testing.assert_array_equal(lcdb.pool.encodings, np.eye(20))
    np.testing.assert_array_equal(lcdb.pool.stage_choices[:, 0], np.arange(20))


def test_budgets_are_the_union_of_grid_and_last_anchors(lcdb) -> None:
    budgets = lcdb.budgets
    assert budgets[:7].tolist() == [16, 23, 32, 40, 45, 48, 64]
    assert len(budgets) == 201 and (np.diff(budgets) > 0).all()
    largest = set(lcdb.info["largest_anchor"].values())
    off_grid = [b for b in budgets if b not in set(GRID)]
    assert len(off_grid) == 166 and set(off_grid) <= largest
    assert sum(a not in set(GRID) for a in lcdb.info["largest_anchor"].values()) == 247


def test_each_curve_uses_the_grid_up_to_its_power_of_two_then_the_full_size(lcdb) -> None:
    starting_late = []
    for i, dataset in enumerate(lcdb.datasets):
        measured = lcdb.budgets[np.isfinite(lcdb.curves[i]).any(axis=0)].astype(int).tolist()
        last = lcdb.info["largest_anchor"][dataset]
        allowed = {*GRID[2 ** np.floor(np.log2(last)) >= GRID].tolist(), last}
        assert set(measured) <= allowed and measured[-1] == last, dataset
        if measured != sorted(allowed):
            starting_late.append((dataset, measured[0]))
    assert starting_late == [("1056", 23), ("1069", 91), ("1597", 128)]


def test_largest_anchor_is_lcdbs_full_training_size(lcdb) -> None:
    # lcdb.py: max_train_size = int(max(int(n * 0.9) * 0.9, n - 10000)) for n instances.
    for dataset, row in lcdb.metafeatures.iterrows():
        n = int(row["NumberOfInstances"])
        assert lcdb.info["largest_anchor"][dataset] == int(max(int(n * 0.9) * 0.9, n - 10000))
    assert lcdb.info["largest_anchor"]["3"] == 2588


@pytest.mark.parametrize(
    ("dataset", "learner", "size"),
    [
        (3, "SVC_linear", 16),
        (3, "sklearn.ensemble.RandomForestClassifier", 2588),
        (6, "sklearn.neighbors.KNeighborsClassifier", 1024),
        (6, "sklearn.linear_model.LogisticRegression", 16200),
        (1085, "sklearn.tree.DecisionTreeClassifier", 128),
    ],
)
def test_spot_checked_curve_points_match_the_raw_rows(
    lcdb, raw_rows, dataset, learner, size
) -> None:
    rows = raw_rows[
        (raw_rows["openmlid"] == dataset)
        & (raw_rows["learner"] == learner)
        & (raw_rows["size_train"] == size)
    ]
    assert len(rows) >= 25, "5 outer x 5 inner seeds at least"
    assert lcdb.curves[cell(lcdb, dataset, learner, size)] == pytest.approx(
        1 - rows["score_valid"].mean(), abs=1e-12
    )
    if size == lcdb.info["largest_anchor"][str(dataset)]:
        i, j, _ = cell(lcdb, dataset, learner, size)
        assert lcdb.performance[i, j] == pytest.approx(1 - rows["score_valid"].mean(), abs=1e-12)
        assert lcdb.runtimes[i, j] == pytest.approx(rows["traintime"].mean(), rel=1e-12)


def test_all_cells_of_the_spot_datasets_match_the_raw_rows(lcdb, raw_rows) -> None:
    expected = 1 - raw_rows.groupby(["openmlid", "learner", "size_train"])["score_valid"].mean()
    for dataset in SPOT_DATASETS:
        i = lcdb.row(str(dataset))
        measured = np.argwhere(np.isfinite(lcdb.curves[i]))
        assert len(measured) == len(expected.loc[dataset])
        for j, k in measured:
            key = (dataset, LEARNERS[j], int(lcdb.budgets[k]))
            assert lcdb.curves[i, j, k] == pytest.approx(expected.loc[key], abs=1e-12)


def test_learner_never_run_on_a_dataset_is_nan(lcdb, raw_rows) -> None:
    lda = "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"
    assert raw_rows[(raw_rows["openmlid"] == 3) & (raw_rows["learner"] == lda)].empty
    i, j = lcdb.row("3"), LEARNERS.index(lda)
    assert np.isnan(lcdb.curves[i, j]).all()
    assert np.isnan(lcdb.performance[i, j]) and np.isnan(lcdb.runtimes[i, j])


def test_performance_is_the_curve_at_the_largest_anchor(lcdb) -> None:
    largest = [lcdb.info["largest_anchor"][d] for d in lcdb.datasets]
    positions = np.searchsorted(lcdb.budgets, largest)
    np.testing.assert_array_equal(
        lcdb.performance, lcdb.curves[np.arange(248), :, positions], strict=True
    )
    finite = np.isfinite(lcdb.curves)
    assert finite.sum() == 72224
    assert ((lcdb.curves[finite] >= 0) & (lcdb.curves[finite] <= 1)).all()
    # 593 (dataset, learner) pairs were never run; 100 more stop before the largest anchor.
    assert np.isnan(lcdb.performance).sum() == 693
    assert (~finite.any(axis=2)).sum() == 593
    assert (np.isnan(lcdb.runtimes) == np.isnan(lcdb.performance)).all()
    assert (lcdb.runtimes[np.isfinite(lcdb.runtimes)] > 0).all()


def test_metafeatures_and_names_of_the_datasets_with_curves(lcdb, raw_datasets) -> None:
    assert raw_datasets.shape == (219, 66)
    with_curves = raw_datasets[raw_datasets["openmlid"].astype(str).isin(lcdb.datasets)]
    assert len(with_curves) == 197, "22 rows of datasets.csv describe datasets without curves"
    features = lcdb.metafeatures
    assert features.shape == (197, 64)
    assert set(features.index) <= set(lcdb.datasets)
    assert list(features.columns) == list(raw_datasets.columns[2:])
    expected = with_curves.set_index(with_curves["openmlid"].astype(str)).loc[features.index]
    np.testing.assert_array_equal(features.to_numpy(), expected.iloc[:, 2:].to_numpy(float))
    assert features.loc["3", "NumberOfInstances"] == 3196
    names = lcdb.info["names"]
    assert len(names) == 197 and names["3"] == "kr-vs-kp" and names["6"] == "letter"
    assert lcdb.info["licence"] == "MIT"


# ---------------------------------------------------------------------------------------------
# Error paths: small archives in a cache of the test's own
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def first_lines(sdist: Path) -> list[str]:
    """The header and the first 100 rows of the real curves file."""
    with tarfile.open(sdist, "r:gz") as archive:
        handle = member_of(archive, CURVES)
        return [handle.readline().decode() for _ in range(101)]


def fake_sdist(cache: Path, files: dict[str, str]) -> None:
    folder = cache / "packages" / "lcdb-0.1.0"
    folder.mkdir(parents=True)
    with tarfile.open(folder / "lcdb-0.1.0.tar.gz", "w:gz") as archive:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"lcdb-0.1.0/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_curves_without_a_score_column_name_the_file(first_lines, tmp_path, monkeypatch) -> None:
    header = first_lines[0].replace("score_valid", "score_validation")
    fake_sdist(tmp_path, {CURVES: "".join([header, *first_lines[1:]])})
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"database-accuracy\.csv cannot be read"):
        LCDB().load()
    assert not (metadata_dir() / "lcdb-0.1.0").exists()


def test_missing_dataset_table_names_the_file(first_lines, tmp_path, monkeypatch) -> None:
    fake_sdist(tmp_path, {CURVES: "".join(first_lines)})
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"has no file lcdb/datasets\.csv"):
        LCDB().load()
    assert not (metadata_dir() / "lcdb-0.1.0").exists()
