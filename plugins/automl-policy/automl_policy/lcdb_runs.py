"""LCDB's learning curves, seed by seed: the raw material of the simulated policy runs.

The policy selector learns which resampling and budget allocation works best for a dataset
of a given size. Auto-sklearn 2.0 learned it from running its whole system with every policy
on 208 datasets; we cannot afford that, so we *simulate* those runs from LCDB 1.0 (Mohr et
al., 2022), which measured 20 scikit-learn classifiers on 248 OpenML datasets at growing
train sizes, for 5 outer (test) splits x 5 inner (validation) splits, with training times.
What a policy would have picked, and what that pick scores on the test split, can then be
looked up instead of computed (see :mod:`automl_policy.simulate`).

Only the needed columns are read (5 s once on the 2-core VM); the compact table is cached under
``<cache>/policy/`` as a NumPy archive and read back in about a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from automl_engine.cache import building, cache_dir, write_atomically
from automl_metadata.archive import read_csv
from automl_metadata.lcdb import CURVES_FILE, DATASETS_FILE, LCDB

#: Inner (validation) splits kept: LCDB has 5 for almost every curve (a few have 25).
INNER_SPLITS = 5
OUTER_SPLITS = 5
COLUMNS = {
    "openmlid": "int64",
    "learner": "category",
    "size_train": "int64",
    "outer_seed": "int8",
    "inner_seed": "int8",
    "traintime": "float32",
    "score_valid": "float32",
    "score_test": "float32",
}
#: Bumped when what is cached changes.
CACHE_VERSION = 1


@dataclass
class Runs:
    """Per dataset: its anchors (train sizes, increasing) and, per learner, anchor, outer and
    inner split, the training time and the validation and test *errors* (1 - accuracy);
    NaN where LCDB has no measurement. Plus each dataset's number of instances and features.
    """

    datasets: list[str]
    learners: list[str]
    anchors: list[np.ndarray]
    #: [dataset][learner, anchor, outer, inner]
    times: list[np.ndarray]
    valid: list[np.ndarray]
    test: list[np.ndarray]
    n_rows: np.ndarray
    n_features: np.ndarray


def cache_file() -> Path:
    return cache_dir() / "policy" / f"lcdb-runs-v{CACHE_VERSION}.npz"


def load_runs() -> Runs:
    """LCDB's runs, from the cache, or read from the lcdb sdist (downloaded if needed)."""
    path = cache_file()
    if not path.is_file():
        with building(path):
            if not path.is_file():  # not built while this process waited
                runs = read_runs()
                write_atomically(path, lambda tmp: save_runs(runs, tmp))
                return runs
    return read_saved(path)


def read_runs() -> Runs:
    assert LCDB.package is not None
    archive = LCDB.package.fetch()
    raw = read_csv(archive, CURVES_FILE, usecols=list(COLUMNS), dtype=COLUMNS)
    raw = raw[(raw["inner_seed"] < INNER_SPLITS) & (raw["outer_seed"] < OUTER_SPLITS)]
    sizes = read_csv(archive, DATASETS_FILE)
    learners = sorted(str(name) for name in raw["learner"].cat.categories)
    learner_index = {name: i for i, name in enumerate(learners)}
    datasets, anchors, times, valid, test, rows, features = [], [], [], [], [], [], []
    described = sizes.set_index("openmlid")
    for openmlid, frame in raw.groupby("openmlid", sort=True):
        if openmlid not in described.index:
            continue  # no size to learn from
        steps = np.sort(frame["size_train"].unique())
        shape = (len(learners), len(steps), OUTER_SPLITS, INNER_SPLITS)
        cells = (
            frame["learner"].astype(str).map(learner_index).to_numpy(),
            np.searchsorted(steps, frame["size_train"].to_numpy()),
            frame["outer_seed"].to_numpy(),
            frame["inner_seed"].to_numpy(),
        )
        for target, column, flip in (
            (times, "traintime", False),
            (valid, "score_valid", True),
            (test, "score_test", True),
        ):
            array = np.full(shape, np.nan, dtype=np.float32)
            values = frame[column].to_numpy(dtype=np.float32)
            array[cells] = 1.0 - values if flip else values
            target.append(array)
        datasets.append(str(openmlid))
        anchors.append(steps)
        rows.append(float(described.loc[openmlid, "NumberOfInstances"]))
        features.append(float(described.loc[openmlid, "NumberOfFeatures"]) - 1)  # less the target
    return Runs(datasets, learners, anchors, times, valid, test, np.array(rows), np.array(features))


def save_runs(runs: Runs, path: Path) -> None:
    arrays: dict[str, np.ndarray] = {
        "datasets": np.array(runs.datasets),
        "learners": np.array(runs.learners),
        "n_rows": runs.n_rows,
        "n_features": runs.n_features,
    }
    for i in range(len(runs.datasets)):
        arrays[f"anchors_{i}"] = runs.anchors[i]
        arrays[f"times_{i}"] = runs.times[i]
        arrays[f"valid_{i}"] = runs.valid[i]
        arrays[f"test_{i}"] = runs.test[i]
    np.savez_compressed(path, **arrays)


def read_saved(path: Path) -> Runs:
    with np.load(path) as data:
        count = len(data["datasets"])
        return Runs(
            datasets=[str(d) for d in data["datasets"]],
            learners=[str(n) for n in data["learners"]],
            anchors=[data[f"anchors_{i}"] for i in range(count)],
            times=[data[f"times_{i}"] for i in range(count)],
            valid=[data[f"valid_{i}"] for i in range(count)],
            test=[data[f"test_{i}"] for i in range(count)],
            n_rows=data["n_rows"],
            n_features=data["n_features"],
        )
