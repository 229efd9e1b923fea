"""The expected values of the tests, read straight from scikit-learn's saved OpenML API
responses (independently of the importer under test), and the cache layout."""

from __future__ import annotations

import gzip
import importlib.resources
import json
from pathlib import Path
from typing import Any

#: scikit-learn's saved OpenML responses: id_<n>/api-v1-jd-<n>.json.gz and friends.
SKLEARN_OPENML = Path(str(importlib.resources.files("sklearn.datasets.tests.data.openml")))

#: Imported once per session: kr-vs-kp, iris, zoo (classification), cpu (regression),
#: wine_reviews (no default target, has a parquet_url), emotions (six targets), Australian
#: (sparse ARFF) and adult (a 10-row copy of a 48842-row dataset).
SESSION_DATASETS = (3, 61, 62, 561, 42074, 40589, 292, 1590)


def api(dataset_id: int, kind: str) -> dict[str, Any]:
    """The saved JSON response ``kind`` (jd, jdf or jdq) for ``dataset_id``."""
    path = SKLEARN_OPENML / f"id_{dataset_id}" / f"api-v1-{kind}-{dataset_id}.json.gz"
    with gzip.open(path, "rt", encoding="utf8") as handle:
        return json.load(handle)


def quality(dataset_id: int, name: str) -> float:
    """One of the dataset's OpenML qualities, as the saved response states it."""
    for item in api(dataset_id, "jdq")["data_qualities"]["quality"]:
        if item["name"] == name:
            return float(item["value"])
    raise KeyError(name)


def features(dataset_id: int) -> list[dict[str, Any]]:
    return api(dataset_id, "jdf")["data_features"]["feature"]


def feature_columns(dataset_id: int) -> list[str]:
    """The attributes that are neither target, ignored nor row id, in file order."""
    flags = ("is_target", "is_ignore", "is_row_identifier")
    return [f["name"] for f in features(dataset_id) if all(f[k] == "false" for k in flags)]


def nominal_columns(dataset_id: int) -> list[str]:
    kept = set(feature_columns(dataset_id))
    return [
        f["name"] for f in features(dataset_id) if f["data_type"] == "nominal" and f["name"] in kept
    ]


def dataset_dir(root: Path, dataset_id: int) -> Path:
    return root / "openml" / "org" / "openml" / "www" / "datasets" / str(dataset_id)


def task_dir(root: Path, task_id: int) -> Path:
    return root / "openml" / "org" / "openml" / "www" / "tasks" / str(task_id)
