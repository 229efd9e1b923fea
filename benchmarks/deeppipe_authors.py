"""The authors' meta-trained DeepPipe weights (``deeppipe-api`` 0.1.1) against our own
meta-training, on Tensor-OBOE: the GP's negative log likelihood per observation, before any
fine-tuning, on every fold's datasets.

Ours are the ``default`` preset, for our default architecture and for the authors' shape
(ℓ_e = 0, three hidden layers), meta-trained as the authors' ``meta_train.py`` splits
the folds (its ``pretrain_seed_id`` 0): training on folds 2-4, validation on fold 0, test on
fold 1. Which datasets the authors' checkpoints saw is not recorded in the wheel; if they
were trained by that script as shipped, folds 2-4 too. Each dataset's NLL is measured on a
seeded batch of ``--batch`` of its observed pipelines, losses standardised per dataset (the
authors' accuracy-scale GP converted to that scale, :mod:`automl_surrogate_deeppipe.authors`).

    python benchmarks/deeppipe_authors.py --batch 250          # builds our checkpoints once

The search comparison is ``benchmarks/deeppipe_lookup.py`` with the methods
``smbo:deeppipe+checkpoint=authors:DeepPipeTOboe2`` and
``smbo:deeppipe+metadata=tensor-oboe+split=[fold2,fold3,fold4]+validation=fold0``.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

import numpy as np
import torch

from automl_core.plugins import load_plugins
from automl_engine.metastore import resolve_metadata
from automl_spaces.acquisition import standardise
from automl_spaces.component_rows import numeric_ranges
from automl_surrogate_deeppipe.authors import (
    ACCURACY_TARGETS,
    authors_checkpoint,
    kernel_on_standardised_losses,
    structure_layout,
    structure_selector,
)
from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.metatrain import Architecture, Checkpoint, meta_train
from automl_surrogate_deeppipe.model import (
    DTYPE,
    NUMERICAL_ERRORS,
    negative_log_likelihood,
    pack,
    torch_threads,
)

FOLDS = [f"fold{k}" for k in range(5)]


def dataset_nll(checkpoint, layout, packed, losses, indices) -> float:
    """The NLL per observation of one dataset's batch under ``checkpoint``'s GP."""
    model = checkpoint.architecture.build(layout, seed=0)
    model.load_state_dict(checkpoint.state)
    targets, mean, scale = standardise(losses)
    if checkpoint.info.get("targets") == ACCURACY_TARGETS:
        kernel_on_standardised_losses(model, mean, scale)
    with torch.no_grad():
        try:
            value = negative_log_likelihood(
                model, packed[torch.as_tensor(indices)], torch.as_tensor(targets, dtype=DTYPE)
            )
        except NUMERICAL_ERRORS:
            return math.inf
    return float(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--preset", default="default")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--also", nargs="*", default=[], type=Path, help="more checkpoint files, as rows"
    )
    args = parser.parse_args()
    metadata = resolve_metadata("tensor-oboe", None, load_plugins())
    pool = metadata.pool
    encodings = np.asarray(pool.encodings, dtype=float)
    print(f"# tensor-oboe, batch {args.batch}; {platform.processor() or platform.machine()}")
    with torch_threads(args.threads):
        candidates = {}
        for label, architecture in (
            ("ours (default: ℓ_e 1, depth 4)", Architecture()),
            ("ours (the authors' shape: ℓ_e 0, depth 3)", Architecture(0, 8, 20, depth=3)),
        ):
            started = time.perf_counter()
            checkpoint = meta_train(
                metadata,
                pool,
                split=["fold2", "fold3", "fold4"],
                validation="fold0",
                architecture=architecture,
                settings=args.preset,
                threads=args.threads,
            )
            seconds = time.perf_counter() - started
            print(f"# {label}: {checkpoint.info.get('key')} (this call {seconds:.0f} s)")
            candidates[f"{label}, {args.preset}, folds 2-4"] = checkpoint
        for name in ("DeepPipeTOboe2", "DeepPipeTOboe"):
            candidates[f"authors' {name}"] = authors_checkpoint(name, metadata)
        for path in args.also:
            checkpoint = Checkpoint.load(path)
            info = checkpoint.info
            candidates[
                f"{path.stem} ({info.get('epochs_run')} epochs, split {info.get('split')})"
            ] = checkpoint
        inputs = {}
        for label, checkpoint in candidates.items():
            structure = checkpoint.info.get("structure")
            if structure:
                layout = structure_layout(list(pool.columns()), structure)
                selector = structure_selector(pool, structure)
            else:
                layout = Layout.of(list(pool.columns()), pool.blocks(), numeric_ranges(pool))
                selector = Selector(pool)
            inputs[label] = (layout, pack(layout.transform(encodings), selector(encodings)))
        rng = np.random.default_rng(0)
        print("| checkpoint | " + " | ".join(FOLDS) + " |")
        print("|---|" + "---|" * len(FOLDS))
        rows: dict[str, list[str]] = {label: [] for label in candidates}
        for fold in FOLDS:
            batches = []
            for name in metadata.splits[fold]:
                losses = metadata.performance[metadata.row(name)]
                seen = np.flatnonzero(np.isfinite(losses))
                if len(seen) < 10 or np.ptp(losses[seen]) == 0:
                    continue
                chosen = rng.choice(seen, min(args.batch, len(seen)), replace=False)
                batches.append((chosen, losses[chosen]))
            for label, checkpoint in candidates.items():
                layout, packed = inputs[label]
                values = [dataset_nll(checkpoint, layout, packed, y, i) for i, y in batches]
                finite = np.asarray([v for v in values if math.isfinite(v)])
                rows[label].append(
                    f"{finite.mean():.3f} ± {finite.std(ddof=1) / np.sqrt(len(finite)):.3f}"
                    + (
                        f" ({len(values) - len(finite)} failed)"
                        if len(finite) < len(values)
                        else ""
                    )
                )
        for label, cells in rows.items():
            print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
