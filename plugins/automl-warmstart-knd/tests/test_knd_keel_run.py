"""The issue's check: hand-crafted meta-features and the knd warm start on a real KEEL
dataset, through the command line; the first trials are the warm start's, and `automl show`
says so."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

pytest.importorskip("automl_metafeatures")  # the hand-crafted provider: another plugin here
pytest.importorskip("automl_sklearn")  # the autosklearn-classification space

RECIPE = {
    "name": "knd-on-pima",
    "task": {"dataset": "keel:pima", "metric": "balanced_accuracy", "test_size": 0.25},
    "space": "autosklearn-classification",
    "search": {"strategy": "random"},
    "metafeatures": "handcrafted",
    "warmstart": {"starter": "knd", "configs": 3},
    # The warm start's configurations are pima's neighbours' best, two of them MLPs that fit
    # for 15-45 s: what is checked is where the trials came from, so each trial is stopped
    # after 3 s (a stopped trial keeps its origin).
    "executor": {"name": "processes", "params": {"workers": 1}},
    "budget": {"trials": 4, "trial_time": 3},
    "seed": 0,
}


def test_knd_with_handcrafted_features_starts_a_keel_run(tmp_path, capsys):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    out = tmp_path / "run"
    assert main(["run", str(recipe), "--out", str(out), "--quiet"]) == 0
    with RunHistory(out / HISTORY_FILE) as history:
        trials = history.trials()
        record = history.get_meta("warmstart")
        features = history.get_meta("metafeatures")
    assert len(features) == 37 and features["NumberOfFeatures"] == 8
    assert [t.trial.origin for t in trials] == ["warmstart"] * 3 + ["random"]
    assert record["starter"] == "knd" and record["configs"] == 3
    info = record["info"]
    # pima is OpenML's diabetes: left out, so its own best configuration is not suggested
    assert info["excluded"] == ["diabetes"]
    assert "diabetes" not in [d["dataset"] for d in info["datasets"]]
    assert len(info["features"]) == 37
    distances = [d["distance"] for d in info["datasets"]]
    assert distances == sorted(distances)
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "warm start: 3 configurations from knd" in shown and "left out: diabetes" in shown
    assert sum(" warmstart " in line for line in shown.splitlines()) == 3
