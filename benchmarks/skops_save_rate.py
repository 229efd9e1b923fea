"""Seconds to save a bagged member with skops, against the size of its fold-model file.

A bagged search stops early enough to save its ensemble's members (their k fold models each)
within the wall time; ``automl_engine.finishing.bagged_member_estimate`` predicts that time from
the member's fold-model file (joblib, as ``automl_engine.fold_models`` writes it): its size, and
the numpy arrays and scikit-learn estimators it holds (``fold_models.Parts``). This script
fits the k fold models of the default pipeline of every classifier of the default space
(``autosklearn-classification``, as the search builds them) on a few datasets, writes them as
the search does, saves them as ``run_folder.save_model`` does, and prints each one's size,
parts and seconds, and the non-negative least-squares fit of the four constants.

    python benchmarks/skops_save_rate.py                     # ~10 minutes on one core
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.model_selection import StratifiedKFold

from automl_core.plugins import load_plugins
from automl_core.space import BuildContext
from automl_engine.fold_models import FoldModels, Parts
from automl_engine.run_folder import import_skops, save_model


def default_pipelines() -> dict[str, object]:
    """The default pipeline of each classifier of the default classification space."""
    plugins = load_plugins()
    space = plugins.create("space", "autosklearn-classification", {})
    pipelines = {}
    for name in [component.name for component in space.stage("classifier").components]:
        only = space.restrict(include={"classifier": [name]})
        pipelines[name] = only.build(only.default(), BuildContext("classification", 0))
    return pipelines


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    synthetic = make_classification(n_samples=3000, n_features=20, random_state=0)
    return {
        "breast_cancer": load_breast_cancer(return_X_y=True),
        "digits": load_digits(return_X_y=True),
        "synthetic_3000": synthetic,
    }


def fold_models(estimator: object, features: np.ndarray, labels: np.ndarray, k: int) -> list:
    splits = StratifiedKFold(k, shuffle=True, random_state=0).split(features, labels)
    return [clone(estimator).fit(features[train], labels[train]) for train, _ in splits]


def measure(models: list, folder: Path) -> tuple[float, Parts, float]:
    """(MB of the fold-model file, its parts, seconds to save the models with skops)."""
    fold_models = FoldModels(folder / "fold_models", key=b"0" * 32)
    fold_models.write(0, models)
    megabytes = fold_models.path(0).stat().st_size / 1e6
    started = time.perf_counter()
    save_model(folder, {"model": models})
    return megabytes, fold_models.parts(0), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    import_skops()
    warnings.simplefilter("ignore")  # convergence and deprecation notes of the estimators
    save_model(Path(tempfile.mkdtemp()), {"model": [1]})  # skops' first save sets itself up
    rows = []
    print("| dataset | classifier | fold file (MB) | arrays | estimators | skops save (s) |")
    print("|---|---|---:|---:|---:|---:|")
    pipelines = default_pipelines()
    with tempfile.TemporaryDirectory() as scratch:
        for data_name, (features, labels) in datasets().items():
            for kind, pipeline in pipelines.items():
                models = fold_models(pipeline, features, labels, args.folds)
                megabytes, parts, seconds = measure(models, Path(scratch))
                rows.append((megabytes, parts.arrays, parts.estimators, seconds))
                print(
                    f"| {data_name} | {kind} | {megabytes:.2f} | {parts.arrays} | "
                    f"{parts.estimators} | {seconds:.2f} |",
                    flush=True,
                )
    table = np.array(rows)
    design = np.column_stack([np.ones(len(table)), table[:, :3]])
    constants, _ = optimize.nnls(design, table[:, 3])
    member, per_mb, per_array, per_estimator = constants
    predicted = design @ constants
    print(
        f"\nnon-negative least squares over {len(rows)} members: seconds = {member:.3f} + "
        f"{per_mb:.4f} * MB + {per_array * 1e3:.3f} ms * arrays + "
        f"{per_estimator * 1e3:.3f} ms * estimators; under-predicted by at most "
        f"{np.max(table[:, 3] - predicted):.2f} s, over by at most "
        f"{np.max(predicted - table[:, 3]):.2f} s"
    )


if __name__ == "__main__":
    main()
