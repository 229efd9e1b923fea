"""Every recipe in examples/ stays valid: its names are registered and its parameters
accepted (what `automl validate` checks, without running a search)."""

from __future__ import annotations

from pathlib import Path

import pytest

from automl_core.cli import main

EXAMPLES = sorted((Path(__file__).parents[1] / "examples" / "recipes").glob("*.yaml"))


def test_there_are_examples_to_check():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("recipe", EXAMPLES, ids=lambda path: path.stem)
def test_an_example_recipe_validates(recipe, capsys):
    assert main(["validate", str(recipe)]) == 0, capsys.readouterr().err
