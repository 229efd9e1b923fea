"""How long refitting a trial's pipeline on all training rows takes, against its estimate.

A run on data stops its search early enough to refit the best trial on all the training rows
before the wall time ends (:func:`automl_engine.finishing.refit_estimate`). This measures the
ratio ``refit seconds / linear estimate`` for random pipelines of the default classification
space, where the linear estimate is the fit's time on the holdout's training rows (two
thirds), scaled by the rows (x1.5). The fit is timed both on the wall clock and in CPU
seconds (single-threaded, as in a ``processes`` worker, and optionally beside a CPU-bound
process): the CPU seconds are what the busy machine does not inflate.

    python benchmarks/refit_estimate.py --rows 20000 --configs 40

A ratio above 1 is a refit slower than linear in the rows (kernel methods, nearest
neighbours); below 1, faster (fixed costs, early stopping on more rows).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from automl_core.space import BuildContext
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import classification_space


def timed_fit(model, X: pd.DataFrame, y: np.ndarray) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of fitting a clone of ``model``."""
    model = clone(model)
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(config: dict, rows: int, seed: int, limit: float, out) -> None:
    """In a process of its own: fit ``config`` on two thirds of the rows, then on all; the
    refit is skipped when the first fit took over ``limit`` seconds."""
    X, y = make_classification(rows, 20, n_informative=10, random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(20)])
    train = np.random.default_rng(seed).permutation(rows)[: rows * 2 // 3]
    model = classification_space(list(COMPONENTS)).build(
        config, BuildContext("classification", seed)
    )
    with threadpool_limits(1):
        wall, cpu = timed_fit(model, frame.iloc[train], y[train])
        refit = timed_fit(model, frame, y)[0] if wall <= limit else float("nan")
    out.put((wall, cpu, refit))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--configs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hog", action="store_true", help="a CPU-bound process beside the fits")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds a fit may take")
    args = parser.parse_args()
    space = classification_space(list(COMPONENTS))
    configs = space.sample(np.random.default_rng(args.seed), args.configs)
    hog = [subprocess.Popen([sys.executable, "-c", "while True: pass"])] if args.hog else []
    fitted = args.rows * 2 // 3
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# {args.rows} rows x 20, fit on {fitted}, refit on all; hog: {args.hog}")
    print("| classifier | fit wall s | fit CPU s | refit s | refit / (CPU x rows) |")
    print("|---|---|---|---|---|")
    ratios: list[float] = []
    scale = args.rows / fitted
    try:
        for config in configs:
            name = config.get("classifier:__choice__", "?")
            out: multiprocessing.Queue = multiprocessing.Queue()
            worker = multiprocessing.Process(
                target=measure, args=(config, args.rows, args.seed, args.limit, out)
            )
            worker.start()
            worker.join(3.5 * args.limit)
            if worker.is_alive():
                worker.kill()
                print(f"| {name} | over {args.limit:g} | | | |", flush=True)
                continue
            wall, cpu, refit = out.get()
            ratio = refit / max(cpu * scale, 1e-3)
            if cpu * scale >= 0.5 and np.isfinite(refit):  # sub-second fits: fixed costs
                ratios.append(ratio)
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {refit:.2f} | {ratio:.2f} |", flush=True)
    finally:
        for process in hog:
            process.kill()
    quantiles = np.quantile(ratios, [0.1, 0.5, 0.75, 0.9, 1.0]) if ratios else []
    print(f"\nfits of 0.5 s or more (estimated): {len(ratios)}; ratio quantiles 10/50/75/90/100 %:")
    print(" ".join(f"{q:.2f}" for q in quantiles))


if __name__ == "__main__":
    main()
