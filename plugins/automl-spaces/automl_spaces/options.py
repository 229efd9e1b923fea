"""What a component's parameters accept, declared once beside them (attrs validators).

A component that is an attrs class (``@attrs.define(slots=False, eq=False)``) declares each
recipe parameter as a field whose validator says what it accepts; attrs checks the values
when the registry builds the component, and a value outside its range is a ``ValueError``
naming the parameter, which the registry reports as the recipe's to fix. The same words
("an integer >= 2", "a probability") appear in every component's errors, instead of one
hand-written family of checks per plugin (issue 45).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _refusing(accepts: Callable[[Any], bool], expected: str) -> Validator:
    """A validator that raises ``ValueError`` saying what was ``expected`` when ``accepts``
    is false for the value."""

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not accepts(value):
            raise ValueError(f"{attribute.name} must be {expected}, got {value!r}")

    return check


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def plain_integer(value: Any) -> Any:
    """A converter: a NumPy integer as the Python ``int`` it holds (what a grid built with
    NumPy passes); any other value unchanged, for the validator to judge."""
    return int(value) if _is_integer(value) else value


def integer(at_least: int, at_most: int | None = None) -> Validator:
    """An integer (not a boolean) of at least ``at_least`` (and at most ``at_most``)."""
    expected = (
        f"an integer >= {at_least}"
        if at_most is None
        else (f"an integer in [{at_least}, {at_most}]")
    )
    return _refusing(
        lambda v: _is_integer(v) and v >= at_least and (at_most is None or v <= at_most),
        expected,
    )


def number(
    at_least: float | None = None,
    above: float | None = None,
    at_most: float | None = None,
    below: float | None = None,
) -> Validator:
    """A number (not a boolean) within the bounds given."""
    bounds = []
    if at_least is not None:
        bounds.append(f">= {at_least:g}")
    if above is not None:
        bounds.append(f"> {above:g}")
    if at_most is not None:
        bounds.append(f"<= {at_most:g}")
    if below is not None:
        bounds.append(f"< {below:g}")

    def accepts(v: Any) -> bool:
        return (
            _is_number(v)
            and (at_least is None or v >= at_least)
            and (above is None or v > above)
            and (at_most is None or v <= at_most)
            and (below is None or v < below)
        )

    return _refusing(accepts, "a number" + (" " + " and ".join(bounds) if bounds else ""))


def probability() -> Validator:
    """A number in [0, 1]."""
    return _refusing(lambda v: _is_number(v) and 0 <= v <= 1, "a probability in [0, 1]")


def boolean() -> Validator:
    """``true`` or ``false`` (not 0 or 1; a NumPy boolean is one)."""
    return _refusing(lambda v: isinstance(v, (bool, np.bool_)), "true or false")


def one_of(*values: Any) -> Validator:
    """One of ``values``."""
    return _refusing(lambda v: v in values, "one of " + ", ".join(map(repr, values)))


def optional(validator: Validator) -> Validator:
    """None (the component's own default), or what ``validator`` accepts."""
    return attrs.validators.optional(validator)
