"""Built-in meta-data source and benchmark: a user's own meta-data folder.

``metadata: {name: folder, params: {path: ...}}`` reads a folder in the format of
:func:`automl_core.metastore.save_metadata`; ``task: {benchmark: {name: table, params:
{path: ...}}, dataset: ...}`` turns one that has a pool into a table-lookup benchmark.
"""

from __future__ import annotations

from automl_core.contracts import Benchmark
from automl_core.hookspecs import RegisterFactory, hookimpl
from automl_core.lookup import TableBenchmark
from automl_core.metastore import FolderMetaData, MetaDataSource


def table_benchmark(path: str) -> TableBenchmark:
    """A table-lookup benchmark over the meta-data folder at ``path``."""
    return TableBenchmark(FolderMetaData(path).load())


@hookimpl
def register_metadata(register: RegisterFactory[MetaDataSource]) -> None:
    register("folder", FolderMetaData, "a meta-data folder of your own (docs/data.md)")


@hookimpl
def register_benchmarks(register: RegisterFactory[Benchmark]) -> None:
    register("table", table_benchmark, "table lookup over a meta-data folder of your own")
