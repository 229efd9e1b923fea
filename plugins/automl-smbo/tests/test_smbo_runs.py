"""``automl run`` with SMBO and the real surrogates: swapping the surrogate is the only change
in the recipe."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

RECIPE = {
    "name": "smbo",
    "task": {"dataset": "sklearn:breast_cancer", "metric": "balanced_accuracy"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree", "k_nearest_neighbors", "sgd"]}},
    },
    "search": {"strategy": "smbo", "params": {"initial_design": 4}, "surrogate": "rf"},
    "budget": {"trials": 10},
    "seed": 2,
}


def run_with(surrogate: str, tmp_path, capsys) -> list:
    recipe = {**RECIPE, "search": {**RECIPE["search"], "surrogate": surrogate}}
    path = tmp_path / f"{surrogate}.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = tmp_path / surrogate
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    assert "best validation balanced_accuracy: " in capsys.readouterr().out
    with RunHistory(out / HISTORY_FILE) as history:
        return history.trials()


def test_the_surrogate_is_the_only_change(tmp_path, capsys, monkeypatch):
    # other plugins of this repository, which automl-smbo does not depend on
    for plugin in ("automl_sklearn", "automl_surrogate_rf", "automl_surrogate_gp"):
        pytest.importorskip(plugin)
    fitted = fits_per_surrogate(monkeypatch)
    for surrogate, other in (("rf", "gp"), ("gp", "rf")):
        for fits in fitted.values():
            fits.clear()
        trials = run_with(surrogate, tmp_path, capsys)
        assert fitted[surrogate] and not fitted[other]  # the one named, and only it
        assert max(fitted[surrogate]) >= 4  # fitted on the results, not on nothing
        assert len(trials) == 10 and all(t.status == "ok" for t in trials)
        origins = [t.trial.origin for t in trials]
        assert origins[:4] == ["default", "initial", "initial", "initial"]
        assert any(o.startswith("acquisition") for o in origins[4:])
        assert len({yaml.safe_dump(t.trial.config) for t in trials}) == 10


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
