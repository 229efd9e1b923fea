"""Seconds to save a bagged member with skops, against the size of its fold-model file.

A bagged search stops early enough to save its ensemble's members (their k fold models each)
within the wall time; ``automl_core.finishing.bagged_member_estimate`` predicts that time from
the size of the member's fold-model file (joblib, as ``automl_core.fold_models`` writes it) and
the number of numpy arrays in it: ``BAGGED_MEMBER_S + megabytes * BAGGED_SECONDS_PER_MB +
arrays * BAGGED_SECONDS_PER_ARRAY``. This script fits the k fold models of one estimator of
each kind the default spaces use, on a few datasets, writes them as the search does, saves
them as ``run_folder.save_model`` does, and prints each one's size, arrays and seconds, and
the non-negative least-squares fit of the three constants.

    python benchmarks/skops_save_rate.py                     # ~5 minutes on one core
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC

from automl_core.fold_models import FoldModels
from automl_core.run_folder import import_skops, save_model


def estimators() -> dict[str, object]:
    """One estimator of each kind the default classification space holds, at settings of the
    sizes a search meets (HistGradientBoosting at its 512 iterations, forests of 100 trees)."""
    kinds: dict[str, object] = {
        "random_forest": RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1),
        "extra_trees": ExtraTreesClassifier(n_estimators=100, random_state=0, n_jobs=1),
        "gradient_boosting": HistGradientBoostingClassifier(
            max_iter=512, early_stopping=False, random_state=0
        ),
        "svc": SVC(probability=True, random_state=0),
        "knn": KNeighborsClassifier(),
        "mlp": MLPClassifier(max_iter=200, random_state=0),
        "logistic": LogisticRegression(max_iter=500),
    }
    try:
        from lightgbm import LGBMClassifier

        kinds["lightgbm"] = LGBMClassifier(n_estimators=200, n_jobs=1, verbose=-1)
    except ImportError:
        pass
    try:
        from xgboost import XGBClassifier

        kinds["xgboost"] = XGBClassifier(n_estimators=200, n_jobs=1)
    except ImportError:
        pass
    try:
        from catboost import CatBoostClassifier

        kinds["catboost"] = CatBoostClassifier(
            iterations=300, thread_count=1, verbose=False, allow_writing_files=False
        )
    except ImportError:
        pass
    return kinds


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    synthetic = make_classification(n_samples=3000, n_features=20, random_state=0)
    return {
        "breast_cancer": load_breast_cancer(return_X_y=True),
        "digits": load_digits(return_X_y=True),
        "synthetic_3000": synthetic,
    }


def fold_models(estimator: object, features: np.ndarray, labels: np.ndarray, k: int) -> list:
    from sklearn.base import clone

    splits = StratifiedKFold(k, shuffle=True, random_state=0).split(features, labels)
    return [clone(estimator).fit(features[train], labels[train]) for train, _ in splits]


def measure(models: list, folder: Path) -> tuple[float, int, float]:
    """(MB of the fold-model file, its arrays, seconds to save the models with skops)."""
    fold_models = FoldModels(folder / "fold_models", key=b"0" * 32)
    fold_models.write(0, models)
    megabytes = fold_models.path(0).stat().st_size / 1e6
    started = time.perf_counter()
    save_model(folder, {"model": models})
    return megabytes, fold_models.arrays(0), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    import_skops()
    warnings.simplefilter("ignore")  # convergence and deprecation notes of the estimators
    save_model(Path(tempfile.mkdtemp()), {"model": [1]})  # skops' first save sets itself up
    rows = []
    print("| dataset | estimator | fold file (MB) | arrays | skops save (s) |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for data_name, (features, labels) in datasets().items():
            for kind, estimator in estimators().items():
                models = fold_models(estimator, features, labels, args.folds)
                megabytes, arrays, seconds = measure(models, Path(scratch))
                rows.append((megabytes, arrays, seconds))
                print(f"| {data_name} | {kind} | {megabytes:.2f} | {arrays} | {seconds:.2f} |")
    table = np.array(rows)
    design = np.column_stack([np.ones(len(table)), table[:, 0], table[:, 1]])
    (member, per_mb, per_array), _ = optimize.nnls(design, table[:, 2])
    predicted = design @ [member, per_mb, per_array]
    print(
        f"\nnon-negative least squares over {len(rows)} members: seconds = {member:.3f} + "
        f"{per_mb:.4f} * MB + {per_array * 1e6:.1f}e-6 * arrays; under-predicted by at most "
        f"{np.max(table[:, 2] - predicted):.2f} s, over by at most "
        f"{np.max(predicted - table[:, 2]):.2f} s"
    )


if __name__ == "__main__":
    main()
