"""The shared latent space on a user's dataset with nothing trained first (issue 46): the
ranker, its labels and the sources' PTEMs of keel-autosklearn ship with the plugins; other
settings, which would label for minutes to hours, are refused under a wall time."""

from __future__ import annotations

import pytest
import yaml

from automl_engine.cache import CACHE_DIR_ENV
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

pytest.importorskip("automl_surrogate_latent")
pytest.importorskip("automl_metafeatures")  # hand-crafted meta-features, the ranker's
pytest.importorskip("automl_catboost")  # the shipped PTEMs' space has CatBoost

SHIPPED = {"metadata": "keel-autosklearn", "max_sources": 6, "label_runs": 1, "label_trials": 20}
SOURCES = {
    "keel:cleveland-0_vs_4",
    "keel:haberman",
    "keel:mammographic",
    "keel:monk-2",
    "keel:wine",
    "keel:winequality-red-4",
}


def recipe_file(folder, ptem_params: dict, budget: dict) -> str:
    path = folder / "recipe.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "ptem-shipped",
                "task": {"dataset": "keel:pima", "metric": "balanced_accuracy", "max_rows": 300},
                "space": "autosklearn-classification",
                "search": {
                    "name": "smbo",
                    "params": {"initial_design": 2, "random_fraction": 0.0},
                    "surrogate": {"name": "latent", "params": {"steps": 10}},
                },
                "metafeatures": "handcrafted",
                "warmstart": {"name": "ptem", "params": ptem_params},
                "executor": {"name": "processes", "params": {"workers": 1}},
                "budget": budget,
                "seed": 3,  # the shipped PTEMs serve every run seed
            }
        )
    )
    return str(path)


@pytest.fixture
def cache(tmp_path, monkeypatch, session_cache):
    """An empty cache but for the registry packages (the KEEL datasets)."""
    folder = tmp_path / "keel-cache"
    folder.mkdir()
    (folder / "packages").symlink_to(session_cache / "packages")
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def test_latent_with_ptem_runs_on_keel_pima_on_the_shipped_files(tmp_path, cache):
    recipe = recipe_file(tmp_path, SHIPPED, {"trials": 3, "trial_time": 10})
    assert main(["run", recipe, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        origins = [t.trial.origin for t in history.trials()]
        record = history.get_meta("warmstart")
    assert record["info"]["source"] in SOURCES
    assert origins[2].startswith("acquisition")  # proposed through the source's PTEM
    trained = sorted(str(p.relative_to(cache)) for p in cache.glob("latent/**/*.npz"))
    trained += sorted(str(p.relative_to(cache)) for p in cache.glob("ptem/rankers/**/ranker.*"))
    assert trained == []  # no PTEM pre-trained, no ranker fitted


def test_settings_that_would_label_first_are_refused_under_a_wall_time(tmp_path, cache, capsys):
    timed = {"wall_time": 60}
    assert main(["validate", recipe_file(tmp_path, SHIPPED, timed)]) == 0
    capsys.readouterr()
    other = {**SHIPPED, "max_sources": 7}
    assert main(["validate", recipe_file(tmp_path, other, timed)]) == 2
    error = capsys.readouterr().err
    assert "expected a warm start ready before the first trial" in error
    # a seventh source: the shipped labels of the six others' 30 pairs are reused
    assert "ptem would first measure 12 of its ranker's 42 labels" in error
    assert main(["validate", recipe_file(tmp_path, other, {"trials": 5})]) == 0
