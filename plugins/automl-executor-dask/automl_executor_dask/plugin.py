"""Registers the ``dask`` executor."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import Executor
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_executors(register: RegisterFactory[Executor]) -> None:
    register(
        "dask",
        lazy("automl_executor_dask.executor:DaskExecutor"),
        "trials as Dask tasks: a LocalCluster, or params: {address: tcp://host:port}",
    )
