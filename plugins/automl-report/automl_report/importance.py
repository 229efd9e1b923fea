"""Hyper-parameter importance: permutation importance on a random-forest surrogate fitted
to the run's (configuration, loss) pairs.

Why this and not fANOVA: fANOVA marginalises a forest over the whole configuration space,
which needs the space's bounds and conditions (its ConfigSpace, rebuilt from the recipe and
its plugins) and costs seconds to minutes on a conditional space of a hundred
hyper-parameters. Permuting one hyper-parameter's column and measuring how much worse the
surrogate then predicts the losses needs only the configurations the history stores, takes
a fraction of a second, and answers the question the page asks: which choices does a model
of this run's losses rely on. Its limits, said on the page: it explains the surrogate, not
the objective (a badly fitted surrogate gives meaningless importances, hence its R² is
shown beside them); correlated or conditional hyper-parameters share credit (permuting a
conditional one mixes in the values of rows where it is inactive); and it is measured on
the trials the surrogate was fitted on, so it describes the region the search visited.

The run's own surrogate is not stored; a fresh forest is fitted here, which is what the
``rf`` surrogate of the run's strategies is. Encoding: a numeric hyper-parameter is its
value (a forest is invariant to monotone transforms, so the space's log scales do not
matter), a categorical one its category's code, an inactive one a value below every active
one, so that a split can separate "inactive" from every value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from automl_engine.history import StoredTrial

#: Fewer finished, successful trials than this: no surrogate worth explaining.
MIN_TRIALS = 10
#: At most this many trials (the most recent) are fitted on, to keep the page fast on long
#: runs (a 5,000-trial history); the importances of the last 1,000 describe where the
#: search ended up.
MAX_TRIALS = 1000
TREES = 50
REPEATS = 3
#: At most this many hyper-parameters are permuted: those the forest splits on most.
MAX_MEASURED = 20
BUDGET = "(budget)"


@dataclass(frozen=True)
class Importance:
    """Per hyper-parameter: the mean drop of the surrogate's R² when its column is
    permuted, and the spread over repeats; the surrogate's R² on the trials it was fitted
    on and out of bag; the number of trials."""

    names: list[str]
    mean: list[float]
    std: list[float]
    r2: float
    oob_r2: float
    trials: int
    #: Hyper-parameters that vary among the trials (those not in ``names`` were not
    #: measured: the forest splits on them little or not at all).
    columns: int = 0


def encode(configs: Sequence[dict], budgets: Sequence[float | None]) -> tuple[np.ndarray, list]:
    """The configurations as a matrix, one column per hyper-parameter (and the budget when
    any trial has one); see the module docstring for the encoding."""
    names = sorted({key for config in configs for key in config})
    columns = []
    for name in names:
        values = [config.get(name) for config in configs]
        columns.append(_column(values))
    if any(b is not None for b in budgets):
        names.append(BUDGET)
        columns.append(np.array([1.0 if b is None else float(b) for b in budgets]))
    return np.column_stack(columns) if columns else np.zeros((len(configs), 0)), names


def _column(values: list) -> np.ndarray:
    active = [v for v in values if v is not None]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in active)
    if numeric and active:
        low = min(float(v) for v in active)
        spread = max(float(v) for v in active) - low
        inactive = low - 1.0 - spread
        return np.array([inactive if v is None else float(v) for v in values])
    codes = {v: i for i, v in enumerate(sorted({str(v) for v in active}))}
    return np.array([-1.0 if v is None else float(codes[str(v)]) for v in values])


def hyperparameter_importance(trials: Sequence[StoredTrial], seed: int = 0) -> Importance | None:
    """The importances for the run's successful trials, None with fewer than
    :data:`MIN_TRIALS` or when every loss is the same."""
    from sklearn.ensemble import RandomForestRegressor

    usable = [t for t in trials if t.ranks][-MAX_TRIALS:]
    losses = np.array([t.loss for t in usable], dtype=float)
    if len(usable) < MIN_TRIALS or np.ptp(losses) == 0:
        return None
    X, names = encode([dict(t.trial.config) for t in usable], [t.trial.budget for t in usable])
    varying = [j for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0]
    if not varying:
        return None
    X, names = X[:, varying], [names[j] for j in varying]
    forest = RandomForestRegressor(
        n_estimators=TREES,
        max_features=0.5,
        min_samples_leaf=2,
        oob_score=True,
        random_state=seed,
        n_jobs=1,
    ).fit(X, losses)
    # a column no tree splits on has an importance of exactly 0; of the others, those the
    # forest splits on most (impurity decrease) are measured, at most MAX_MEASURED
    split_on = np.flatnonzero(forest.feature_importances_ > 0)
    measured = split_on[np.argsort(-forest.feature_importances_[split_on], kind="stable")]
    measured = measured[:MAX_MEASURED]
    drops = _permutation_drops(forest, X, losses, measured, np.random.default_rng(seed))
    order = np.argsort(-drops.mean(axis=1), kind="stable")
    return Importance(
        names=[names[measured[j]] for j in order],
        mean=[float(drops[j].mean()) for j in order],
        std=[float(drops[j].std()) for j in order],
        r2=float(forest.score(X, losses)),
        oob_r2=float(forest.oob_score_) if math.isfinite(forest.oob_score_) else math.nan,
        trials=len(usable),
        columns=len(names),
    )


def _permutation_drops(
    forest, X: np.ndarray, y: np.ndarray, columns: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The drop of R² when each of ``columns`` is shuffled, :data:`REPEATS` times each
    (rows: columns). The trees are asked directly (``tree_.predict`` on float32 rows, what
    the forest's own ``predict`` averages), which skips the input checks that each of the
    hundreds of ``predict`` calls would repeat: 20 times faster on a long run."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    trees = [estimator.tree_ for estimator in forest.estimators_]

    def r2(rows: np.ndarray) -> float:
        predicted = np.mean(
            [tree.predict(rows).reshape(len(rows), -1)[:, 0] for tree in trees], axis=0
        )
        return 1.0 - float(np.sum((y - predicted) ** 2)) / float(np.sum((y - y.mean()) ** 2))

    baseline = r2(X)
    drops = np.zeros((len(columns), REPEATS))
    for i, column in enumerate(columns):
        kept = X[:, column].copy()
        for repeat in range(REPEATS):
            X[:, column] = rng.permutation(kept)
            drops[i, repeat] = baseline - r2(X)
        X[:, column] = kept
    return drops
