"""``automl dida train`` and ``automl dida list``: train Dida on patch identification into the
cache (what ``metafeatures: dida`` then loads), and list the cached networks."""

from __future__ import annotations

import argparse
import json

from automl_core.hookspecs import RegisterCommand

HELP = {
    "train": "train Dida on patch identification (default: KEEL's 43 datasets) and cache it",
    "list": "the cached Dida networks: corpus, validation accuracy, steps, time",
}


def register_dida_commands(register: RegisterCommand) -> None:
    register("dida train", _configure_train, _train, help=HELP["train"])
    register("dida list", _configure_list, _list, help=HELP["list"])


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--datasets", nargs="*", help="dataset references (default: KEEL's 43)")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--second", type=int, default=32, help="2nd invariant layer (0: 1L)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, help="torch threads (default: all cores)")


def _configure_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _train(args: argparse.Namespace) -> int:
    from automl_metafeatures_dida.network import Architecture
    from automl_metafeatures_dida.patches import Training
    from automl_metafeatures_dida.train import train

    def progress(step: int, loss: float) -> None:
        print(f"step {step}: loss {loss:.4f}", flush=True)

    weights = train(
        args.datasets or None,
        Architecture(second=args.second),
        Training(steps=args.steps, seed=args.seed),
        threads=args.threads,
        progress=progress,
    )
    info = weights.info
    print(
        f"network {info['key']}: {info['steps']} steps in {info['seconds']:.0f} s on "
        f"{len(info['trained_on'])} datasets; patch identification on "
        f"{len(info['validation'])} held-out datasets: {info['validation_accuracy']:.1%}"
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    from automl_metafeatures_dida.train import list_checkpoints

    rows = [
        {
            "file": str(path),
            "datasets": len(weights.info.get("trained_on", [])),
            "validation_accuracy": weights.info.get("validation_accuracy"),
            "steps": weights.info.get("steps"),
            "seconds": weights.info.get("seconds"),
        }
        for path, weights in list_checkpoints()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(
            f"{row['file']}: {row['datasets']} datasets, {row['steps']} steps, "
            f"{row['seconds']:.0f} s, held-out accuracy {row['validation_accuracy']:.1%}"
        )
    return 0
