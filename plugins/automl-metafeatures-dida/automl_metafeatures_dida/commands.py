"""``automl dida train`` and ``automl dida list``: train Dida into the cache (on patch
identification: what ``metafeatures: dida`` loads by default; or on configuration ranking over
meta-data, optionally from the patch-trained network), and list the cached networks."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from automl_core.hookspecs import RegisterCommand

if TYPE_CHECKING:  # torch loads only when a command runs
    from automl_metafeatures_dida.network import Architecture, DidaWeights

HELP = {
    "describe": "describe a meta-data's datasets by Dida's meta-features (for knd), cached",
    "train": "train Dida on patch identification (default: KEEL's 43 datasets) or on "
    "configuration ranking (--metadata) and cache it",
    "list": "the cached Dida networks: corpus, validation accuracy, steps, time",
}


def register_dida_commands(register: RegisterCommand) -> None:
    register("dida train", _configure_train, _train, help=HELP["train"])
    register("dida list", _configure_list, _list, help=HELP["list"])
    register("dida describe", _configure_describe, _describe, help=HELP["describe"])


def _configure_describe(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("metadata", help="a meta-data source or folder whose datasets to describe")
    parser.add_argument("--weights", help="a trained network (default: the provider's)")
    parser.add_argument(
        "--ship",
        action="store_true",
        help="write the table into the package (models/), where a fresh install reads it",
    )


def _describe(args: argparse.Namespace) -> int:
    """Describe a meta-data's datasets once (cached, or shipped with --ship): the source
    ``dida`` over that meta-data then computes nothing at run time."""
    import time

    from automl_core.plugins import load_plugins
    from automl_engine.metastore import resolve_metadata
    from automl_metafeatures_dida.described import SHIPPED_TABLES, DidaMetaData

    plugins = load_plugins()
    described = DidaMetaData(args.metadata, weights=args.weights, registry=plugins)
    datasets = resolve_metadata(args.metadata, None, plugins).datasets
    started = time.monotonic()
    table = described.table(datasets)
    seconds = time.monotonic() - started
    print(f"{len(table)} of {len(datasets)} datasets described in {seconds:.0f} s")
    if args.ship:
        path = SHIPPED_TABLES / f"described-{described.key(datasets)}.csv"
        table.to_csv(path)
        print(f"shipped: {path} ({path.stat().st_size / 1e3:.0f} KB)")
    return 0


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--datasets", nargs="*", help="dataset references (default: KEEL's 43)")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--second", type=int, default=32, help="2nd invariant layer (0: 1L)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    parser.add_argument(
        "--metadata",
        help="train on configuration ranking over this meta-data (a source name or a folder "
        "such as the one `automl data build` writes; its datasets must be loadable)",
    )
    parser.add_argument(
        "--from-patches",
        action="store_true",
        help="with --metadata: start from the network patch identification trains with the "
        "same --datasets/--second/--seed and --patch-steps (trained first if not cached)",
    )
    parser.add_argument("--patch-steps", type=int, default=1000, help="with --from-patches")


def _configure_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _train(args: argparse.Namespace) -> int:
    from automl_metafeatures_dida.network import Architecture
    from automl_metafeatures_dida.patches import Training
    from automl_metafeatures_dida.train import train

    def progress(step: int, loss: float) -> None:
        print(f"step {step}: loss {loss:.4f}", flush=True)

    architecture = Architecture(second=args.second)
    if args.metadata is None or args.from_patches:
        weights = train(
            args.datasets or None,
            architecture,
            Training(steps=args.patch_steps if args.metadata else args.steps, seed=args.seed),
            threads=args.threads,
            progress=progress,
        )
        _report(weights.info, "patch identification")
    if args.metadata is not None:
        weights = _train_ranking(args, architecture, weights if args.from_patches else None)
        _report(weights.info, "configuration ranking")
    return 0


def _train_ranking(
    args: argparse.Namespace, architecture: Architecture, start: DidaWeights | None
) -> DidaWeights:
    from automl_core.errors import AutoMLError
    from automl_core.plugins import load_plugins
    from automl_core.space import pipeline_space
    from automl_engine.metastore import resolve_metadata
    from automl_metafeatures_dida.ranking import RankingTraining
    from automl_metafeatures_dida.train import train_ranking

    def progress(step: int, loss: float) -> None:
        print(f"step {step}: loss {loss:.4f}", flush=True)

    plugins = load_plugins()
    metadata = resolve_metadata(args.metadata, None, plugins=plugins)
    if not metadata.space:
        raise AutoMLError(f"dida: meta-data {args.metadata!r} names no space for its configs")
    space = pipeline_space(plugins.create("space", metadata.space))
    if space is None:
        raise AutoMLError(f"dida: {metadata.space!r} is not a pipeline space")
    settings = RankingTraining(steps=args.steps, seed=args.seed)
    return train_ranking(
        metadata,
        space,
        architecture,
        settings,
        start=start,
        threads=args.threads,
        progress=progress,
    )


def _report(info: dict[str, Any], task: str) -> None:
    print(
        f"network {info['key']}: {info['steps']} steps in {info['seconds']:.0f} s on "
        f"{len(info['trained_on'])} datasets; {task} on "
        f"{len(info['validation'])} held-out datasets: {info['validation_accuracy']:.1%}"
    )


def _list(args: argparse.Namespace) -> int:
    from automl_metafeatures_dida.network import DidaWeights
    from automl_metafeatures_dida.train import SHIPPED, checkpoint_folder, list_checkpoints

    checkpoints = list_checkpoints()
    shipped = [(SHIPPED, DidaWeights.load(SHIPPED))] if SHIPPED.exists() else []
    rows = [
        {
            "file": str(path),
            "shipped": path == SHIPPED,
            "task": weights.info.get("task", "patches"),
            "datasets": len(weights.info.get("trained_on", [])),
            "validation_accuracy": weights.info.get("validation_accuracy"),
            "steps": weights.info.get("steps"),
            "seconds": weights.info.get("seconds"),
        }
        for path, weights in checkpoints + shipped
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not checkpoints:
        print(
            f"no trained Dida network in {checkpoint_folder()}: train one with `automl dida "
            "train` (KEEL's 43 datasets, about 12 minutes on one core)"
            + ("; the shipped network below is the default meanwhile" if shipped else "")
        )
    for row in rows:
        print(
            f"{row['file']}{' (shipped)' if row['shipped'] else ''}: {row['task']}, "
            f"{row['datasets']} datasets, {row['steps']} steps, {row['seconds']:.0f} s, "
            f"held-out accuracy {row['validation_accuracy']:.1%}"
        )
    return 0
