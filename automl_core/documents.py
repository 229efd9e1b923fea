"""Reading the YAML documents that recipes and suites are written in.

A module of its own because both the plugin registry (a plugin may register a named recipe or
suite as a file) and the engine's recipe parser read them. In the kernel, which does not
depend on PyYAML: ``yaml`` is imported when a document is read, and only plugins that need
the engine (which installs PyYAML) register or read YAML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automl_core.errors import RecipeError

#: A recipe is a page of settings: a larger file is a mistake (or an attack), refused before
#: it is parsed...
MAX_BYTES = 1_000_000
#: ...and so is one whose aliases expand into more values than this (a "billion laughs").
MAX_NODES = 100_000


def expanded_size(data: Any, limit: int = MAX_NODES) -> int:
    """How many values ``data`` holds with every shared (aliased) part counted each time it
    appears, computed without expanding anything; stops counting past ``limit``."""
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        key = id(value)
        if key in sizes:
            return sizes[key]
        sizes[key] = limit + 1  # a value that contains itself is too large
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            children = value
        else:
            children = []
        total = 1
        for child in children:
            total = min(total + size(child), limit + 1)
        sizes[key] = total
        return total

    return size(data)


def read_recipe_file(path: str | Path, what: str = "recipe") -> dict[str, Any]:
    """The YAML mapping in ``path`` (safe loading only); ``what`` the file holds (a recipe, a
    suite) is named in the errors."""
    path = Path(path)
    if not path.is_file():
        found = "a folder" if path.is_dir() else "File not found"
        raise RecipeError(str(path), str(path), f"an existing {what} file", found)
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise RecipeError(
            str(path), f"{size:,} bytes", f"a {what} file of at most {MAX_BYTES:,} bytes"
        )
    data = read_yaml_text(path.read_text(), str(path), what)
    if not isinstance(data, dict):
        keys = "name, task, space, search..." if what == "recipe" else "tasks, defaults..."
        raise RecipeError(str(path), data, f"a mapping of {what} keys ({keys})")
    return data


def read_yaml_text(text: str, where: str, what: str = "recipe") -> Any:
    """The value of the YAML ``text`` read from ``where`` (a file, a ``--set`` argument),
    with a recipe file's bounds: at most :data:`MAX_BYTES`, safe tags only, at most
    :data:`MAX_NODES` values once aliases are expanded. Every failure is a
    :class:`RecipeError` naming ``where``, never YAML's own traceback."""
    if len(text) > MAX_BYTES:
        raise RecipeError(where, f"{len(text):,} characters", f"at most {MAX_BYTES:,}")
    try:
        import yaml
    except ImportError:
        raise RecipeError(
            where, "a YAML document", "PyYAML installed (pip install automl-engine)"
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise RecipeError(
            where, _shown(text), "valid YAML (safe tags only)", f"YAML error{at}: {problem}"
        ) from None
    nodes = expanded_size(data)
    if nodes > MAX_NODES:
        raise RecipeError(
            where,
            f"{nodes:,}+ values once its aliases are expanded",
            f"a {what} of at most {MAX_NODES:,} values",
            "YAML aliases (*name) repeat what they name; nested ones multiply",
        )
    return data


def _shown(text: str, limit: int = 80) -> str:
    """``text`` cut for an error message."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
