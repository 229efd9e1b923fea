"""DeepPipe's Experiment 4: an algorithm added after meta-training, on table lookups.

For each omitted estimator ``E`` (``--omit``), five DeepPipe variants search the test
datasets from the meta-data's 5 ``init_ids`` for ``--trials`` trials (smbo, EI over the pool):

- ``seen``: meta-trained with every estimator (the paper's best row, R3);
- ``new-encoder``: meta-trained without ``E``; at test time ``E``'s encoder starts from random
  weights and is trained with the kernel, every other encoder and the aggregation frozen;
- ``no-encoder``: the same without encoder layers (ℓ_e = 0), the whole network fine-tuned;
- ``dropped``: meta-trained without ``E``, and ``E`` is not offered at test time either;
- ``non-transfer``: no meta-training (random weights, the whole network trained).

``seen`` and ``non-transfer`` do not depend on ``E``: their runs are shared by every ``E``.
Regret is normalised by the whole table's loss range (the ``dropped`` pool's best may be
worse than the table's), and ranks are taken among the five variants per (dataset, seed):
the paper's Table 3 reports the mean rank among five variants per omitted estimator.

    python benchmarks/deeppipe_new_algorithm.py --benchmark tensor-oboe --split fold1 \\
        --train fold2 fold3 fold4 --validation fold0 --omit ExtraTrees GBT Logit \\
        --datasets 10 --seeds 0 --save exp4.json

Runs already in ``--save`` (or in the ``--also`` files, another process's) are skipped, so a
stopped grid resumes and two processes can share it.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from deeppipe_lookup import INITIAL
from scipy.stats import rankdata
from table_lookup import regret_curve

from automl_core.plugins import load_plugins
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run
from automl_metadata.lookup import TableBenchmark

STAGE = "estimator"
VARIANTS = ("seen", "new-encoder", "no-encoder", "dropped", "non-transfer")
#: the variants whose runs do not depend on the omitted estimator
SHARED = ("seen", "non-transfer")
POINTS = (10, 25, 50, 100)


def surrogate_params(variant: str, omitted: str, args: argparse.Namespace) -> dict:
    """The deeppipe surrogate's parameters for ``variant`` with ``omitted`` left out."""
    if variant == "non-transfer":
        return {}
    params: dict = {
        "metadata": args.benchmark,
        "split": args.train,
        "validation": args.validation,
        "preset": args.preset,
        "encoder_layers": 0 if variant == "no-encoder" else 1,
    }
    if variant != "seen":
        params["omit"] = {STAGE: [omitted]}
    if variant in ("new-encoder", "no-encoder"):
        params["new_components"] = {STAGE: [omitted]}
    return params


def one_run(
    variant: str,
    omitted: str,
    dataset: str,
    seed: int,
    benchmarks: dict[str, TableBenchmark],
    args: argparse.Namespace,
    plugins,
    folder: Path,
) -> dict:
    dropped = variant == "dropped"
    benchmark = benchmarks[omitted] if dropped else benchmarks[""]
    task_benchmark: dict = {"name": args.benchmark}
    if dropped:
        task_benchmark["params"] = {"exclude": {STAGE: [omitted]}}
    recipe = parse_recipe(
        {
            "name": f"exp4-{variant}",
            "task": {"benchmark": task_benchmark, "dataset": dataset},
            "search": {
                "strategy": "smbo",
                "params": {"initial_design": INITIAL},
                "surrogate": {
                    "name": "deeppipe",
                    "params": surrogate_params(variant, omitted, args),
                },
            },
            "warmstart": "initial-ids",
            "budget": {"trials": args.trials},
            "seed": seed,
        }
    )
    run_dir = folder / f"{variant}-{omitted}-{dataset}-{seed}"
    started = time.perf_counter()
    run(recipe, run_dir, plugins=plugins, benchmark=benchmark)
    seconds = time.perf_counter() - started
    best, worst = benchmarks[""].loss_range(dataset)
    return {"curve": regret_curve(run_dir, best, worst, args.trials).tolist(), "seconds": seconds}


def key_of(variant: str, omitted: str, dataset: str, seed: int) -> str:
    return f"{variant}|{'' if variant in SHARED else omitted}|{dataset}|{seed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="tensor-oboe")
    parser.add_argument("--split", default="fold1", help="the test datasets")
    parser.add_argument("--train", nargs="+", default=["fold2", "fold3", "fold4"])
    parser.add_argument("--validation", default="fold0")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--omit", nargs="+", default=["ExtraTrees", "GBT", "Logit"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--datasets", type=int, default=10, help="first N (0: all)")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--save", type=Path, required=True, help="results (JSON), resumed from")
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="more results, read")
    parser.add_argument("--report", action="store_true", help="print the tables, run nothing")
    args = parser.parse_args()
    plugins = load_plugins()
    full: TableBenchmark = plugins.create("benchmark", args.benchmark)
    benchmarks = {"": full}
    for omitted in args.omit:
        benchmarks[omitted] = TableBenchmark(full.metadata, full.name, exclude={STAGE: [omitted]})
    datasets = full.datasets(args.split)
    datasets = datasets[: args.datasets] if args.datasets else datasets
    done = json.loads(args.save.read_text()) if args.save.exists() else {}
    print(
        f"# {args.benchmark}/{args.split}: {len(datasets)} datasets, {args.trials} trials, "
        f"seeds {args.seeds}, preset {args.preset}"
    )
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        for omitted in args.omit if not args.report else []:
            for variant in args.variants:
                for seed in args.seeds:
                    for dataset in datasets:
                        key = key_of(variant, omitted, dataset, seed)
                        if key in done or any(key in _read(p) for p in args.also):
                            continue
                        done[key] = one_run(
                            variant, omitted, dataset, seed, benchmarks, args, plugins, Path(tmp)
                        )
                        args.save.write_text(json.dumps(done))
    for path in args.also:
        done.update(_read(path))
    report(done, args, datasets)


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def report(done: dict, args: argparse.Namespace, datasets: list[str]) -> None:
    """Per omitted estimator: the mean rank of each variant among the five at each point and
    averaged over every trial, and the mean normalised regret at the last trial."""
    variants = list(args.variants)
    points = [p for p in POINTS if p <= args.trials]
    header = " | ".join(f"rank t={p}" for p in points)
    final = f"regret t={args.trials}"
    print(f"\n| omitted | variant | s per run | {header} | rank, all trials | {final} |")
    print("|---" * (5 + len(points)) + "|")
    for omitted in args.omit:
        keys = [
            [[key_of(v, omitted, d, s) for d in datasets] for s in args.seeds] for v in variants
        ]
        if not all(k in done for row in keys for cell in row for k in cell):
            print(f"| {omitted} | (incomplete) |")
            continue
        curves = np.array([[[done[k]["curve"] for k in cell] for cell in row] for row in keys])
        ranks = rankdata(curves, axis=0)  # variants x seeds x datasets x trials
        for i, variant in enumerate(variants):
            seconds = np.mean([done[k]["seconds"] for cell in keys[i] for k in cell])
            cells = " | ".join(f"{ranks[i, :, :, p - 1].mean():.3f}" for p in points)
            print(
                f"| {omitted} | {variant} | {seconds:.0f} | {cells} | "
                f"{ranks[i].mean():.3f} | {curves[i, :, :, -1].mean():.4f} |"
            )


if __name__ == "__main__":
    main()
