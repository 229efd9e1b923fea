"""A third-party plugin, end to end: wheels built, installed into a fresh virtual environment
beside the core, found through its entry point, and used from a recipe."""

from __future__ import annotations

import json
import venv
from pathlib import Path

import pytest
from packages import ROOT, hillclimb_recipe, sh, wheels

from automl_core.history import RunHistory

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("roundtrip")
    built = wheels(
        base / "wheels",
        ROOT,
        ROOT / "plugins" / "automl-sklearn",
        ROOT / "contrib" / "plugin-template",
    )
    env = base / "venv"
    venv.create(env, with_pip=True)
    sh(env / "bin" / "python", "-m", "pip", "install", "-q", *built)
    return env


def test_the_installed_plugin_is_listed_with_its_distribution(fresh_env):
    listing = json.loads(sh(fresh_env / "bin" / "automl", "plugins", "--json"))
    by_name = {(c["kind"], c["name"]): c for c in listing["components"]}
    hillclimb = by_name[("search_strategy", "hillclimb")]
    assert (hillclimb["distribution"], hillclimb["version"]) == ("automl-hillclimb", "0.1.0")
    assert hillclimb["parameters"] == {"restart_probability": 0.2}
    assert by_name[("space", "autosklearn-classification")]["distribution"] == "automl-sklearn"
    assert listing["broken"] == [] and listing["conflicts"] == []


def test_the_installed_plugin_runs_from_a_recipe(fresh_env, tmp_path):
    search = "{strategy: hillclimb, params: {restart_probability: 0.5}}"
    recipe = hillclimb_recipe(tmp_path, 6, search)
    out = sh(fresh_env / "bin" / "automl", "run", recipe, "--out", tmp_path / "run", "--quiet")
    assert "trials: 6" in out
    shown = sh(fresh_env / "bin" / "automl", "show", tmp_path / "run")
    assert "6 trials on sklearn:iris" in shown
    with RunHistory(tmp_path / "run" / "history.sqlite") as history:
        origins = [t.trial.origin for t in history.trials()]
    # "neighbour" is only ever proposed by the plugin's strategy: proof that it ran.
    assert set(origins) <= {"random", "neighbour"} and "neighbour" in origins
