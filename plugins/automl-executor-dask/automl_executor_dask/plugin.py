"""Registers the ``dask`` executor."""

from __future__ import annotations

from collections.abc import Callable

from automl_core import hookimpl
from automl_executor_dask.executor import DaskExecutor


@hookimpl
def register_executors(register: Callable[..., None]) -> None:
    register(
        "dask",
        DaskExecutor,
        "trials as Dask tasks: a LocalCluster, or params: {address: tcp://host:port}",
    )
