"""``automl ablate`` (run a grid of recipe variants and peers over a suite and seeds) and
``automl compare`` (the report of an ablation's results.csv)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from automl_core.errors import AutoMLError
from automl_core.plugins import load_plugins
from automl_engine.recipe import apply_overrides, read_recipe

# The harness (ablation, compare, report: scipy.stats, matplotlib) is imported by the
# commands that use it, not by every ``automl`` command that builds the parser.


def configure_ablate(ablate_cmd: argparse.ArgumentParser) -> None:
    """The arguments of ``automl ablate``."""
    ablate_cmd.description = (
        "Each cell (variant x task x seed) is a normal run with its own folder; "
        "finished cells are skipped when the same command is run again."
    )
    ablate_cmd.add_argument("recipe", type=Path, help="a recipe file, or a registered name")
    ablate_cmd.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="a recipe key and the values to try, e.g. search.name=smbo,mcts (repeatable: "
        "the grid is every combination)",
    )
    ablate_cmd.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="'LABEL {KEY: VALUE}'",
        help="a named variant of the recipe on its own (not combined with others), e.g. "
        "'+caruana {ensemble: {name: caruana}}' or 'smbo {search.name: smbo}' "
        '(repeatable); "{dataset}" in a value stands for each cell\'s dataset',
    )
    ablate_cmd.add_argument(
        "--base-label",
        default="recipe",
        metavar="LABEL",
        help="the label of the recipe's own variant (default: recipe), e.g. 'smbo:rf' when "
        "the named variants are its alternatives",
    )
    ablate_cmd.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="SYSTEM",
        help="a whole-system baseline (automl plugins --kind system), e.g. flaml, or with "
        "parameters: 'tpot {cv: 3, population_size: 20}' (repeatable)",
    )
    ablate_cmd.add_argument(
        "--suite", required=True, help="a suite name (automl plugins --kind suite) or YAML file"
    )
    ablate_cmd.add_argument(
        "--seeds", type=int, default=3, help="number of seeds, 0..N-1 (default 3)"
    )
    ablate_cmd.add_argument(
        "--seed",
        type=int,
        action="append",
        dest="only_seeds",
        metavar="SEED",
        help="run this seed only, instead of 0..N-1 (repeatable), e.g. --seed 1 to add a "
        "second seed to a grid, or to run it in a folder of its own",
    )
    ablate_cmd.add_argument("--out", type=Path, help="output folder (default: ablations/<name>)")
    ablate_cmd.add_argument(
        "--jobs", type=int, default=1, help="cells run at once, in worker processes (default 1)"
    )
    ablate_cmd.add_argument(
        "--cell-executor",
        help="the executor that runs cells (default: in this process for --jobs 1, "
        "else processes); e.g. dask",
    )
    ablate_cmd.add_argument(
        "--cell-time",
        type=float,
        help="seconds after which a cell running in a worker is stopped and recorded as "
        "failed (default: twice the recipe's wall time plus 120)",
    )
    ablate_cmd.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a value of the base recipe (repeatable)",
    )
    ablate_cmd.add_argument("--quiet", action="store_true", help="no line per cell")


def configure_compare(compare: argparse.ArgumentParser) -> None:
    """The arguments of ``automl compare``."""
    compare.add_argument("results_dir", type=Path, help="an ablation folder (with results.csv)")
    compare.add_argument("--out", type=Path, help="report folder (default: RESULTS_DIR/report)")
    compare.add_argument(
        "--alpha", type=float, default=None, help="significance level (default 0.05)"
    )
    compare.add_argument(
        "--tie",
        type=float,
        default=None,
        help="mean losses closer than this count as equal (default 1e-6; raise it for losses "
        "on a larger scale, e.g. RMSE)",
    )
    compare.add_argument(
        "--failed",
        choices=("drop", "last"),
        default="drop",
        help="a failed cell: drop its task from every statistic (default), or count it as "
        "the task's worst loss (a system that failed lost the task)",
    )


def cmd_ablate(args: argparse.Namespace) -> int:
    from automl_bench.ablation import ablate, parse_vary
    from automl_bench.suites import read_suite, suite_tasks

    plugins = load_plugins()
    base = apply_overrides(read_recipe(args.recipe, plugins), args.overrides)
    if args.seeds < 1:
        raise AutoMLError(f"--seeds must be at least 1, got {args.seeds}")
    if args.only_seeds and min(args.only_seeds) < 0:
        raise AutoMLError(f"--seed must be at least 0, got {min(args.only_seeds)}")
    seeds = sorted(set(args.only_seeds)) if args.only_seeds else list(range(args.seeds))
    tasks = suite_tasks(read_suite(args.suite, plugins), plugins)
    out = args.out or Path("ablations") / str(base.get("name", Path(str(args.recipe)).stem))

    def report(row: dict[str, Any], skipped: bool) -> None:
        if args.quiet:
            return
        loss = row.get("test_loss")
        if loss is None:
            loss = row.get("validation_loss")
        shown = "-" if loss is None else f"{float(loss):.4f}"
        state = "done before" if skipped else f"{float(row.get('seconds') or 0):.1f}s"
        error = f"  {row['error']}" if row.get("error") else ""
        print(
            f"[{row['status']}] {row['variant']} | {row['task']} | seed {row['seed']}: "
            f"loss {shown} ({state}){error}",
            flush=True,
        )

    summary = ablate(
        base,
        out,
        varied=parse_vary(args.vary),
        peers=args.peer,
        named=args.variant,
        base_label=args.base_label,
        tasks=tasks,
        seeds=seeds,
        jobs=args.jobs,
        cell_executor=args.cell_executor,
        cell_time=args.cell_time,
        plugins=plugins,
        on_cell=report,
    )
    print(
        f"ablation folder: {summary.out_dir}: {summary.cells} cells ({summary.skipped} done "
        f"before, {summary.failed} failed), {summary.elapsed:.1f}s; results: {summary.results}"
    )
    if summary.failed:
        print(
            f"{summary.failed} cells failed: see the error column of {summary.results}; "
            "running the same command again retries them",
            file=sys.stderr,
        )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from automl_bench.compare import DEFAULT_ALPHA, DEFAULT_TIE
    from automl_bench.report import write_report

    alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
    tie = DEFAULT_TIE if args.tie is None else args.tie
    path = write_report(args.results_dir, args.out, alpha=alpha, tie=tie, failed=args.failed)
    print(f"report: {path} (and {path.with_suffix('.html').name} beside it)")
    return 0
