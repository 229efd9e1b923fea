"""The issue's check: Metabu fitted on one meta-dataset (auto-sklearn's: its 37 meta-features
and best configurations) describes a KEEL dataset in a real run, and knd warm-starts the run
from the meta-data's datasets nearest in Metabu's space."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

pytest.importorskip("automl_metafeatures")  # the basic (hand-crafted) provider
pytest.importorskip("automl_warmstart_knd")
pytest.importorskip("automl_sklearn")  # the autosklearn-classification space

METABU = {"metadata": "autosklearn", "exclude": ["diabetes"], "dimension": 4}
RECIPE = {
    "name": "metabu-knd-on-pima",
    # 300 of pima's 768 rows: the warm start's pipelines (an MLP among them) are not what this
    # test checks, and on all rows one of them took most of the test's time
    "task": {
        "dataset": "keel:pima",
        "metric": "balanced_accuracy",
        "test_size": 0.25,
        "max_rows": 300,
    },
    "space": "autosklearn-classification",
    "search": {"strategy": "random"},
    "metafeatures": {"provider": "metabu", "params": METABU},
    "warmstart": {
        "starter": "knd",
        "configs": 2,
        "params": {"metadata": "metabu", "metadata_params": METABU},
    },
    "executor": "sequential",
    "budget": {"trials": 3},
    "seed": 0,
}


def test_metabu_metafeatures_and_knd_start_a_keel_run(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    out = tmp_path / "run"
    assert main(["run", str(recipe), "--out", str(out), "--quiet"]) == 0
    with RunHistory(out / HISTORY_FILE) as history:
        trials = history.trials()
        record = history.get_meta("warmstart")
        features = history.get_meta("metafeatures")
    assert sorted(features) == ["metabu_0", "metabu_1", "metabu_2", "metabu_3"]
    assert [t.trial.origin for t in trials] == ["warmstart"] * 2 + ["random"]
    info = record["info"]
    assert set(info["features"]) == set(features)  # knd compared Metabu's meta-features
    assert info["metadata"].startswith("metabu")
    assert "diabetes" not in [d["dataset"] for d in info["datasets"]]
    distances = [d["distance"] for d in info["datasets"]]
    assert distances == sorted(distances)
