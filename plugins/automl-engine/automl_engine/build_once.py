"""One build of each component per run: what checking the recipe built, the run uses.

A run checks its recipe before it starts (:func:`~automl_engine.validation.check_recipe`), and
the check builds each named component, so that a factory's own refusal of a parameter is an
error before any data is loaded. Building them all again for the run would call every
factory twice: slow for a component that does work when built, wrong for one with side
effects. :class:`BuildOnce` is the run's registry: while the recipe is checked it keeps what
it builds; afterwards, the first request for a component of the same kind, name and
parameters gets the kept one, and any further request a new one (a strategy that asks for a
fresh surrogate per fit gets one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from automl_core.plugins import Plugins


@dataclass(frozen=True)
class Kept:
    """A component built while the recipe was checked, not yet handed to the run."""

    kind: str
    name: str
    params: dict[str, Any]
    component: Any

    def matches(self, kind: str, name: str, params: dict[str, Any]) -> bool:
        if (self.kind, self.name) != (kind, name):
            return False
        try:
            return bool(self.params == params)
        except (TypeError, ValueError):  # values that cannot be compared (arrays): rebuilt
            return False


@dataclass(eq=False)
class BuildOnce(Plugins):
    """The registry of one run (see the module docstring)."""

    kept: list[Kept] = field(default_factory=list)
    #: True while the recipe is checked: what is built then is kept for the run.
    checking: bool = True

    @classmethod
    def around(cls, plugins: Plugins) -> BuildOnce:
        """A run's registry over ``plugins`` (the same plugins and registrations)."""
        return cls(plugins.manager, plugins.registry, plugins.broken, plugins.origins)

    def create(self, kind: str, name: str, params: dict[str, Any] | None = None) -> Any:
        wanted = dict(params or {})
        if not self.checking:
            for position, kept in enumerate(self.kept):
                if kept.matches(kind, name, wanted):
                    del self.kept[position]
                    return kept.component
        component = super().create(kind, name, params)
        if self.checking:
            self.kept.append(Kept(kind, name, wanted, component))
        return component

    def checked(self) -> None:
        """The recipe is checked: from now on the kept components are handed out."""
        self.checking = False
