"""``automl deeppipe train`` and ``automl deeppipe list``: meta-train a checkpoint into the
cache (what ``surrogate: {name: deeppipe, params: {metadata: ...}}`` then loads at once),
and list the cached ones."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from automl_core.errors import AutoMLError
from automl_core.hookspecs import RegisterCommand

HELP = {
    "train": "meta-train DeepPipe on a meta-data source's split and cache the checkpoint",
    "list": "the cached DeepPipe checkpoints: meta-data, split, preset, validation NLL, time",
}


def register_deeppipe_commands(register: RegisterCommand) -> None:
    register("deeppipe train", _configure_train, _train, help=HELP["train"])
    register("deeppipe list", _configure_list, _list, help=HELP["list"])


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "metadata", nargs="?", help="a meta-data source (`automl data list`) or folder"
    )
    parser.add_argument(
        "--recipe",
        help="instead: what a run of this recipe would meta-train before its first trial "
        "(its space, its surrogate's settings, its dataset left out), into the cache",
    )
    parser.add_argument("--split", action="append", help="training split(s) (default: train)")
    parser.add_argument("--validation", help="the meta-validation split (default: see docs)")
    parser.add_argument("--preset", default="default", help="paper, default or quick")
    parser.add_argument("--epochs", type=int, help="the preset's epochs, replaced")
    parser.add_argument("--batch", type=int, help="the preset's batch, replaced")
    parser.add_argument("--lr", type=float, help="the preset's learning rate, replaced")
    parser.add_argument(
        "--max-minutes",
        type=float,
        help="stop after this long, keeping the best weights (a GPU lease, a shared machine)",
    )
    parser.add_argument("--encoder-layers", type=int, default=1)
    parser.add_argument("--width-factor", type=int, default=8)
    parser.add_argument("--latent", type=int, default=20)
    parser.add_argument(
        "--depth", type=int, default=4, help="layers before the projection to Z (ℓ_e + ℓ_a)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--omit",
        action="append",
        default=[],
        metavar="STAGE=COMPONENT",
        help="leave a component's pipelines out of meta-training (the paper's Experiment 4)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="DATASET",
        help="leave a dataset out of meta-training (what a run on it leaves out)",
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: all cores)")
    parser.add_argument(
        "--device", help="where torch trains: cpu, cuda, cuda:1... (default: a GPU if seen)"
    )
    parser.add_argument(
        "--space",
        help="for meta-data of runs over a pipeline space: the space that encodes its "
        "configurations (default: the one the meta-data names)",
    )
    parser.add_argument("--out", help="also save the checkpoint to this file (e.g. to ship it)")
    parser.add_argument("--quiet", action="store_true", help="no line per epoch")


def _configure_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _omitted(pairs: Sequence[str]) -> dict[str, list[str]]:
    omit: dict[str, list[str]] = {}
    for pair in pairs:
        stage, sep, name = pair.partition("=")
        if not sep or not stage or not name:
            raise AutoMLError(f"--omit {pair!r}: expected STAGE=COMPONENT")
        omit.setdefault(stage, []).append(name)
    return omit


def _settings(args: argparse.Namespace) -> Any:
    """The preset's name, or its settings with the ones given on the command line replaced
    (a checkpoint of other settings is cached under a key of its own)."""
    from automl_surrogate_deeppipe.metatrain import PRESETS

    changes = {
        name: value
        for name, value in (("epochs", args.epochs), ("batch", args.batch), ("lr", args.lr))
        if value is not None
    }
    if args.max_minutes is not None:
        changes["max_seconds"] = args.max_minutes * 60
    for name, value in changes.items():
        if not value > 0:
            flag = "--max-minutes" if name == "max_seconds" else f"--{name}"
            raise AutoMLError(f"{flag} {value}: expected a positive number")
    return replace(PRESETS[args.preset], **changes) if changes else args.preset


def _train(args: argparse.Namespace) -> int:
    from automl_core.plugins import load_plugins
    from automl_engine.metastore import resolve_metadata
    from automl_surrogate_deeppipe.metatrain import PRESETS, Architecture, meta_train

    if args.recipe is not None:
        if args.metadata is not None:
            raise AutoMLError("give a meta-data source or --recipe, not both")
        return _train_for_recipe(args.recipe)
    if args.metadata is None:
        raise AutoMLError("name the meta-data to meta-train on (`automl data list`), or --recipe")
    if args.preset not in PRESETS:
        raise AutoMLError(f"--preset {args.preset!r}: expected one of {', '.join(PRESETS)}")
    settings = _settings(args)
    plugins = load_plugins()
    metadata = resolve_metadata(args.metadata, None, plugins)
    space = metadata.pool if metadata.pool is not None else _pipeline_space(args, metadata, plugins)

    def progress(epoch: int, train: float, validation: float) -> None:
        if not args.quiet:
            print(
                f"epoch {epoch}: train NLL {train:.4f}, validation NLL {validation:.4f}", flush=True
            )

    try:
        checkpoint = meta_train(
            metadata,
            space,
            split=args.split[0] if args.split and len(args.split) == 1 else (args.split or "train"),
            validation=args.validation,
            architecture=Architecture(
                args.encoder_layers, args.width_factor, args.latent, args.depth
            ),
            settings=settings,
            seed=args.seed,
            omit=_omitted(args.omit),
            exclude=args.exclude,
            threads=args.threads,
            progress=progress,
            device=args.device,
        )
    except ValueError as error:
        raise AutoMLError(str(error)) from None
    info = checkpoint.info
    if args.out:
        checkpoint.save(Path(args.out))
        print(f"saved to {args.out} ({Path(args.out).stat().st_size / 1e6:.2f} MB)")
    print(
        f"checkpoint {info.get('key')}: {info['epochs_run']} epochs in {info['seconds']:.0f} s, "
        f"best validation NLL {info['validation_nll']:.4f} (epoch {info['best_epoch']})"
    )
    return 0


def _train_for_recipe(reference: str) -> int:
    """Meta-train what a run of the recipe would before its first trial, the same way (its
    task's dataset loaded, so that the same datasets are left out), into the cache: a run
    under a wall time then loads it at once."""
    from automl_core.plugins import load_plugins
    from automl_core.space import vector_space
    from automl_engine.recipe import load_recipe
    from automl_engine.tasks import build_task
    from automl_engine.validation import seeded_params

    plugins = load_plugins()
    recipe = load_recipe(reference, (), plugins)
    ref = recipe.search.surrogate
    if ref is None or ref.name != "deeppipe":
        raise AutoMLError(f"{reference}: its search.surrogate is not deeppipe")
    if recipe.task.suite is not None:
        raise AutoMLError(f"{reference}: a suite leaves out each dataset in turn: give one")
    task = build_task(recipe, plugins)
    space = vector_space(task.space)
    if space is None:
        raise AutoMLError(f"{reference}: its space has no vector encoding")
    surrogate = plugins.create("surrogate", ref.name, seeded_params(plugins, ref, recipe))
    training = surrogate.training_before_search(space, task.description)
    if training is None:
        print(f"{reference}: nothing to meta-train (no metadata, or already in the cache)")
        return 0
    surrogate.prepare(space.columns())
    surrogate.prepare_space(space, task.description)
    info = surrogate.meta_checkpoint.info
    print(
        f"checkpoint {info.get('key')}: {info['epochs_run']} epochs in {info['seconds']:.0f} s, "
        f"best validation NLL {info['validation_nll']:.4f}; {reference} now runs without it"
    )
    return 0


def _pipeline_space(args: argparse.Namespace, metadata: Any, plugins: Any) -> Any:
    """The pipeline space that encodes meta-data built by runs over one (no pool)."""
    from automl_core.space import vector_space

    name = args.space or metadata.space
    if not name:
        raise AutoMLError(
            f"{args.metadata}: the meta-data names no space and has no pool; give --space"
        )
    space = vector_space(plugins.create("space", name))
    if space is None:
        raise AutoMLError(f"space {name!r} has no vector encoding: DeepPipe cannot read it")
    return space


def _list(args: argparse.Namespace) -> int:
    from automl_surrogate_deeppipe.metatrain import list_checkpoints
    from automl_surrogate_deeppipe.shipped import shipped_checkpoints

    shipped = shipped_checkpoints()
    rows = []
    for path, checkpoint in list_checkpoints() + shipped:
        info = checkpoint.info
        rows.append(
            {
                "file": str(path),
                "shipped": any(path == other for other, _ in shipped),
                "metadata": info.get("metadata"),
                "split": info.get("split"),
                "preset": info.get("preset", "custom"),
                "architecture": asdict(checkpoint.architecture),
                "omit": info.get("omit"),
                "epochs": info.get("epochs_run"),
                "validation_nll": info.get("validation_nll"),
                "seconds": info.get("seconds"),
            }
        )
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return 0
    if all(row["shipped"] for row in rows):
        print("no cached DeepPipe checkpoint (`automl deeppipe train pmf` makes one)")
    for row in rows:
        if row["epochs"] is None:  # not trained here: the authors' weights, imported
            print(f"{row['file']}\n  {row['metadata']}, {row['architecture']}")
            continue
        print(
            f"{row['file']}{' (shipped: checkpoint: default)' if row['shipped'] else ''}\n"
            f"  {row['metadata']} split {row['split']}, preset {row['preset']}, "
            f"{row['architecture']}, omit {row['omit'] or 'nothing'}: {row['epochs']} epochs, "
            f"validation NLL {row['validation_nll']:.4f}, {row['seconds']:.0f} s"
        )
    return 0
