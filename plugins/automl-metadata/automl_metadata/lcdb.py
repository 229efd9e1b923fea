"""LCDB 1.0: learning curves of 20 scikit-learn classifiers on 248 OpenML datasets.

The lcdb 0.1.0 sdist (Mohr et al., 2022) carries the database as CSV files, one per metric.
This source reads ``lcdb/database-accuracy.csv`` (1,953,371 rows, one per dataset, learner,
train size and seed pair, with columns ``openmlid, learner, size_train, size_test,
outer_seed, inner_seed, traintime, score_train, score_valid, score_test``) and
``lcdb/datasets.csv`` (the OpenML name and 64 OpenML meta-features of 219 datasets).

Train sizes ("anchors") follow LCDB's grid ``round(2 ** (4 + k / 2))`` -- 16, 23, 32, 45, 64,
91, ... -- and, where the grid does not end exactly there, a last anchor at the full training
set of the dataset (lcdb.py's ``compute_full_curve``). Those last anchors differ from dataset
to dataset, so the union of all anchors (:attr:`MetaData.budgets`) holds many sizes that only
one dataset has; a curve is NaN where a learner was not measured.

Only the columns needed are read, with compact dtypes, and averaged with one ``groupby``: the
conversion takes a few seconds and well under 1 GB of memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_core.errors import DatasetError
from automl_metadata.archive import read_csv
from automl_metadata.store import MetaDataSource, Package
from automl_spaces.pool_space import PoolSpace

CURVES_FILE = "lcdb/database-accuracy.csv"
DATASETS_FILE = "lcdb/datasets.csv"

#: The columns of the curves file that are read, and how.
CURVE_DTYPES = {
    "openmlid": "int64",
    "learner": "category",
    "size_train": "int64",
    "traintime": "float64",
    "score_valid": "float64",
}
KEY = ["openmlid", "learner", "size_train"]
#: Columns of datasets.csv that are not meta-features.
NAME_COLUMNS = ("openmlid", "Name")


class LCDB(MetaDataSource):
    """LCDB's accuracy curves as a multi-fidelity pool meta-dataset (the budget: train size).

    * ``configs[j] = {"candidate": j}``, one per learner (sorted by name), described as
      ``{"learner": <name as LCDB writes it>}`` in the pool ``"lcdb"``.
    * ``budgets`` -- every train size measured on any dataset, increasing.
    * ``curves[i, j, k]`` -- the validation error rate, 1 - accuracy on the validation split
      averaged over all outer and inner seeds, of learner ``j`` on dataset ``i`` trained on
      ``budgets[k]`` instances; NaN where it was not measured.
    * ``performance[i, j]`` -- the curve at dataset ``i``'s *largest anchor*, the largest
      train size any learner reached on it (``info["largest_anchor"]``). A learner without a
      value there (it failed or timed out before) gets NaN, not its value at a smaller size:
      a table lookup must compare learners trained on the same data.
    * ``runtimes[i, j]`` -- the mean training time in seconds at that same anchor.
    * ``metafeatures`` -- the numeric columns of datasets.csv for the datasets that have
      curves (197 of its 219 rows; 51 datasets with curves have none there).
    """

    package = Package("lcdb", "0.1.0", source=True, size_mb=68)
    #: 2: ``info["fidelity"] = "train_size"`` (the core no longer assumes it)
    conversion = 2
    licence = "MIT"
    provenance = (
        "Mohr, Viering, Loog & van Rijn (2022), LCDB 1.0: An extensive learning curves "
        "database for classification tasks, ECML PKDD; the CSV files of the lcdb 0.1.0 sdist"
    )

    def build(self) -> MetaData:
        archive = self.package.fetch()
        means = mean_curves(read_curves(archive))
        datasets = [str(d) for d in means.index.unique("openmlid")]
        learners = sorted(means.index.unique("learner"))
        budgets = np.sort(means.index.unique("size_train").to_numpy()).astype(float)
        cells = cell_indices(means.index, learners, budgets)
        shape = (len(datasets), len(learners), len(budgets))
        curves = scatter(1.0 - means["score_valid"].to_numpy(), cells, shape)
        times = scatter(means["traintime"].to_numpy(), cells, shape)
        largest = largest_anchor_positions(means.index, budgets)
        rows = np.arange(len(datasets))
        metafeatures, names = read_datasets_table(archive, datasets)
        pool = learner_pool(learners)
        return MetaData(
            datasets=datasets,
            configs=pool.candidates(),
            performance=curves[rows, :, largest],
            runtimes=times[rows, :, largest],
            metafeatures=metafeatures,
            space=pool.name,
            pool=pool,
            budgets=budgets,
            curves=curves,
            info=self._info(datasets, budgets[largest], names),
        )

    def _info(
        self, datasets: list[str], largest: np.ndarray, names: dict[str, str]
    ) -> dict[str, Any]:
        return {
            "source": f"{self.package}, {CURVES_FILE} and {DATASETS_FILE}",
            "metric": "validation error rate (1 - accuracy), mean over all seeds",
            "budget": "number of training instances",
            "fidelity": "train_size",
            "runtime_unit": "seconds (mean traintime at the largest anchor)",
            "largest_anchor": {d: int(a) for d, a in zip(datasets, largest, strict=True)},
            "names": names,
        }


# ---------------------------------------------------------------------------------------------
# The curves
# ---------------------------------------------------------------------------------------------


def read_curves(archive: Path) -> pd.DataFrame:
    """The needed columns of database-accuracy.csv (about 50 MB in memory), checked."""
    raw = read_csv(archive, CURVES_FILE, usecols=list(CURVE_DTYPES), dtype=CURVE_DTYPES)
    check_curves(raw, f"{archive.name}:{CURVES_FILE}")
    return raw


def check_curves(raw: pd.DataFrame, where: str) -> None:
    """Scores are accuracies in [0, 1] (NaN allowed: it is left out of the mean); train sizes
    positive; learners and times present."""
    if raw.empty:
        raise DatasetError(f"{where} holds no rows")
    scores = raw["score_valid"]
    outside = scores[(scores < 0) | (scores > 1)]
    if len(outside):
        raise DatasetError(
            f"{where}: score_valid {outside.iloc[0]!r} (row {outside.index[0] + 2}) is not an "
            "accuracy in [0, 1]"
        )
    if (raw["size_train"] <= 0).any():
        raise DatasetError(f"{where}: size_train must be a positive number of instances")
    if raw["learner"].isna().any():
        raise DatasetError(f"{where}: some rows name no learner")


def mean_curves(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean validation accuracy and training time per (dataset, learner, train size) over all
    seeds, sorted by that key; cells whose scores are all NaN are dropped."""
    means = raw.groupby(KEY, observed=True, sort=True)[["score_valid", "traintime"]].mean()
    return means[means["score_valid"].notna()]


def cell_indices(
    index: pd.MultiIndex, learners: list[str], budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dataset row, learner column, budget position) of every entry of ``index``."""
    dataset_codes = pd.Index(index.unique("openmlid")).get_indexer(
        index.get_level_values("openmlid")
    )
    learner_codes = pd.Index(learners).get_indexer(index.get_level_values("learner"))
    budget_codes = np.searchsorted(budgets, index.get_level_values("size_train").to_numpy())
    return dataset_codes, learner_codes, budget_codes


def scatter(
    values: np.ndarray,
    cells: tuple[np.ndarray, np.ndarray, np.ndarray],
    shape: tuple[int, int, int],
) -> np.ndarray:
    """A datasets x learners x budgets array holding ``values`` at ``cells``, NaN elsewhere
    (NaN is what MetaData means by "not measured")."""
    array = np.full(shape, np.nan)
    array[cells] = values
    return array


def largest_anchor_positions(index: pd.MultiIndex, budgets: np.ndarray) -> np.ndarray:
    """Per dataset (in index order), the budget position of the largest train size any
    learner reached on it."""
    sizes = pd.Series(index.get_level_values("size_train"), index=index.get_level_values(0))
    largest = sizes.groupby(level=0, sort=True).max()
    return np.searchsorted(budgets, largest.to_numpy())


def learner_pool(learners: list[str]) -> PoolSpace:
    """The 20 learners as a one-stage pool, one-hot encoded."""
    return PoolSpace(
        name="lcdb",
        encodings=np.eye(len(learners)),
        stage_names=("learner",),
        stage_choices=np.arange(len(learners))[:, None],
        descriptions=[{"learner": name} for name in learners],
    )


# ---------------------------------------------------------------------------------------------
# The dataset table
# ---------------------------------------------------------------------------------------------


def read_datasets_table(archive: Path, datasets: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The numeric meta-features (index: OpenML id as str) and the names of the datasets in
    ``datasets`` that datasets.csv describes; rows for datasets without curves are left out,
    as MetaData's meta-features describe its own datasets."""
    where = f"{archive.name}:{DATASETS_FILE}"
    table = read_csv(archive, DATASETS_FILE)
    missing = [c for c in NAME_COLUMNS if c not in table.columns]
    if missing:
        raise DatasetError(f"{where} lacks the column(s) {', '.join(missing)}")
    if not pd.api.types.is_integer_dtype(table["openmlid"]):
        raise DatasetError(f"{where}: openmlid holds values that are not dataset ids")
    if table["openmlid"].duplicated().any():
        raise DatasetError(f"{where}: some openmlid occurs twice")
    table.index = table["openmlid"].astype(str)
    table = table.loc[[d for d in datasets if d in table.index]]
    features = table.drop(columns=list(NAME_COLUMNS)).select_dtypes("number").astype(float)
    features.index.name = None
    return features, {str(i): str(n) for i, n in table["Name"].items()}
