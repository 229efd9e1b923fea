"""What a check is run on (:class:`Component`) and how checks are collected per kind."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from automl_core.errors import AutoMLError

if TYPE_CHECKING:
    from automl_core.plugins import Plugins, Registration


class NotApplicable(Exception):
    """Raised by a check that does not apply to a component (a surrogate without a ``seed``
    parameter, a strategy that does not search pools); :func:`parametrize_with_checks` turns
    it into a skip that says why."""


@dataclass(frozen=True)
class Component:
    """A component to check: its kind, a name for reports, and how to build a fresh one.

    ``factory(**params)`` builds it; without a factory, the component registered under
    ``name`` is built through the installed plugins (what ``automl plugins`` lists).
    ``surrogate`` is the surrogate a strategy under check is given (the kit's own
    deterministic one when None).
    """

    kind: str
    name: str
    factory: Callable[..., Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    surrogate: Component | None = None
    #: What only the author knows and a check needs: a dataset source's example reference.
    example: Any = None

    def build(self, **overrides: Any) -> Any:
        """A fresh instance, with ``params`` and ``overrides``."""
        params = {**self.params, **overrides}
        if self.factory is not None:
            return self.factory(**params)
        return installed_plugins().create(self.kind, self.name, params)

    def factory_object(self) -> Callable[..., Any]:
        """The factory itself (a dataset source's is its loader, called per reference)."""
        if self.factory is not None:
            return self.factory
        return _registration(self).obj

    def accepts(self, parameter: str) -> bool:
        """Whether the factory takes ``parameter`` (e.g. ``seed``)."""
        if self.factory is None:
            return _registration(self).accepts(parameter)
        try:
            parameters = inspect.signature(self.factory).parameters
        except (TypeError, ValueError):
            return False
        return parameter in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())

    @property
    def id(self) -> str:
        """What reports call it: ``kind:name``."""
        return f"{self.kind}:{self.name}"


@functools.cache
def installed_plugins() -> Plugins:
    """The installed plugins, loaded once for all checks."""
    from automl_core.plugins import load_plugins

    return load_plugins()


def _registration(component: Component) -> Registration:
    try:
        return installed_plugins().get(component.kind, component.name)
    except AutoMLError as error:
        raise AssertionError(f"{component.id} is not registered: {error}") from None


#: Check functions per component kind, in the order they run (filled by the check modules
#: as :mod:`automl_engine.testing` imports them).
CHECKS: dict[str, list[Callable[[Component], None]]] = {}


#: Each kind's title in docs/plugins.md, in the order the check modules declared them.
KIND_TITLES: dict[str, str] = {}


def describe_kind(kind: str, title: str) -> None:
    """Name ``kind`` for the plugin guide (:mod:`automl_engine.testing.docs`): each check
    module describes the kinds it checks, so the core names no plugin's kind."""
    KIND_TITLES[kind] = title


def check(kind: str) -> Callable[[Callable[[Component], None]], Callable[[Component], None]]:
    """Declare a function a check of ``kind``: its name says what it checks, its docstring
    why (docs/plugins.md lists both)."""

    def declare(function: Callable[[Component], None]) -> Callable[[Component], None]:
        CHECKS.setdefault(kind, []).append(function)
        return function

    return declare
