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

from typing import Any

import pluggy

PROJECT = "automl_core"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# --- registration hooks --------------------------------------------------------------------
# ``register(name, factory, description="")``: ``factory(**params)`` builds the component
# from the recipe's params.


@hookspec
def register_search_strategies(register: Any) -> None:
    """Register :class:`~automl_core.contracts.SearchStrategy` factories."""


@hookspec
def register_surrogates(register: Any) -> None:
    """Register :class:`~automl_core.contracts.Surrogate` factories."""


@hookspec
def register_metafeature_providers(register: Any) -> None:
    """Register :class:`~automl_core.contracts.MetaFeatureProvider` factories."""


@hookspec
def register_warmstarters(register: Any) -> None:
    """Register :class:`~automl_core.contracts.WarmStarter` factories."""


@hookspec
def register_policy_selectors(register: Any) -> None:
    """Register :class:`~automl_core.contracts.PolicySelector` factories (``task.resampling:
    auto`` uses the one named ``auto-sklearn-2``; ``{auto: NAME}`` another)."""


@hookspec
def register_executors(register: Any) -> None:
    """Register :class:`~automl_core.contracts.Executor` factories."""


@hookspec
def register_ensemblers(register: Any) -> None:
    """Register :class:`~automl_core.contracts.Ensembler` factories."""


@hookspec
def register_benchmarks(register: Any) -> None:
    """Register :class:`~automl_core.contracts.Benchmark` factories (table-lookup objectives)."""


@hookspec
def register_metadata(register: Any) -> None:
    """Register meta-data sources: ``factory(**params)`` returns a
    :class:`~automl_core.metastore.MetaDataSource`, whose ``load()`` gives the
    :class:`~automl_core.contracts.MetaData`. Registering the source class itself is the
    usual way: its class attributes (package, licence) are shown by ``automl data list``."""


@hookspec
def register_dataset_sources(register: Any) -> None:
    """Register dataset sources: ``register("keel", load)`` where ``load(reference, **options)``
    returns a :class:`~automl_core.dataset.Dataset` for the recipe value ``keel:<reference>``."""


@hookspec
def register_data_commands(register: Any) -> None:
    """Register sub-commands of ``automl data``: ``register("import-openml", command)`` where
    ``command(argv: list[str]) -> int`` parses its own arguments (they follow the name on the
    command line) and returns the exit status. It may raise ``AutoMLError`` for user errors."""


@hookspec
def register_spaces(register: Any) -> None:
    """Register search spaces: ``factory(components, **params)`` returns a SearchSpace, given
    every registered :class:`~automl_core.space.PipelineComponent` (so that a third-party
    component joins the spaces whose stages it names). A factory with a ``metric`` parameter
    is also given the run's metric name, unless the recipe's params set it."""


@hookspec
def register_components(register: Any) -> None:
    """Register pipeline steps: ``register(component)`` with a
    :class:`~automl_core.space.PipelineComponent`; its name is ``<stage>:<name>``."""


@hookspec
def register_recipes(register: Any) -> None:
    """Register named recipes: ``register(name, recipe, description="")``, where ``recipe`` is
    a mapping (a recipe's YAML content) or the path of a YAML file, read when registered (a
    file that cannot be read makes the plugin broken, with the file's error). Users name them
    instead of a file: ``automl run NAME --set task.dataset=csv:FILE``,
    ``AutoMLClassifier(recipe=NAME)``. A named recipe is checked against the components when
    used, not when registered: it may name components of plugins that are not installed."""


@hookspec
def register_systems(register: Any) -> None:
    """Register :class:`~automl_core.contracts.System` factories: whole AutoML systems run as
    baselines beside the recipes of an ablation (``automl ablate --peer flaml``)."""


@hookspec
def register_suites(register: Any) -> None:
    """Register named suites: ``register(name, suite, description="")``, where ``suite`` is
    a mapping (a suite's YAML content: its ``tasks``) or the path of a YAML file, read when
    registered. ``automl ablate --suite NAME`` runs a recipe on every task of the suite; see
    :mod:`automl_core.suites`."""


# --- lifecycle hooks, for observers (loggers, progress displays, early stopping) -----------
# Each observer is called on its own (automl_core.observers): one that raises is reported by
# name in a warning and the run goes on, its history, summary and model saved as usual.


@hookspec
def on_run_start(run: Any) -> None:
    """A run begins; ``run`` is the :class:`~automl_core.runner.RunInfo`."""


@hookspec
def on_trial_end(run: Any, trial: Any, result: Any) -> bool | None:
    """A trial finished and its result is stored in the history. Return ``False`` to stop
    the run (early stopping): no new trials are asked, the running ones finish, then the run
    ends as at a budget (ensemble, refit, save) with ``stopped_because`` naming the
    observer. Any other return value, ``None`` included, lets it go on."""


@hookspec
def on_run_end(run: Any, summary: Any) -> None:
    """A run ended; ``summary`` is the :class:`~automl_core.runner.RunSummary`."""
