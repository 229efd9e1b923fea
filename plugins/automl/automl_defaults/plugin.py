"""The default recipes: every ``*.yaml`` file of ``automl_defaults/recipes/``, by file name.

Registered through ``register_recipes`` like a third-party plugin's, so that ``automl plugins
--kind recipe`` lists them with the others and a plugin cannot silently replace one (two
registrations of a name are a conflict). A recipe's description is its file's first comment
line; adding a named default recipe is adding a file.
"""

from __future__ import annotations

from pathlib import Path

from automl_core.hookspecs import RegisterDocument, hookimpl

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: The packaged recipe files (package data of this distribution).
RECIPES_DIR = Path(__file__).resolve().parent / "recipes"


def description(path: Path) -> str:
    """The text of the file's first line when it is a ``#`` comment, else empty."""
    with path.open(encoding="utf-8") as lines:
        first = lines.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""


@hookimpl
def register_recipes(register: RegisterDocument) -> None:
    """Register ``default-classification``, ``default-regression`` and any other packaged
    recipe file."""
    for path in sorted(RECIPES_DIR.glob("*.yaml")):
        register(path.stem, path, description(path))
