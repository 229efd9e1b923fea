"""Every error the framework raises on purpose derives from :class:`AutoMLError`.

Messages say *what* is wrong, *where* (a recipe path, a plugin, a file) and what was expected,
because the person reading them is usually not the person who wrote the code that raised.
"""

from __future__ import annotations

from typing import Any


class AutoMLError(Exception):
    """Base of the framework's own errors."""


class RecipeError(AutoMLError):
    """A recipe value is wrong. ``path`` is the dotted key, e.g. ``search.params.c_ucb``."""

    def __init__(self, path: str, value: Any, expected: str, hint: str = "") -> None:
        self.path = path
        self.value = value
        self.expected = expected
        self.hint = hint
        message = f"{path or '<recipe>'}: got {value!r}, expected {expected}"
        if hint:
            message += f". {hint}"
        super().__init__(message)


class PluginError(AutoMLError):
    """A plugin broke a rule of the plugin system (duplicate name, bad registration...)."""


class UnknownComponentError(AutoMLError):
    """A name that no loaded plugin registered."""

    def __init__(self, kind: str, name: str, known: list[str], close: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = known
        self.close = close
        message = f"unknown {kind} {name!r}"
        if close:
            message += f"; did you mean {', '.join(repr(c) for c in close)}?"
        message += f" Registered {kind} names: {', '.join(known) if known else '(none)'}"
        super().__init__(message)


class DatasetError(AutoMLError):
    """A dataset cannot be loaded or is unfit for the task (no target, one class, empty...)."""


class InvalidConfigurationError(AutoMLError):
    """A configuration is not a member of the search space it was offered to."""
