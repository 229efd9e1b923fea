"""DeepPipe's costs on a meta-dataset: meta-training per preset, and one BO step (fit on the
observations, then score the whole pool) at 25, 50 and 100 observations.

    python benchmarks/deeppipe_timing.py --metadata pmf --presets quick default

Meta-training results are cached (``automl deeppipe list``): a preset trained before is read
back, and its stored training time is reported. A step is timed for the non-transfer model
and, per preset, for kernel-only and whole-network fine-tuning, on one dataset of the
meta-data's test split, with torch on ``--threads`` threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from automl_core.plugins import load_plugins
from automl_engine.metastore import resolve_metadata
from automl_surrogate_deeppipe.metatrain import (
    PRESETS,
    Architecture,
    checkpoint_dir,
    meta_train,
)
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate

SIZES = (25, 50, 100)


def step_seconds(
    surrogate: DeepPipeSurrogate, pool, row: np.ndarray, seed: int, repeats: int
) -> list[float]:
    """Seconds of fit + predict over the offered pool, at each of :data:`SIZES` (the median
    of ``repeats`` steps on the same observations, each scoring the pool less the rows
    proposed so far, as consecutive steps of a search do)."""
    observed = np.flatnonzero(np.isfinite(row))
    order = np.random.default_rng(seed).permutation(observed)
    times = []
    for n in SIZES:
        measured = []
        for repeat in range(repeats):
            # as a search scores a pool (automl_spaces.acquisition.rank_pool): the rows offered
            # and not proposed yet, one fewer at each step (a new array, other contents)
            offered = pool.encodings[np.setdiff1d(observed, order[: n + repeat])]
            started = time.perf_counter()
            surrogate.fit(pool.encodings[order[:n]], row[order[:n]])
            surrogate.predict(offered)
            measured.append(time.perf_counter() - started)
        times.append(float(np.median(measured)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", default="pmf")
    parser.add_argument("--presets", nargs="+", default=["quick", "default"])
    parser.add_argument("--threads", type=int, default=1, help="torch threads per BO step")
    parser.add_argument(
        "--train-threads", type=int, default=None, help="torch threads to meta-train"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="steps per cell (median)")
    args = parser.parse_args()
    metadata = resolve_metadata(args.metadata, None, load_plugins())
    pool = metadata.pool
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"# {args.metadata}: {len(metadata.datasets)} datasets x {len(pool.encodings)} "
        f"pipelines; cache {checkpoint_dir()}"
    )
    print("\n| preset | epochs x batch | epochs run | best epoch | validation NLL | minutes |")
    print("|---|---|---|---|---|---|")
    for preset in args.presets:
        settings = PRESETS[preset]
        checkpoint = meta_train(
            metadata, pool, settings=preset, architecture=Architecture(), threads=args.train_threads
        )
        info = checkpoint.info
        print(
            f"| {preset} | {settings.epochs} x {settings.batch} | {info['epochs_run']} | "
            f"{info['best_epoch']} | {info['validation_nll']:.4f} | {info['seconds'] / 60:.1f} |",
            flush=True,
        )
    test = metadata.splits.get("test") or list(metadata.datasets)
    row = metadata.performance[metadata.row(test[0])]
    print(
        f"\none BO step (fit, then predict {int(np.isfinite(row).sum())} pipelines), "
        f"seconds, {args.threads} thread(s)"
    )
    print("\n| model | " + " | ".join(f"n={n}" for n in SIZES) + " |")
    print("|---" * (1 + len(SIZES)) + "|")
    variants = [("non-transfer", {})]
    variants += [
        (f"{p}, kernel only", {"metadata": metadata, "preset": p, "fine_tune": "kernel"})
        for p in args.presets
    ]
    variants += [
        (f"{p}, whole network", {"metadata": metadata, "preset": p, "fine_tune": "all"})
        for p in args.presets
    ]
    for name, params in variants:
        surrogate = DeepPipeSurrogate(threads=args.threads, seed=args.seed, **params)
        surrogate.prepare(pool.columns())
        surrogate.prepare_space(pool)
        times = step_seconds(surrogate, pool, row, args.seed, args.repeats)
        print(f"| {name} | " + " | ".join(f"{t:.2f}" for t in times) + " |", flush=True)


if __name__ == "__main__":
    main()
