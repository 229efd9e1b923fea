"""Metabu fitted on the project's own meta-data (keel-autosklearn, issue 46) at the start of a
run on a KEEL dataset, that dataset left out of the fit: knd then warm-starts from its
nearest KEEL datasets in Metabu's space. The fit (seconds) is part of the run."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

pytest.importorskip("automl_metafeatures")  # the basic (hand-crafted) provider
pytest.importorskip("automl_warmstart_knd")
pytest.importorskip("automl_sklearn")  # the autosklearn-classification space
pytest.importorskip("automl_metadata")  # keel-autosklearn

METABU = {"metadata": "keel-autosklearn", "exclude": ["keel:pima"], "dimension": 4}
RECIPE = {
    "name": "metabu-keel-knd-on-pima",
    "task": {"dataset": "keel:pima", "metric": "balanced_accuracy", "max_rows": 300},
    "space": "autosklearn-classification",
    "search": {"strategy": "random"},
    "metafeatures": {"provider": "metabu", "params": METABU},
    "warmstart": {
        "starter": "knd",
        "configs": 2,
        "params": {"metadata": "metabu", "metadata_params": METABU},
    },
    "executor": {"name": "processes", "params": {"workers": 1}},
    "budget": {"trials": 3, "trial_time": 5},
    "seed": 0,
}


def test_metabu_on_keel_autosklearn_starts_a_keel_run(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    out = tmp_path / "run"
    assert main(["run", str(recipe), "--out", str(out), "--quiet"]) == 0
    with RunHistory(out / HISTORY_FILE) as history:
        origins = [t.trial.origin for t in history.trials()]
        record = history.get_meta("warmstart")
        features = history.get_meta("metafeatures")
    assert sorted(features) == ["metabu_0", "metabu_1", "metabu_2", "metabu_3"]
    assert origins == ["warmstart", "warmstart", "random"]
    info = record["info"]
    assert set(info["features"]) == set(features)
    neighbours = [d["dataset"] for d in info["datasets"]]
    assert neighbours and all(n.startswith("keel:") for n in neighbours)
    assert "keel:pima" not in neighbours
