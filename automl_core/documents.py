"""Reading the YAML documents that recipes and suites are written in.

A module of its own because both the plugin registry (a plugin may register a named recipe or
suite as a file) and the recipe parser read them, and the parser builds on the registry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from automl_core.errors import RecipeError


def read_recipe_file(path: str | Path, what: str = "recipe") -> dict[str, Any]:
    """The YAML mapping in ``path`` (safe loading only); ``what`` the file holds (a recipe, a
    suite) is named in the errors."""
    path = Path(path)
    if not path.is_file():
        raise RecipeError(str(path), str(path), f"an existing {what} file", "File not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RecipeError(
            "", str(path), "valid YAML", f"YAML error{where}: {getattr(error, 'problem', error)}"
        ) from error
    if not isinstance(data, dict):
        keys = "name, task, space, search..." if what == "recipe" else "tasks, defaults..."
        raise RecipeError(str(path), data, f"a mapping of {what} keys ({keys})")
    return data
