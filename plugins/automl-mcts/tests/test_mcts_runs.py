"""``automl run`` with ``strategy: mcts`` on real data: the surrogate is a one-word swap."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

RECIPE = {
    "name": "mosaic",
    "task": {"dataset": "sklearn:breast_cancer", "metric": "balanced_accuracy", "test_size": 0.25},
    "space": {
        "name": "autosklearn-classification",
        "params": {
            "include": {
                "classifier": ["decision_tree", "k_nearest_neighbors", "sgd", "lda"],
                "feature_preprocessor": [
                    "no_preprocessing",
                    "pca",
                    "select_percentile_classification",
                ],
            }
        },
    },
    "search": {"strategy": "mcts", "params": {"n_r": 200, "n_s": 20}, "surrogate": "rf"},
    "budget": {"trials": 14},
    "seed": 2,
}


@pytest.mark.parametrize("surrogate", ["rf", "gp"])
def test_mcts_runs_with_either_surrogate(surrogate, tmp_path, capsys, monkeypatch):
    for plugin in ("automl_sklearn", "automl_surrogate_rf", "automl_surrogate_gp"):
        pytest.importorskip(plugin)  # other plugins of this repository
    fitted = fits_per_surrogate(monkeypatch)
    recipe = {**RECIPE, "search": {**RECIPE["search"], "surrogate": surrogate}}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    assert "test balanced_accuracy" in capsys.readouterr().out
    with RunHistory(out / HISTORY_FILE) as history:
        trials = history.trials()
    assert len(trials) == 14 and all(t.status == "ok" for t in trials)
    origins = [t.trial.origin for t in trials]
    # a quarter of 14 trials is the initial design (defaults first), then the tree
    assert origins[:3] == ["default"] * 3
    assert all(o.startswith("mcts-depth") for o in origins[3:])
    other = {"rf": "gp", "gp": "rf"}[surrogate]
    assert fitted[surrogate] and not fitted[other]  # the one named, and only it
    assert len({yaml.safe_dump(t.trial.config) for t in trials}) == 14


def fits_per_surrogate(monkeypatch) -> dict[str, list[int]]:
    """Record how many rows each surrogate class is fitted on, by recipe name: which
    surrogate a run used shows in what was fitted, not in the recipe it was given."""
    from automl_surrogate_gp.surrogate import GPSurrogate
    from automl_surrogate_rf.forest import RandomForestSurrogate

    fitted: dict[str, list[int]] = {"rf": [], "gp": []}
    for name, cls in (("rf", RandomForestSurrogate), ("gp", GPSurrogate)):

        def recording(self, X, y, _fit=cls.fit, _name=name):
            fitted[_name].append(len(X))
            return _fit(self, X, y)

        monkeypatch.setattr(cls, "fit", recording)
    return fitted
