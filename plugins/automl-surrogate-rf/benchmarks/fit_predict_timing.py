"""Times ways of fitting a SMAC-style forest and predicting per-tree values (README table).

Run: ``python benchmarks/fit_predict_timing.py``. Every variant grows the same model: 10
bootstrap CART trees, max_features 5/6, min_samples_split 3, min_samples_leaf 3, max depth 20,
and every predict returns each tree's predictions (needed for the std across trees). Data:
uniform [0, 1] columns with 30% set to INACTIVE (-1), like a conditional space's encoding.
The variants run in turn, round-robin, ``REPEATS`` times, so that other load on the machine
affects them alike; the table gives the best run (the least disturbed) and the median, in
milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

from automl_surrogate_rf import RandomForestSurrogate

TREE_PARAMS = {
    "max_features": 5 / 6,
    "min_samples_split": 3,
    "min_samples_leaf": 3,
    "max_depth": 20,
}
N_TREES = 10
PREDICT_ROWS = 2000
REPEATS = 25


def encoded_data(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, d))
    X[rng.random((n, d)) < 0.3] = -1.0
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y


def sklearn_forest(X: np.ndarray, y: np.ndarray) -> RandomForestRegressor:
    forest = RandomForestRegressor(n_estimators=N_TREES, n_jobs=1, random_state=0, **TREE_PARAMS)
    return forest.fit(X, y)


def via_estimator_predict(trees: list[DecisionTreeRegressor], X: np.ndarray) -> np.ndarray:
    return np.stack([tree.predict(X) for tree in trees])


def via_tree_apply(trees: list[DecisionTreeRegressor], X: np.ndarray) -> np.ndarray:
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    return np.stack([tree.tree_.value[:, 0, 0][tree.tree_.apply(X32)] for tree in trees])


def plain_tree_loop(X: np.ndarray, y: np.ndarray) -> list[DecisionTreeRegressor]:
    """Fitting DecisionTreeRegressors on bootstrap copies, with every default check."""
    rng = np.random.default_rng(0)
    trees = []
    for _ in range(N_TREES):
        rows = rng.integers(0, len(y), len(y))
        tree = DecisionTreeRegressor(random_state=int(rng.integers(2**31)), **TREE_PARAMS)
        trees.append(tree.fit(X[rows], y[rows]))
    return trees


def best_and_median_ms(runs: list[Callable[[], object]]) -> list[tuple[float, float]]:
    """(best, median) milliseconds of each of ``runs``, timed round-robin after a warm-up."""
    times: list[list[float]] = [[] for _ in runs]
    for run in runs:
        run()
    for _ in range(REPEATS):
        for run, taken in zip(runs, times, strict=True):
            started = time.perf_counter()
            run()
            taken.append(time.perf_counter() - started)
    return [(1000 * min(taken), 1000 * float(np.median(taken))) for taken in times]


def variants(
    X: np.ndarray, y: np.ndarray, Xt: np.ndarray
) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    forest = sklearn_forest(X, y)
    trees = plain_tree_loop(X, y)
    surrogate = RandomForestSurrogate().fit(X, y)
    return [
        (
            "RandomForestRegressor, estimators_[i].predict",
            lambda: sklearn_forest(X, y),
            lambda: via_estimator_predict(forest.estimators_, Xt),
        ),
        (
            "RandomForestRegressor, tree_.apply",
            lambda: sklearn_forest(X, y),
            lambda: via_tree_apply(forest.estimators_, Xt),
        ),
        (
            "DecisionTreeRegressor loop, .predict",
            lambda: plain_tree_loop(X, y),
            lambda: via_estimator_predict(trees, Xt),
        ),
        (
            "RandomForestSurrogate (lean loop, tree_.apply)",
            lambda: RandomForestSurrogate().fit(X, y),
            lambda: surrogate.predict(Xt),
        ),
    ]


def main() -> None:
    rng = np.random.default_rng(1)
    predict_header = f"predict {PREDICT_ROWS} rows ms (best / median)"
    print(f"| d | n | variant | fit ms (best / median) | {predict_header} |")
    print("|---|---|---|---|---|")
    for d in (10, 184):
        Xt, _ = encoded_data(PREDICT_ROWS, d, rng)
        for n in (50, 200, 500):
            X, y = encoded_data(n, d, rng)
            named = variants(X, y, Xt)
            fits = best_and_median_ms([fit for _, fit, _ in named])
            predicts = best_and_median_ms([predict for _, _, predict in named])
            for (name, _, _), (fit_best, fit_median), (predict_best, predict_median) in zip(
                named, fits, predicts, strict=True
            ):
                print(
                    f"| {d} | {n} | {name} | {fit_best:.1f} / {fit_median:.1f} "
                    f"| {predict_best:.2f} / {predict_median:.2f} |"
                )


if __name__ == "__main__":
    main()
