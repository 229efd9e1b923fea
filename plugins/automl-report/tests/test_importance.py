"""The importance surrogate: the trees asked directly predict what the forest predicts, and
the hyper-parameter that drives the loss comes first."""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from automl_core.trial import Trial
from automl_engine.history import StoredTrial
from automl_report.importance import _permutation_drops, hyperparameter_importance


def test_the_trees_asked_directly_predict_as_the_forest():
    rng = np.random.default_rng(0)
    X = rng.random((200, 4))
    y = X[:, 0] + 0.1 * rng.random(200)
    forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    # shuffling a column the forest never splits on changes nothing: a drop of 0 each time
    unused = np.column_stack([X, np.zeros(200)])
    forest_with_constant = RandomForestRegressor(n_estimators=10, random_state=0).fit(unused, y)
    drops = _permutation_drops(forest_with_constant, unused, y, np.array([4]), rng)
    assert np.all(drops == 0)
    # the drop of the driving column is R² minus R² with it shuffled, as the forest scores
    shuffled = X.copy()
    shuffled[:, 0] = np.random.default_rng(7).permutation(X[:, 0])
    expected = forest.score(X, y) - forest.score(shuffled, y)
    drop = _permutation_drops(forest, X, y, np.array([0]), np.random.default_rng(7))[0, 0]
    assert abs(drop - expected) < 1e-5  # float32 rows, as the forest's own predict uses


def test_the_driving_hyperparameter_comes_first():
    rng = np.random.default_rng(1)
    trials = []
    for i in range(60):
        config = {
            "model:__choice__": "tree" if i % 2 else "linear",
            "model:tree:depth": int(rng.integers(1, 10)),
            "noise": float(rng.random()),
        }
        loss = 0.5 * (config["model:__choice__"] == "linear") + 0.01 * rng.random()
        trials.append(StoredTrial(Trial(i, config), "ok", loss))
    importance = hyperparameter_importance(trials)
    assert importance is not None and importance.names[0] == "model:__choice__"
    assert importance.trials == 60 and importance.r2 > 0.9
    assert hyperparameter_importance(trials[:5]) is None  # too few to explain
