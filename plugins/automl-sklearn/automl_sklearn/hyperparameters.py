"""Helpers to write auto-sklearn's hyper-parameter spaces and to read their values.

auto-sklearn encodes booleans as the strings ``"True"``/``"False"`` and "no value" as the
string ``"None"``. The spaces keep those encodings, because that is what lets auto-sklearn's
stored configurations validate here; the builders translate them with :func:`as_bool` and
:func:`optional`.
"""

from __future__ import annotations

from typing import Any

from ConfigSpace import ConfigurationSpace

#: auto-sklearn's spelling of "no value" in its spaces (e.g. ``max_depth = "None"``).
NONE = "None"


def make_space(*items: Any) -> ConfigurationSpace:
    """A ConfigurationSpace holding ``items``: hyper-parameters, conditions, forbidden clauses."""
    space = ConfigurationSpace()
    if items:
        space.add(*items)
    return space


def as_bool(value: Any) -> bool:
    """``"True"``/``"False"`` (auto-sklearn's encoding) or a real bool, as a bool."""
    if isinstance(value, str):
        if value not in ("True", "False"):
            raise ValueError(f"expected 'True' or 'False', got {value!r}")
        return value == "True"
    return bool(value)


def optional(value: Any) -> Any:
    """``None`` for auto-sklearn's ``"None"`` (or a missing value), else the value itself."""
    return None if value is None or value == NONE else value
