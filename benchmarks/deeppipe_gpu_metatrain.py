"""DeepPipe's meta-training on a GPU within a wall-clock budget: how long an epoch of the
paper's settings takes (batch 1,000), what the paper's 10,000 epochs would take, and a
checkpoint trained as long as the budget allows.

    python benchmarks/deeppipe_gpu_metatrain.py --metadata tensor-oboe \
        --split fold2 fold3 fold4 --validation fold1 --minutes 7 --out gpu.pt

1. **Probe**: ``--probe-epochs`` epochs of the ``paper`` preset (batch 1,000, lr 1e-4); the
   median epoch after the first (which pays CUDA's start) gives the cost of an epoch.
2. **Train**: the rest of the budget on a complete cosine schedule: as many epochs of batch
   ``--batch`` at ``--lr`` as the probe says fit (the paper's 10,000 do not fit a short lease).

``--metadata`` is a source name or a meta-data folder, as any component names meta-data
(``automl_engine.metastore.resolve_metadata``). The checkpoint is written to ``--out``
(``checkpoint: PATH`` in a recipe loads it) with a JSON summary beside it.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_engine.metastore import resolve_metadata
from automl_surrogate_deeppipe.metatrain import (
    PRESETS,
    Architecture,
    MetaTraining,
    meta_train,
    training_device,
)


def timed_epochs(
    metadata: MetaData, settings: MetaTraining, args: argparse.Namespace, device: torch.device
) -> tuple[list[float], dict]:
    """Seconds of each epoch (from the progress callback) and the checkpoint's info."""
    stamps = [time.monotonic()]

    def progress(epoch: int, train: float, validation: float) -> None:
        stamps.append(time.monotonic())
        if epoch == 1 or epoch % args.every == 0 or epoch == settings.epochs:
            print(
                f"  epoch {epoch}: train NLL {train:.4f}, validation NLL {validation:.4f}, "
                f"{stamps[-1] - stamps[0]:.0f} s",
                flush=True,
            )

    assert metadata.pool is not None
    checkpoint = meta_train(
        metadata,
        metadata.pool,
        split=args.split if len(args.split) > 1 else args.split[0],
        validation=args.validation,
        architecture=Architecture(),
        settings=settings,
        seed=args.seed,
        cache=False,
        progress=progress,
        device=str(device),
    )
    return list(np.diff(stamps)), checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", required=True)
    parser.add_argument("--split", nargs="+", default=["train"])
    parser.add_argument("--validation")
    parser.add_argument("--minutes", type=float, default=7.0, help="budget of both phases")
    parser.add_argument("--probe-epochs", type=int, default=3)
    parser.add_argument("--probe-batch", type=int, default=PRESETS["paper"].batch)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", help="default: the GPU when torch sees one")
    parser.add_argument("--every", type=int, default=10, help="print every N epochs")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    started = time.monotonic()
    device = training_device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    print(f"# {name}, torch {torch.__version__}, Python {platform.python_version()}")
    metadata = resolve_metadata(args.metadata, None, load_plugins())
    print(f"# {args.metadata}: train {args.split}, validation {args.validation}", flush=True)

    paper = PRESETS["paper"]
    probe = MetaTraining(epochs=args.probe_epochs, batch=args.probe_batch, lr=paper.lr)
    print(f"probe: {probe}", flush=True)
    seconds, probe_checkpoint = timed_epochs(metadata, probe, args, device)
    per_epoch = float(np.median(seconds[1:] if len(seconds) > 1 else seconds))
    info = probe_checkpoint.info
    print(
        f"probe: {info['train_tasks']} training and {info['validation_tasks']} validation "
        f"tasks; epochs took {', '.join(f'{s:.2f}' for s in seconds)} s; the paper's "
        f"{paper.epochs} epochs would take {paper.epochs * per_epoch / 3600:.1f} h here",
        flush=True,
    )

    left = args.minutes * 60 - (time.monotonic() - started)
    epochs = max(1, int(0.9 * left / per_epoch))
    settings = MetaTraining(epochs=epochs, batch=args.batch, lr=args.lr, max_seconds=left)
    print(f"train: {settings}", flush=True)
    _, checkpoint = timed_epochs(metadata, settings, args, device)
    checkpoint.info["preset"] = f"gpu: {epochs} epochs x {args.batch}, lr {args.lr}"
    checkpoint.save(args.out)
    info = checkpoint.info
    summary = {
        "device": info["device"],
        "torch": torch.__version__,
        "train_tasks": info["train_tasks"],
        "validation_tasks": info["validation_tasks"],
        "probe_epoch_seconds": seconds,
        "paper_hours_estimate": paper.epochs * per_epoch / 3600,
        "settings": info["settings"],
        "epochs_run": info["epochs_run"],
        "best_epoch": info["best_epoch"],
        "validation_nll": info["validation_nll"],
        "seconds": info["seconds"],
        "curve": info["curve"],
    }
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    print(
        f"trained: {info['epochs_run']} epochs in {info['seconds']:.0f} s, best validation NLL "
        f"{info['validation_nll']:.4f} at epoch {info['best_epoch']} -> {args.out}"
    )


if __name__ == "__main__":
    main()
