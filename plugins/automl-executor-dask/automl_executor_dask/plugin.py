"""Registers the ``dask`` executor."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import Executor
from automl_core.hookspecs import RegisterFactory
from automl_executor_dask.executor import DaskExecutor


@hookimpl
def register_executors(register: RegisterFactory[Executor]) -> None:
    register(
        "dask",
        DaskExecutor,
        "trials as Dask tasks: a LocalCluster, or params: {address: tcp://host:port}",
    )
