"""Registering a component without importing it.

Loading plugins imports every plugin module: a plugin that imports torch, gpytorch, SMAC3 or
Dask there makes ``automl plugins``, ``automl validate`` and every run pay for it, used or
not. A plugin registers :func:`lazy` instead of the class: the factory is imported when a
recipe first builds it, or when its signature or class attributes are asked for::

    register("gp", lazy("automl_surrogate_gp.surrogate:GPSurrogate"), description="...")

Pass a ``description``: the registry would otherwise read the docstring, which needs the
import. :func:`lazy_attributes` does the same for a package's ``__init__`` re-exports.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from automl_core.errors import PluginError


class LazyFactory:
    """A factory named by ``"package.module:attribute"``, imported on first use."""

    def __init__(self, target: str) -> None:
        module, sep, attribute = target.partition(":")
        if not (sep and module and attribute):
            raise PluginError(f"lazy({target!r}): expected 'package.module:attribute'")
        self.target = target
        self._loaded: Callable[..., Any] | None = None

    def load(self) -> Callable[..., Any]:
        """The factory itself, imported now if it was not yet."""
        if self._loaded is None:
            module_name, _, attribute = self.target.partition(":")
            try:
                found: Any = importlib.import_module(module_name)
                for part in attribute.split("."):
                    found = getattr(found, part)
            except (ImportError, AttributeError) as error:
                raise PluginError(
                    f"cannot import the registered factory {self.target}: "
                    f"{type(error).__name__}: {error}"
                ) from error
            if not callable(found):
                raise PluginError(f"the registered factory {self.target} is not callable")
            self._loaded = found
        return self._loaded

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        # read by inspect.signature(): the recipe's parameters are the factory's
        return inspect.signature(self.load())

    def __getattr__(self, name: str) -> Any:
        # class attributes the core reads from factories (``races_budgets``,
        # ``enforces_limits``, a meta-data source's ``package``)
        if name.startswith("__") or name == "_loaded":
            raise AttributeError(name)
        return getattr(self.load(), name)

    def __repr__(self) -> str:
        state = "imported" if self.is_loaded else "not imported yet"
        return f"lazy({self.target!r}, {state})"


def lazy(target: str) -> LazyFactory:
    """The factory at ``"package.module:attribute"``, imported when first used."""
    return LazyFactory(target)


def lazy_attributes(exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for a package that re-exports names from modules
    it should not import up front: ``__getattr__ = lazy_attributes({"GPSurrogate":
    "automl_surrogate_gp.surrogate"})``."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    return __getattr__
