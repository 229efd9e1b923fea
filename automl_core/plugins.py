"""Finding plugins and the components they register.

:func:`load_plugins` registers the core's own default plugins, then every module of the
``automl_core`` entry-point group (filtered by ``AUTOML_LOAD_PLUGINS``), calls each
registration hook once per plugin, and returns a :class:`Plugins`: the plugin manager plus a
registry of named components per kind. A plugin that fails to import, or whose registration
hook raises, is recorded in :attr:`Plugins.broken` and the others still load.
"""

from __future__ import annotations

import copy
import difflib
import importlib
import inspect
import os
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from automl_core import hookspecs
from automl_core.errors import PluginError, UnknownComponentError
from automl_core.lazy import LazyFactory
from automl_core.space import PipelineComponent

ENTRY_POINT_GROUP = "automl_core"
#: The plugin API this core provides: the hook specifications and contracts a plugin is
#: written against. Bumped on a change that breaks plugins; a plugin module declares the
#: API(s) it works with as ``AUTOML_PLUGIN_API = 1`` (or a tuple), and one that declares
#: none is assumed to work with this one.
PLUGIN_API = 1
API_DECLARATION = "AUTOML_PLUGIN_API"
#: Comma-separated entry-point (or distribution) names to load; empty loads none. Unset: all.
LOAD_PLUGINS_ENV = "AUTOML_LOAD_PLUGINS"

#: The kernel's own plugin, registered like any other (the "dogfood" rule).
DEFAULT_PLUGINS = ("automl_core.random_search",)
#: The entry-point group of the plugins an installed distribution makes part of the
#: defaults: loaded whenever the defaults are (``load_plugins(defaults=True)``), whatever
#: ``AUTOML_LOAD_PLUGINS`` says and even without the other entry points, as the kernel's own.
#: automl-engine's executors, dataset sources and named recipes are: a run needs them as it
#: needs random search, and a test that loads no installed plugin still runs recipes.
DEFAULTS_ENTRY_POINT_GROUP = "automl_core.defaults"

#: The keyword parameter through which a factory receives the registry that builds it: a
#: component that builds others (a meta-feature provider wrapping another, a warm-starter
#: reading meta-data through its source) builds them from the run's own registry, and so
#: sees what the run sees (``AUTOML_LOAD_PLUGINS``, plugins registered in the process),
#: instead of loading the installed plugins again. The core's to give: a recipe cannot set it.
REGISTRY_PARAMETER = "registry"

#: kind -> the registration hook that fills it, as the hook specs declare it.
KINDS: dict[str, str] = hookspecs.KINDS


@dataclass(frozen=True)
class Origin:
    """Which plugin (and distribution) something came from."""

    plugin: str
    distribution: str
    version: str

    def __str__(self) -> str:
        return f"{self.distribution} {self.version} (plugin {self.plugin!r})"


@dataclass(frozen=True)
class Registration:
    """One named component, with where it came from."""

    kind: str
    name: str
    obj: Any
    origin: Origin
    description: str = ""

    def parameters(self) -> dict[str, Any]:
        """The keyword parameters a recipe may set, with their defaults (None when the default
        is not plain data). A space factory's first argument, the components, is the core's."""
        return {p.name: _plain_default(p) for p in self._recipe_parameters()}

    def accepts(self, parameter: str) -> bool:
        """Whether the factory takes ``parameter`` (by name, or through ``**kwargs``): how
        the core decides to hand a component the run's seed or metric."""
        return parameter in self.parameters() or self.accepts_any_parameter()

    def accepts_any_parameter(self) -> bool:
        """Whether the factory takes ``**kwargs`` (then no parameter name can be checked)."""
        return any(p.kind is p.VAR_KEYWORD for p in self._signature_parameters())

    def _signature_parameters(self) -> list[inspect.Parameter]:
        if isinstance(self.obj, PipelineComponent):
            return []
        try:
            return list(inspect.signature(self.obj).parameters.values())
        except (TypeError, ValueError):
            return []

    def takes_registry(self) -> bool:
        """Whether the factory asks for the registry that builds it (:data:`REGISTRY_PARAMETER`)."""
        return any(p.name == REGISTRY_PARAMETER for p in self._signature_parameters())

    def _recipe_parameters(self) -> list[inspect.Parameter]:
        named = [
            p
            for p in self._signature_parameters()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != REGISTRY_PARAMETER
        ]
        return named[1:] if self.kind == "space" else named

    def as_dict(self, parameters: bool = True) -> dict[str, Any]:
        """The registration as plain data; ``parameters=False`` leaves out the factory's
        parameters, which a lazily registered factory must be imported to tell."""
        record = {
            "kind": self.kind,
            "name": self.name,
            "description": self.description,
            "plugin": self.origin.plugin,
            "distribution": self.origin.distribution,
            "version": self.origin.version,
        }
        return {**record, "parameters": self.parameters()} if parameters else record


def _plain_default(parameter: inspect.Parameter) -> Any:
    default = parameter.default
    return default if isinstance(default, (int, float, str, bool)) else None


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that could not be loaded or whose registration failed."""

    name: str
    distribution: str
    error: str


@dataclass
class Registry:
    """Named components per kind. Two plugins claiming one name make that name unusable:
    resolving it raises an error naming both distributions."""

    entries: dict[str, dict[str, Registration]] = field(default_factory=dict)
    conflicts: dict[tuple[str, str], list[Registration]] = field(default_factory=dict)

    def add(self, registration: Registration) -> None:
        kind, name = registration.kind, registration.name
        existing = self.entries.setdefault(kind, {}).get(name)
        if existing is None and (kind, name) not in self.conflicts:
            self.entries[kind][name] = registration
            return
        claims = self.conflicts.setdefault((kind, name), [])
        if existing is not None:
            claims.append(self.entries[kind].pop(name))
        claims.append(registration)

    def names(self, kind: str) -> list[str]:
        return sorted({*self.entries.get(kind, {}), *(n for k, n in self.conflicts if k == kind)})

    def get(self, kind: str, name: str) -> Registration:
        if (kind, name) in self.conflicts:
            claims = self.conflicts[(kind, name)]
            raise PluginError(
                f"{kind} {name!r} is registered by more than one plugin: "
                + " and ".join(str(r.origin) for r in claims)
                + ". Uninstall one, or restrict loading with "
                f"{LOAD_PLUGINS_ENV}=<comma-separated plugin names>."
            )
        try:
            return self.entries[kind][name]
        except KeyError:
            known = self.names(kind)
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            raise UnknownComponentError(kind.replace("_", " "), name, known, close) from None

    def all(self) -> list[Registration]:
        return [r for kind in sorted(self.entries) for _, r in sorted(self.entries[kind].items())]


@dataclass
class Plugins:
    """The loaded plugin manager, its registry, and what failed to load."""

    manager: pluggy.PluginManager
    registry: Registry
    broken: list[BrokenPlugin]
    origins: dict[str, Origin]

    def get(self, kind: str, name: str) -> Registration:
        return self.registry.get(kind, name)

    def create(self, kind: str, name: str, params: dict[str, Any] | None = None) -> Any:
        """Build a component from its registered factory with the recipe's ``params``. (A
        space's factory also receives every registered pipeline component, first; a factory
        with a ``registry`` parameter, this registry: :data:`REGISTRY_PARAMETER`.)"""
        registration = self.get(kind, name)
        leading = (self.components(),) if kind == "space" else ()
        params = dict(params or {})
        if REGISTRY_PARAMETER in params:
            raise PluginError(
                f"cannot build {kind} {name!r}: {REGISTRY_PARAMETER!r} is given by the core "
                "(the registry that builds the component), not a parameter to set"
            )
        if registration.takes_registry():
            params[REGISTRY_PARAMETER] = self
        try:
            return registration.obj(*leading, **params)
        # A TypeError is an unknown or missing parameter; a ValueError is a component
        # refusing a parameter's value (knd's ``k: 0``): both are the recipe's to fix.
        except (TypeError, ValueError) as error:
            allowed = ", ".join(registration.parameters()) or "(none)"
            raise PluginError(
                f"cannot build {kind} {name!r} from {registration.origin}: {error}. "
                f"Its parameters: {allowed}"
            ) from error

    def components(self) -> list[PipelineComponent]:
        return [r.obj for r in self.registry.entries.get("component", {}).values()]


def registry_or_installed(registry: Plugins | None) -> Plugins:
    """``registry`` (the one that built a component, :data:`REGISTRY_PARAMETER`), or, for a
    component built directly in Python without one, the installed plugins."""
    return registry if registry is not None else load_plugins()


def make_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    # historic: every plugin registered from now on may add hook specs of its own
    manager.hook.add_hookspecs.call_historic(kwargs={"add": manager.add_hookspecs})
    return manager


def _allowed_names() -> set[str] | None:
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _core_origin(plugin: str) -> Origin:
    from automl_core import __version__

    return Origin(plugin, "automl-core", __version__)


def _distribution_of(entry_point: metadata.EntryPoint) -> tuple[str, str]:
    """The name and version of the distribution that declares ``entry_point``."""
    dist = entry_point.dist
    if dist is None:
        return "<unknown>", "0"
    return dist.metadata["Name"], dist.version


def _load_installed_defaults(manager: pluggy.PluginManager, origins: dict[str, Origin]) -> None:
    """Register the plugins of :data:`DEFAULTS_ENTRY_POINT_GROUP`. One that fails to load is
    an error, not a broken plugin: the defaults are part of the installation."""
    for entry_point in metadata.entry_points(group=DEFAULTS_ENTRY_POINT_GROUP):
        if manager.get_plugin(entry_point.name) is not None:
            continue
        dist_name, version = _distribution_of(entry_point)
        try:
            plugin = entry_point.load()
        except Exception as error:
            raise PluginError(
                f"default plugin {entry_point.name!r} of {dist_name} {version} cannot be "
                f"imported ({_describe(error)}): reinstall {dist_name}"
            ) from error
        manager.register(plugin, name=entry_point.name)
        origins[entry_point.name] = Origin(entry_point.name, dist_name, version)


def load_plugins(
    extra: Sequence[object] = (),
    *,
    entry_points: bool = True,
    defaults: bool = True,
) -> Plugins:
    """Load the default plugins, the installed ones and ``extra`` (objects, for tests)."""
    manager = make_manager()
    origins: dict[str, Origin] = {}
    broken: list[BrokenPlugin] = []
    if defaults:
        for module_name in DEFAULT_PLUGINS:
            manager.register(importlib.import_module(module_name), name=module_name)
            origins[module_name] = _core_origin(module_name)
        _load_installed_defaults(manager, origins)
    if entry_points:
        _load_entry_points(manager, origins, broken)
    in_process = []
    for index, plugin in enumerate(extra):
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        manager.register(plugin, name=name)
        origins[name] = Origin(name, getattr(plugin, "distribution", "<in-process>"), "0")
        in_process.append(name)
    _refuse_unknown_hooks(manager, origins, broken, in_process)
    manager.check_pending()
    registry = Registry()
    _collect_registrations(manager, origins, registry, broken)
    return Plugins(manager, registry, broken, origins)


def _load_entry_points(
    manager: pluggy.PluginManager, origins: dict[str, Origin], broken: list[BrokenPlugin]
) -> None:
    allowed = _allowed_names()
    seen: set[str] = set()
    named: set[str] = set()  # every plugin and distribution name installed
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist_name, version = _distribution_of(entry_point)
        named |= {entry_point.name, dist_name}
        if allowed is not None and not {entry_point.name, dist_name} & allowed:
            continue
        if entry_point.name in seen or manager.get_plugin(entry_point.name) is not None:
            continue
        seen.add(entry_point.name)
        try:
            plugin = entry_point.load()
            refused = api_mismatch(plugin, entry_point.name, f"{dist_name} {version}")
            if refused is not None:
                broken.append(BrokenPlugin(entry_point.name, dist_name, refused))
                continue
            manager.register(plugin, name=entry_point.name)
        except Exception as error:  # a broken plugin must not stop the others
            broken.append(BrokenPlugin(entry_point.name, dist_name, _describe(error)))
            continue
        origins[entry_point.name] = Origin(entry_point.name, dist_name, version)
    if allowed and allowed - named:
        warnings.warn(
            f"{LOAD_PLUGINS_ENV} names {sorted(allowed - named)}: no installed plugin or "
            f"distribution has that name (installed: {', '.join(sorted(named)) or 'none'})",
            stacklevel=3,
        )


def api_mismatch(plugin: object, name: str, distribution: str) -> str | None:
    """Why ``plugin`` may not load here: it declares (``AUTOML_PLUGIN_API``) only plugin
    APIs other than :data:`PLUGIN_API`. None when it may (or declares nothing)."""
    declared = getattr(plugin, API_DECLARATION, None)
    if declared is None:
        return None
    accepted = set(declared) if isinstance(declared, (tuple, list, set, frozenset)) else {declared}
    if not accepted or not all(type(v) is int for v in accepted):
        return (
            f"plugin {name!r} ({distribution}) declares {API_DECLARATION} = {declared!r}: "
            "expected an integer (or a tuple of them), e.g. 1"
        )
    if PLUGIN_API in accepted:
        return None
    from automl_core import __version__

    needs = " or ".join(str(v) for v in sorted(accepted))
    return (
        f"plugin {name!r} ({distribution}) needs plugin API {needs}; automl-core {__version__} "
        f"provides plugin API {PLUGIN_API}: install a release of it written for API "
        f"{PLUGIN_API}, or an automl-core that provides API {needs}"
    )


def _refuse_unknown_hooks(
    manager: pluggy.PluginManager,
    origins: dict[str, Origin],
    broken: list[BrokenPlugin],
    in_process: Sequence[str],
) -> None:
    """A plugin implementing a hook nobody declares (a misspelt ``register_surrogate``) has
    registered nothing it meant to. An installed one is listed as broken, with the hook it
    probably meant, and the others load; an in-process one (``extra``) is an error at once.
    Checked once every plugin is registered, since a plugin may declare hooks of its own
    that another implements."""
    declared = [name for name in dir(manager.hook) if _declared(manager, name)]
    for name, plugin in list(manager.list_name_plugin()):
        unknown = [
            caller.name
            for caller in manager.get_hookcallers(plugin) or []
            if caller.spec is None
            and any(i.plugin is plugin and not i.optionalhook for i in caller.get_hookimpls())
        ]
        if not unknown:
            continue
        hints = [difflib.get_close_matches(hook, declared, n=1) for hook in unknown]
        meant = "; ".join(
            f"{hook!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            for hook, hint in zip(unknown, hints, strict=True)
        )
        problem = f"plugin {name!r} implements hooks that no plugin declares: {meant}"
        if name in in_process:
            raise PluginError(problem)
        manager.unregister(plugin)
        origin = origins.pop(name, None)
        broken.append(BrokenPlugin(name, origin.distribution if origin else "?", problem))


def _declared(manager: pluggy.PluginManager, name: str) -> bool:
    caller = getattr(manager.hook, name, None)
    return getattr(caller, "spec", None) is not None


def _describe(error: BaseException) -> str:
    last = traceback.format_exception(type(error), error, error.__traceback__)[-1].strip()
    return last


def _collect_registrations(
    manager: pluggy.PluginManager,
    origins: dict[str, Origin],
    registry: Registry,
    broken: list[BrokenPlugin],
) -> None:
    """Call every registration hook once per plugin. A plugin that raises in any of them
    contributes nothing at all, so no half-registered plugin is ever used."""
    pending: list[Registration] = []
    failed: set[str] = set()
    for kind, hook_name in KINDS.items():
        hook = getattr(manager.hook, hook_name, None)
        if hook is None or hook.spec is None:  # a plugin's hook (automl-bench's) not loaded here
            continue
        for impl in hook.get_hookimpls():  # registration order
            origin = origins.get(impl.plugin_name, Origin(impl.plugin_name, "<unknown>", "0"))
            register = _register_callback(kind, origin, pending)
            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except Exception as error:
                if impl.plugin_name not in failed:
                    failed.add(impl.plugin_name)
                    broken.append(
                        BrokenPlugin(
                            impl.plugin_name,
                            origin.distribution,
                            f"{hook_name}: {_describe(error)}",
                        )
                    )
    for registration in pending:
        if registration.origin.plugin not in failed:
            registry.add(registration)


def _register_callback(
    kind: str, origin: Origin, pending: list[Registration]
) -> Callable[..., None]:
    if kind == "component":

        def register_component(component: PipelineComponent, description: str = "") -> None:
            if not isinstance(component, PipelineComponent):
                raise PluginError(
                    f"{origin}: register_components expects a PipelineComponent, "
                    f"got {type(component).__name__}"
                )
            name = f"{component.stage}:{component.name}"
            text = description or component.description
            pending.append(Registration(kind, name, component, origin, text))

        return register_component
    if kind in hookspecs.DOCUMENT_KINDS:
        return _register_document_callback(kind, origin, pending)

    def register(name: str, factory: Any, description: str = "") -> None:
        if not isinstance(name, str) or not name:
            raise PluginError(f"{origin}: a {kind} name must be a non-empty string, got {name!r}")
        if not callable(factory):
            raise PluginError(f"{origin}: {kind} {name!r} must be callable (a factory)")
        if not description and not isinstance(factory, LazyFactory):  # a docstring needs it
            description = (inspect.getdoc(factory) or "").split("\n")[0]
        text = description
        pending.append(Registration(kind, name, factory, origin, text))

    return register


def _register_document_callback(
    kind: str, origin: Origin, pending: list[Registration]
) -> Callable[..., None]:
    """``register(name, document, description="")`` for named recipes and suites: the
    registration holds the YAML document as a mapping, read from its file now, so that a
    file that cannot be read shows up as a broken plugin in ``automl plugins`` rather than
    when someone uses the name."""

    def register_document(
        name: str, document: Mapping[str, Any] | str | Path, description: str = ""
    ) -> None:
        if not isinstance(name, str) or not name:
            raise PluginError(f"{origin}: a {kind} name must be a non-empty string, got {name!r}")
        if isinstance(document, (str, Path)):
            from automl_core.documents import read_recipe_file  # YAML: only for a file

            document = read_recipe_file(document, kind)
        if not isinstance(document, Mapping):
            raise PluginError(
                f"{origin}: {kind} {name!r} must be a mapping or the path of a YAML file, "
                f"got {type(document).__name__}"
            )
        pending.append(Registration(kind, name, copy.deepcopy(dict(document)), origin, description))

    return register_document
