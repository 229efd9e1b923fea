"""docs/plugins.md's complete plugin, built from the page itself: its files are written out,
its module registers the surrogate, and a model-based search runs with it."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from automl_core.plugins import load_plugins
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"
FILE_BLOCK = re.compile(r"<!-- file: (?P<path>\S+) -->\n```\w+\n(?P<text>.*?)```", re.S)


def guide_files() -> dict[str, str]:
    return {m["path"]: m["text"] for m in FILE_BLOCK.finditer(GUIDE.read_text())}


def test_the_guide_holds_a_whole_plugin_in_at_most_60_lines():
    files = guide_files()
    assert set(files) == {"pyproject.toml", "automl_knn/__init__.py"}
    lines = sum(len(text.splitlines()) for text in files.values())
    assert lines <= 60
    assert f"Two files, {lines} lines, are a whole plugin" in GUIDE.read_text()  # as stated
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads(files["pyproject.toml"])
    assert project["project"]["entry-points"]["automl_core"] == {"knn": "automl_knn"}


@pytest.fixture
def knn_plugin(tmp_path, monkeypatch):
    for path, text in guide_files().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("automl_knn")
    sys.modules.pop("automl_knn", None)


def test_the_guides_surrogate_registers_and_predicts(knn_plugin):
    import numpy as np

    plugins = load_plugins(extra=[knn_plugin], entry_points=False)
    registration = plugins.get("surrogate", "knn")
    assert registration.description == "k-nearest-neighbour surrogate"
    assert registration.parameters() == {"k": 5}
    X = np.random.default_rng(0).random((10, 3))
    mean, std = plugins.create("surrogate", "knn", {"k": 3}).fit(X, X.sum(axis=1)).predict(X)
    assert mean.shape == std.shape == (10,) and np.all(std > 0)


def test_a_search_runs_with_the_guides_surrogate(knn_plugin, tmp_path):
    smbo = pytest.importorskip("automl_smbo.plugin")
    from toy_plugin import ToyPlugin, toy_recipe

    plugins = load_plugins(extra=[ToyPlugin(), smbo, knn_plugin], entry_points=False)
    recipe = toy_recipe(
        search={
            "strategy": "smbo",
            "params": {"initial_design": 4},
            "surrogate": {"name": "knn", "params": {"k": 2}},
        },
        budget={"trials": 8},
    )
    summary = run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 8 and summary.best_loss is not None
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        origins = [stored.trial.origin for stored in history.trials()]
    # past the design, the surrogate chose (or a random interleave, smbo's default 20 %)
    assert any(origin.startswith("acquisition") for origin in origins), origins
