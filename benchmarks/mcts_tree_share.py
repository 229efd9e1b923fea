"""MCTS at short budgets: how much of a run with a wall time only goes to the tree search.

Each cell is a real ``automl run`` of the default recipe (``default-classification``: mcts
with the rf surrogate over ``autosklearn-classification``, 2 process workers, 30 s per
trial at most, holdout validation on a third of the rows), on a KEEL dataset, with its
``budget.wall_time`` set to the cell's seconds and no trial budget. Mosaic.Vanilla's initial
design holds 72 pipelines; the strategy stops it at a quarter of the trials the time budget
is expected to hold (docs/strategies.md). A cell ``DATASET:SECONDS:vanilla`` runs the full
design instead (``initial_design: 72``), the behaviour before that rule, for comparison.

Prints one row per cell as it finishes: the trials run (those stopped at the wall time
included), the design's (origins ``default`` and ``initial``), the tree's (``mcts-depth*``),
the tree's share, and the best validation loss (1 - balanced accuracy).

    python benchmarks/mcts_tree_share.py --runs german:30 german:60 pima:30 pima:60
    python benchmarks/mcts_tree_share.py --runs german:300 german:60:vanilla
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from automl_core.plugins import Plugins, load_plugins
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run

RECIPE = "default-classification"
DESIGN_ORIGINS = ("default", "initial")
#: Mosaic.Vanilla's design on auto-sklearn's space: 18 algorithms x (default + kappa = 3).
VANILLA = 72


def cell_recipe(plugins: Plugins, dataset: str, seconds: float, vanilla: bool) -> dict[str, Any]:
    """The default recipe on ``keel:<dataset>`` with a wall time only."""
    raw = copy.deepcopy(dict(plugins.get("recipe", RECIPE).obj))
    raw["name"] = f"{RECIPE}-{dataset}-{seconds:g}s"
    raw["task"] = {**raw["task"], "dataset": f"keel:{dataset}"}
    raw["budget"] = {**raw.get("budget", {}), "wall_time": seconds}
    raw["budget"].pop("trials", None)
    if vanilla:
        search = raw["search"]
        search["params"] = {**search.get("params", {}), "initial_design": VANILLA}
    return raw


def measure(
    plugins: Plugins, dataset: str, seconds: float, vanilla: bool, folder: Path
) -> dict[str, Any]:
    """One run; the trials counted by origin from its history."""
    raw = cell_recipe(plugins, dataset, seconds, vanilla)
    run_dir = folder / raw["name"].replace(":", "-") / ("vanilla" if vanilla else "cut")
    started = time.monotonic()
    summary = run(parse_recipe(raw), run_dir, plugins=plugins)
    took = time.monotonic() - started
    with RunHistory(run_dir / HISTORY_FILE) as history:
        origins = [stored.trial.origin for stored in history.trials()]
    tree = sum(origin.startswith("mcts-depth") for origin in origins)
    return {
        "dataset": dataset,
        "budget": seconds,
        "design": "vanilla" if vanilla else "cut",
        "trials": len(origins),
        "design_trials": sum(origin in DESIGN_ORIGINS for origin in origins),
        "tree_trials": tree,
        "share": tree / len(origins) if origins else 0.0,
        "best_loss": summary.best_loss,
        "seconds": took,
    }


def row_text(r: dict[str, Any]) -> str:
    loss = "-" if r["best_loss"] is None else f"{r['best_loss']:.4f}"
    return (
        f"| {r['dataset']} | {r['budget']:g} | {r['design']} | {r['trials']} | "
        f"{r['design_trials']} | {r['tree_trials']} | {r['share']:.0%} | {loss} | "
        f"{r['seconds']:.0f} |"
    )


def parse_cell(text: str) -> tuple[str, float, bool]:
    """``german:60`` or ``german:60:vanilla``."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "vanilla"):
        raise argparse.ArgumentTypeError(f"expected DATASET:SECONDS[:vanilla], got {text!r}")
    return parts[0], float(parts[1]), len(parts) == 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        nargs="+",
        type=parse_cell,
        default=[parse_cell(c) for c in ("german:30", "german:60", "pima:30", "pima:60")],
        help="cells DATASET:SECONDS[:vanilla], run in this order",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"recipe {RECIPE}, wall time only"
    )
    print("\n| dataset | budget s | design | trials | design trials | tree trials | "
          "tree share | best val. loss | run s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    plugins = load_plugins()
    with tempfile.TemporaryDirectory() as tmp:
        for dataset, seconds, vanilla in args.runs:
            print(row_text(measure(plugins, dataset, seconds, vanilla, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
