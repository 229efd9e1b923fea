"""The hooks a plugin may implement.

A plugin is a module (or object) with functions decorated by ``automl_core.hookimpl`` and
named after these specifications; it is found through the ``automl_core`` entry-point group::

    [project.entry-points.automl_core]
    my_surrogate = "my_package.plugin"

Registration hooks receive a ``register`` callback, so one plugin can register several named
components. Names are the public contract: recipes refer to components by name only. An
implementation may accept fewer arguments than the specification (pluggy prunes them), which
keeps old plugins working when a hook gains an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pluggy

if TYPE_CHECKING:  # names for the annotations only: this module imports no other of the core
    import argparse

    from automl_core.contracts import (
        Benchmark,
        Ensembler,
        Executor,
        MetaDataLoader,
        MetaFeatureProvider,
        PolicySelector,
        SearchStrategy,
        Surrogate,
        WarmStarter,
    )
    from automl_core.plugins import Plugins
    from automl_core.space import PipelineComponent, SearchSpace
    from automl_core.trial import Result, Trial

    # The engine's types, for the annotations of the hooks the engine calls (a plugin
    # project without the engine sees them as Any).
    from automl_engine.compose import Setup
    from automl_engine.dataset import Dataset
    from automl_engine.history import RunHistory
    from automl_engine.observers import Observers
    from automl_engine.run_folder import RunInfo, RunSummary

PROJECT = "automl_core"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Built = TypeVar("Built", contravariant=True)


class RegisterFactory(Protocol[Built]):
    """``register(name, factory, description="")``: ``factory(**params)`` builds the component
    from the recipe's ``params``; ``description`` defaults to its docstring's first line."""

    def __call__(self, name: str, factory: Callable[..., Built], description: str = "") -> None: ...


class RegisterComponent(Protocol):
    """``register(component, description="")``: a pipeline step, named ``<stage>:<name>``."""

    def __call__(self, component: PipelineComponent, description: str = "") -> None: ...


class RegisterDocument(Protocol):
    """``register(name, document, description="")``: a YAML document (a recipe, a suite) as
    a mapping or the path of its file."""

    def __call__(
        self, name: str, document: Mapping[str, Any] | str | Path, description: str = ""
    ) -> None: ...


#: kind (as recipes, ``automl plugins --kind`` and :meth:`Plugins.create` name it) -> the
#: registration hook that fills it; filled by :func:`registration` below, one per hook.
KINDS: dict[str, str] = {}
#: The kinds whose ``register`` is a :class:`RegisterDocument` (YAML documents, not factories).
DOCUMENT_KINDS: set[str] = set()

Spec = TypeVar("Spec", bound=Callable[..., Any])


def registration(kind: str, *, document: bool = False) -> Callable[[Spec], Spec]:
    """Declare a registration hook and the kind of component it registers (``document``: its
    ``register`` takes YAML documents). A plugin that adds hooks of its own (automl-bench's
    suites and systems) declares them with this too, in the module it hands to ``add_hookspecs``."""

    def declare(spec: Spec) -> Spec:
        KINDS[kind] = spec.__name__
        if document:
            DOCUMENT_KINDS.add(kind)
        return hookspec(spec)

    return declare


class AddHookspecs(Protocol):
    """``add(module)``: a module of hook specifications, as pluggy's ``add_hookspecs``."""

    def __call__(self, module: object) -> None: ...


class RegisterCommand(Protocol):
    """``register(name, configure, handler, help="")``: an ``automl NAME`` sub-command.
    ``configure(parser)`` adds its arguments to an ``argparse.ArgumentParser``;
    ``handler(args)`` runs it and returns the exit status (it may raise ``AutoMLError`` for a
    user's mistake, which the CLI prints without a traceback)."""

    def __call__(
        self,
        name: str,
        configure: Callable[[argparse.ArgumentParser], None],
        handler: Callable[[argparse.Namespace], int],
        help: str = "",
    ) -> None: ...


# --- extension hooks -----------------------------------------------------------------------


@hookspec(historic=True)
def add_hookspecs(add: AddHookspecs) -> None:
    """Add a plugin's own hook specifications (pytest's ``pytest_addhooks``): automl-bench
    adds ``register_suites`` and ``register_systems`` this way, so a core installed without
    it knows nothing of them. Called for every plugin as it is registered."""


@hookspec
def register_commands(register: RegisterCommand) -> None:
    """Register ``automl`` sub-commands (simonw/llm's pattern): automl-bench adds ``ablate`` and
    ``compare``; a two-word name adds an action to a group (automl-openml's
    ``"data import-openml"``); a group is created when a plugin first adds an action to it."""


@hookspec
def trusted_model_types() -> Iterable[str]:  # type: ignore[empty-body]  # a spec: no body
    """Names (``module.Name``, as skops' ``get_untrusted_types`` says) of the types and functions
    a fitted pipeline of this plugin's components may hold: a model naming others is refused."""


# --- registration hooks --------------------------------------------------------------------


@registration("search_strategy")
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    """Register :class:`~automl_core.contracts.SearchStrategy` factories."""


@registration("surrogate")
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    """Register :class:`~automl_core.contracts.Surrogate` factories."""


@registration("metafeature_provider")
def register_metafeature_providers(register: RegisterFactory[MetaFeatureProvider]) -> None:
    """Register :class:`~automl_core.contracts.MetaFeatureProvider` factories."""


@registration("warmstarter")
def register_warmstarters(register: RegisterFactory[WarmStarter]) -> None:
    """Register :class:`~automl_core.contracts.WarmStarter` factories."""


@registration("policy_selector")
def register_policy_selectors(register: RegisterFactory[PolicySelector]) -> None:
    """Register :class:`~automl_core.contracts.PolicySelector` factories (``task.resampling:
    auto`` uses the one named ``auto-sklearn-2``; ``{auto: NAME}`` another)."""


@registration("executor")
def register_executors(register: RegisterFactory[Executor]) -> None:
    """Register :class:`~automl_core.contracts.Executor` factories."""


@registration("ensembler")
def register_ensemblers(register: RegisterFactory[Ensembler]) -> None:
    """Register :class:`~automl_core.contracts.Ensembler` factories."""


@registration("benchmark")
def register_benchmarks(register: RegisterFactory[Benchmark]) -> None:
    """Register :class:`~automl_core.contracts.Benchmark` factories (table-lookup objectives)."""


@registration("metadata")
def register_metadata(register: RegisterFactory[MetaDataLoader]) -> None:
    """Register meta-data sources: ``factory(**params)`` returns a ``MetaDataLoader``
    (:mod:`automl_core.contracts`), whose ``load()`` gives the ``MetaData``; automl-metadata's
    ``MetaDataSource`` class is one (``automl data list`` shows its package and licence)."""


@registration("dataset_source")
def register_dataset_sources(register: RegisterFactory[Dataset]) -> None:
    """Register dataset sources: ``register("keel", load)`` where ``load(reference, **options)``
    returns a :class:`~automl_engine.dataset.Dataset` for the recipe value ``keel:<reference>``.
    ``load`` may carry two optional attributes, read without loading anything: ``check(reference)``
    (why it cannot be loaded, or None; ``automl validate`` asks) and ``task_of(reference)`` (its
    task, or None when unknown without loading)."""


@registration("space")
def register_spaces(register: RegisterFactory[SearchSpace]) -> None:
    """Register search spaces: ``factory(components, **params)`` returns a SearchSpace, given
    every registered :class:`~automl_core.space.PipelineComponent` (so that a third-party
    component joins the spaces whose stages it names). A factory with a ``metric`` parameter
    is also given the run's metric name, unless the recipe's params set it."""


@registration("component")
def register_components(register: RegisterComponent) -> None:
    """Register pipeline steps: ``register(component)`` with a
    :class:`~automl_core.space.PipelineComponent`; its name is ``<stage>:<name>``."""


@registration("recipe", document=True)
def register_recipes(register: RegisterDocument) -> None:
    """Register named recipes: ``register(name, recipe, description="")``, where ``recipe`` is
    a mapping (a recipe's YAML content) or the path of a YAML file, read when registered (a
    file that cannot be read makes the plugin broken, with the file's error). Users name them
    instead of a file: ``automl run NAME --set task.dataset=csv:FILE``,
    ``AutoMLClassifier(recipe=NAME)``. A named recipe is checked against the components when
    used, not when registered: it may name components of plugins that are not installed."""


# --- the run's phases: hooks a plugin may wrap or replace ----------------------------------
# pytest's pattern (its main loop is the hook ``pytest_runtestloop``): the engine implements
# each phase last (automl_engine.phases); a plugin's ``wrapper=True`` implementation runs
# around it (to time it, trace it, act after it), and one that returns a value replaces it.


@hookspec(firstresult=True)
def run_search(  # type: ignore[empty-body]  # a spec: no body
    setup: Setup,
    history: RunHistory,
    observers: Observers,
    run: RunInfo,
    requeued: list[Trial],
    started: float,
) -> str | None:
    """Search until a budget ends: ask ``setup.strategy``, execute on ``setup.executor``,
    store in ``history``, tell, and call ``observers.trial_end`` after each result. ``requeued``
    are trials of an interrupted run to run first; ``started`` is the run's start
    (``time.monotonic()``), from which its wall time counts. Returns why it stopped (the
    summary's ``stopped_because``)."""


@hookspec(firstresult=True)
def run_finishing(  # type: ignore[empty-body]  # a spec: no body
    setup: Setup,
    history: RunHistory,
    plugins: Plugins,
    run: RunInfo,
    stopped: str,
    started: float,
    deadline: float | None,
) -> RunSummary | None:
    """Finish a run whose search stopped (``stopped`` says why): choose, refit and save the
    final model by ``deadline`` (``time.monotonic()``; None: no limit), or a benchmark's
    regret, and return the written :class:`~automl_engine.run_folder.RunSummary`."""


# --- lifecycle hooks, for observers (loggers, progress displays, early stopping) -----------
# Each observer is called on its own (automl_engine.observers): one that raises is reported by
# name in a warning and the run goes on, its history, summary and model saved as usual.


@hookspec
def on_run_start(run: RunInfo) -> None:
    """A run begins; ``run`` is the :class:`~automl_engine.run_folder.RunInfo`."""


@hookspec
def on_trial_start(run: RunInfo, trial: Trial) -> None:
    """The loop accepted a trial (the warm start's, a strategy's proposal, or one an
    interrupted run left running) and handed it to the executor: SMAC's ask event."""


@hookspec
def on_trial_end(run: RunInfo, trial: Trial, result: Result) -> bool | None:
    """A trial finished and its result is stored in the history. ``False`` stops the run (early
    stopping): no new trials are asked, the running ones finish, then it ends as at a budget
    (ensemble, refit, save), ``stopped_because`` naming the observer. Anything else goes on."""


@hookspec
def on_run_end(run: RunInfo, summary: RunSummary) -> None:
    """A run ended; ``summary`` is the :class:`~automl_engine.run_folder.RunSummary`."""
