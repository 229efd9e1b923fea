"""Meta-training (the paper's Algorithm 1) and the checkpoints it leaves.

Every epoch takes one Adam step per meta-training task, in a random order, on the GP's
negative log marginal likelihood of a random batch of that task's observations (pipelines
of the meta-data's pool and their losses); the learning rate is cosine-annealed to
``lr_min`` over the epochs (the authors' code). After every epoch the NLL on the
meta-validation tasks (a fixed batch each) is measured and the weights with the best one are
kept ("early convergence").

A :class:`Checkpoint` is the network's and the kernel's weights with what they were trained
on. It is saved with ``torch.save`` and loaded with ``weights_only=True`` (tensors, numbers,
strings: no code runs on load), and cached under ``<cache>/deeppipe/`` by a key of the
meta-data's fingerprint, the split and every training setting, like the portfolio.
"""

from __future__ import annotations

import math
import pickle
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from automl_core.contracts import MetaData
from automl_core.space import VectorSpace
from automl_engine.cache import cache_dir, content_key, write_atomically
from automl_engine.metastore import metadata_fingerprint
from automl_spaces.acquisition import standardise
from automl_spaces.component_rows import numeric_ranges
from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.model import (
    DTYPE,
    NETWORK_DTYPE,
    NUMERICAL_ERRORS,
    DeepKernelGP,
    negative_log_likelihood,
    pack,
    torch_threads,
)
from automl_surrogate_deeppipe.network import DEPTH, PipelineEmbedder

#: Bumped when a change makes older checkpoints wrong to load.
FORMAT = 2  # 2: the network in float32
CACHE_FOLDER = "deeppipe"


@dataclass(frozen=True)
class Architecture:
    """The network's shape: ℓ_e encoder layers, width factor F, embedding size Z."""

    encoder_layers: int = 1
    width_factor: int = 8
    latent: int = 20
    #: ℓ_e + ℓ_a, the layers before the projection to Z (the paper's 4; the authors' code
    #: counts the projection in, so its "4 aggregated layers" is our depth 3)
    depth: int = DEPTH

    def build(self, layout: Layout, seed: int) -> DeepKernelGP:
        """A freshly initialised deep-kernel GP (the initialisation drawn from ``seed``)."""
        torch.manual_seed(seed)
        embedder = PipelineEmbedder(
            layout, self.encoder_layers, self.width_factor, self.latent, self.depth
        )
        model = DeepKernelGP(embedder).to(DTYPE)
        model.embedder.to(NETWORK_DTYPE)
        return model


@dataclass(frozen=True)
class MetaTraining:
    """Algorithm 1's settings."""

    epochs: int
    batch: int
    lr: float
    lr_min: float = 1e-7
    #: stop after this many seconds, keeping the best weights so far (None: all epochs)
    max_seconds: float | None = None


#: ``paper``: the paper's settings (10,000 epochs of batches of 1,000, lr 1e-4), for a GPU;
#: ``default``: what meta-trains on PMF's 449 training tasks in under 30 minutes on 2 CPU
#: cores (docs/benchmarks.md has the measured time and validation NLL of each); ``quick``:
#: a minute or two, for trying things out.
PRESETS: dict[str, MetaTraining] = {
    "paper": MetaTraining(epochs=10_000, batch=1_000, lr=1e-4),
    "default": MetaTraining(epochs=40, batch=250, lr=1e-3, max_seconds=1_800.0),
    "quick": MetaTraining(epochs=5, batch=100, lr=1e-3),
}


@dataclass
class Checkpoint:
    """Meta-trained weights and what they were trained on."""

    layout: dict[str, Any]
    architecture: Architecture
    state: dict[str, torch.Tensor]
    info: dict[str, Any] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        document = {
            "format": FORMAT,
            "layout": self.layout,
            "architecture": asdict(self.architecture),
            "state": self.state,
            "info": self.info,
        }
        write_atomically(Path(path), lambda tmp: torch.save(document, tmp))

    @classmethod
    def load(cls, path: Path) -> Checkpoint:
        """A saved checkpoint; ValueError (naming the file) for one that is not."""
        try:
            document = torch.load(Path(path), weights_only=True, map_location="cpu")
            if document.get("format") != FORMAT:
                raise ValueError(f"format {document.get('format')!r}, expected {FORMAT}")
            return cls(
                layout=document["layout"],
                architecture=Architecture(**document["architecture"]),
                state=document["state"],
                info=document.get("info", {}),
            )
        except (
            OSError,
            RuntimeError,
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            pickle.UnpicklingError,
            EOFError,
        ) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ValueError(f"deeppipe: {path} is not a usable checkpoint: {reason}") from error


# -- the meta-data's tasks ------------------------------------------------------------------------
Task = tuple[np.ndarray, np.ndarray]  # (candidate indices into the pool, their losses)


def tasks_of(
    metadata: MetaData, datasets: Sequence[str], keep: np.ndarray | None = None
) -> list[Task]:
    """Each dataset's observed candidates and losses (candidates outside ``keep`` dropped)."""
    tasks = []
    for name in datasets:
        losses = np.asarray(metadata.performance[metadata.row(name)], dtype=float)
        observed = np.isfinite(losses) if keep is None else np.isfinite(losses) & keep
        indices = np.flatnonzero(observed)
        if len(indices) >= 2:
            tasks.append((indices, losses[indices]))
    return tasks


def split_datasets(
    metadata: MetaData, split: str | Sequence[str], validation: str | None, seed: int
) -> tuple[list[str], list[str]]:
    """(meta-training, meta-validation) datasets. ``split`` names one split or several
    (``train`` on meta-data without splits: all its datasets); ``validation`` a split;
    without one, the meta-data's ``validation`` split if there is one and ``split`` is not
    it, else a seeded tenth of the training datasets."""
    names = [split] if isinstance(split, str) else list(split)
    if not metadata.splits and names == ["train"] and validation is None:
        return _hold_out(list(metadata.datasets), seed)
    for name in [*names, *([validation] if validation else [])]:
        if name not in metadata.splits:
            raise ValueError(
                f"deeppipe: the meta-data has no split {name!r} (it has: "
                f"{', '.join(metadata.splits) or 'none'})"
            )
    train = [d for name in names for d in metadata.splits[name]]
    if validation is None and "validation" in metadata.splits and "validation" not in names:
        validation = "validation"
    if validation is not None:
        held = list(metadata.splits[validation])
        return [d for d in train if d not in set(held)], held
    return _hold_out(train, seed)


def _hold_out(train: list[str], seed: int) -> tuple[list[str], list[str]]:
    """A seeded tenth of ``train`` (at least one, when there are two) held out to validate."""
    order = np.random.default_rng(seed).permutation(len(train))
    n_held = max(1, len(train) // 10) if len(train) > 1 else 0
    held = [train[i] for i in sorted(order[:n_held])]
    return [d for d in train if d not in set(held)], held


def without_components(
    space: VectorSpace, selectors: np.ndarray, omit: Mapping[str, Sequence[str]] | None
) -> np.ndarray | None:
    """The candidates that use none of the ``omit`` components ({stage: [names]}): what
    meta-training sees when an algorithm is left out (the paper's Experiment 4)."""
    if not omit:
        return None
    blocks = space.blocks()
    keep = np.ones(len(selectors), dtype=bool)
    for stage_name, names in omit.items():
        column = [s.name for s in blocks.stages].index(stage_name)
        stage = blocks.stage(stage_name)
        for name in names:
            keep &= selectors[:, column] != stage.position(name)
    return keep


def candidate_rows(metadata: MetaData, space: VectorSpace) -> np.ndarray:
    """The encoded rows of the meta-data's configurations, in its column order: a pool's
    table, or, for meta-data built by runs over a pipeline space (configurations as
    parameter values, no pool), the configurations encoded by ``space``. A configuration
    that ``space`` does not hold is refused, naming it: the meta-data is of another space."""
    pool = space.as_pool()
    name = metadata.info.get("source") or metadata.space or "the meta-data"
    if not uses_run_space(metadata):
        if pool is None:
            raise ValueError(f"deeppipe: {name!r} is meta-data over a pool of pipelines")
        return np.asarray(pool.encodings, dtype=float)
    if pool is not None:
        raise ValueError(
            f"deeppipe: {name!r} is meta-data of runs over a pipeline space "
            f"({metadata.space or 'unnamed'}); this search is over a pool"
        )
    try:
        return np.asarray(space.encode(metadata.configs), dtype=float)
    except Exception as error:  # ConfigSpace raises several kinds for a foreign value
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ValueError(
            f"deeppipe: {name!r} has configurations this space does not hold ({reason}): "
            "it is meta-data over another space"
        ) from None


def uses_run_space(metadata: MetaData) -> bool:
    """Meta-data without a pool: its configurations are parameter values of a pipeline space,
    and meta-training embeds them with the run's own space (:func:`candidate_rows`)."""
    return metadata.pool is None


# -- training ---------------------------------------------------------------------------------
def meta_train(
    metadata: MetaData,
    space: VectorSpace,
    *,
    split: str | Sequence[str] = "train",
    validation: str | None = None,
    architecture: Architecture | None = None,
    settings: MetaTraining | str = "default",
    seed: int = 0,
    omit: Mapping[str, Sequence[str]] | None = None,
    exclude: Sequence[str] = (),
    threads: int | None = None,
    cache: bool = True,
    progress: Callable[[int, float, float], None] | None = None,
    device: str | None = None,
) -> Checkpoint:
    """Algorithm 1 on ``metadata``'s pool (``space``: the pool or a restriction of it),
    leaving the ``exclude`` datasets out of both meta-training and meta-validation; with
    ``cache``, the checkpoint of the same training from the cache when there is one, and the
    new one stored there (a cache that cannot be written costs a warning, not the training).

    ``device``: where torch trains (None: the GPU when torch sees one, else the CPU). It is
    not part of the cache key: the weights differ in rounding only, and a checkpoint trained
    on a GPU is saved on, and used from, the CPU."""
    architecture = architecture or Architecture()
    where = training_device(device)
    resolved = PRESETS[settings] if isinstance(settings, str) else settings
    key = training_key(
        metadata,
        space,
        split=split,
        validation=validation,
        architecture=architecture,
        settings=resolved,
        seed=seed,
        omit=omit,
        exclude=exclude,
    )
    train_names, validation_names = split_datasets(metadata, split, validation, seed)
    exclude = _used(exclude, train_names, validation_names)
    path = checkpoint_dir() / f"{key}.pt"
    if cache and path.exists():
        try:
            return Checkpoint.load(path)
        except ValueError:
            pass  # trained and written again below
    left_out = set(exclude)
    checkpoint = _algorithm_1(
        metadata,
        space,
        [d for d in train_names if d not in left_out],
        [d for d in validation_names if d not in left_out],
        architecture,
        resolved,
        seed,
        omit,
        threads,
        progress,
        where,
    )
    checkpoint.info.update(
        metadata=str(metadata.info.get("source", "")),
        fingerprint=metadata_fingerprint(metadata),
        split=split if isinstance(split, str) else list(split),
        seed=seed,
        omit={k: list(v) for k, v in (omit or {}).items()},
        exclude=exclude,
        key=key,
        # the datasets whose losses shaped the weights: a search on one of them is not a
        # fair measurement (the surrogate warns)
        trained_on=sorted({*train_names, *validation_names} - left_out),
    )
    if isinstance(settings, str):
        checkpoint.info["preset"] = settings
    if cache:
        try:
            checkpoint.save(path)
        except OSError as error:
            warnings.warn(
                f"deeppipe: could not cache the checkpoint in {path} ({error})", stacklevel=2
            )
    return checkpoint


def training_key(
    metadata: MetaData,
    space: VectorSpace,
    *,
    split: str | Sequence[str] = "train",
    validation: str | None = None,
    architecture: Architecture | None = None,
    settings: MetaTraining | str = "default",
    seed: int = 0,
    omit: Mapping[str, Sequence[str]] | None = None,
    exclude: Sequence[str] = (),
) -> str:
    """The cache key :func:`meta_train` would store this training under: whether a run would
    train before its first trial (no such file in the cache) or load the weights at once."""
    resolved = PRESETS[settings] if isinstance(settings, str) else settings
    train_names, validation_names = split_datasets(metadata, split, validation, seed)
    return cache_key(
        metadata,
        split,
        validation,
        architecture or Architecture(),
        resolved,
        seed,
        omit,
        _used(exclude, train_names, validation_names),
        _space_layout(metadata, space),
    )


def _used(exclude: Sequence[str], train: list[str], validation: list[str]) -> list[str]:
    """The left-out datasets that training would use: a test dataset left out changes
    nothing, and must not make a checkpoint of its own."""
    return sorted(set(exclude) & {*train, *validation})


def _space_layout(metadata: MetaData, space: VectorSpace) -> dict | None:
    """For meta-data that the run's space embeds (no pool), that space's layout: a space with
    another component (CatBoost installed or not) makes other weights."""
    if not uses_run_space(metadata):
        return None
    return Layout.of(space.columns(), space.blocks(), numeric_ranges(space)).signature()


def training_device(device: str | None) -> torch.device:
    """``device`` as torch names it (None: the GPU when torch sees one, else the CPU); a
    ValueError for a name torch does not know or a GPU it does not see."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        where = torch.device(device)
    except RuntimeError as error:
        reason = (str(error).strip().splitlines() or ["unknown device"])[0]
        raise ValueError(f"deeppipe: device {device!r}: {reason}") from None
    if where.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"deeppipe: device {device!r}: torch sees no GPU here")
    return where


def _algorithm_1(
    metadata: MetaData,
    space: VectorSpace,
    train_names: list[str],
    validation_names: list[str],
    architecture: Architecture,
    settings: MetaTraining,
    seed: int,
    omit: Mapping[str, Sequence[str]] | None,
    threads: int | None,
    progress: Callable[[int, float, float], None] | None,
    device: torch.device,
) -> Checkpoint:
    """The training loop: one Adam step per task per epoch, the best validation NLL kept
    (its weights copied to the CPU)."""
    layout = Layout.of(space.columns(), space.blocks(), numeric_ranges(space))
    selector = Selector(space)
    rows = candidate_rows(metadata, space)
    selectors = selector(rows)
    packed_pool = pack(layout.transform(rows), selectors).to(device)
    keep = without_components(space, selectors, omit)
    train = tasks_of(metadata, train_names, keep)
    held = tasks_of(metadata, validation_names, keep)
    if not train:
        raise ValueError("deeppipe: no meta-training task has two observations or more")
    rng = np.random.default_rng(seed)
    fixed = [
        _batch(task, settings.batch, np.random.default_rng(seed + 1 + i))
        for i, task in enumerate(held)
    ]
    started = time.monotonic()
    with torch_threads(threads):
        model = architecture.build(layout, seed).to(device)
        optimiser = torch.optim.Adam(model.parameters(), lr=settings.lr)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimiser, T_max=max(1, settings.epochs), eta_min=settings.lr_min
        )
        best = _validation_nll(model, packed_pool, fixed) if fixed else math.inf
        best_state = _on_cpu(model)
        best_epoch, curve, epochs_run, skipped = 0, [], 0, 0
        for epoch in range(1, settings.epochs + 1):
            total = 0.0
            for t in rng.permutation(len(train)):
                indices, losses = _batch(train[t], settings.batch, rng)
                optimiser.zero_grad()
                try:
                    loss = _task_nll(model, packed_pool, indices, losses)
                    loss.backward()
                except NUMERICAL_ERRORS:
                    skipped += 1
                    continue
                optimiser.step()
                total += float(loss.item())
            schedule.step()
            epochs_run = epoch
            score = _validation_nll(model, packed_pool, fixed) if fixed else total / len(train)
            curve.append([epoch, total / len(train), score])
            if score < best:
                best, best_epoch = score, epoch
                best_state = _on_cpu(model)
            if progress is not None:
                progress(epoch, total / len(train), score)
            if (
                settings.max_seconds is not None
                and time.monotonic() - started > settings.max_seconds
            ):
                break
    info = {
        "train_tasks": len(train),
        "validation_tasks": len(held),
        "settings": asdict(settings),
        "epochs_run": epochs_run,
        "best_epoch": best_epoch,
        "validation_nll": best,
        "seconds": time.monotonic() - started,
        "skipped_steps": skipped,
        "curve": curve,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else device.type,
    }
    return Checkpoint(layout.signature(), architecture, best_state, info)


def _on_cpu(model: DeepKernelGP) -> dict[str, torch.Tensor]:
    """A copy of the model's weights on the CPU."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def _batch(task: Task, size: int, rng: np.random.Generator) -> Task:
    indices, losses = task
    if len(indices) <= size:
        return indices, losses
    keep = rng.choice(len(indices), size, replace=False)
    return indices[keep], losses[keep]


def _task_nll(
    model: DeepKernelGP, packed: torch.Tensor, indices: np.ndarray, losses: np.ndarray
) -> torch.Tensor:
    targets, _, _ = standardise(losses)
    rows = packed[torch.as_tensor(indices, device=packed.device)]
    return negative_log_likelihood(
        model, rows, torch.as_tensor(targets, dtype=DTYPE, device=packed.device)
    )


def _validation_nll(model: DeepKernelGP, packed: torch.Tensor, tasks: list[Task]) -> float:
    """The mean NLL over the meta-validation tasks' fixed batches."""
    values = []
    with torch.no_grad():
        for indices, losses in tasks:
            try:
                values.append(float(_task_nll(model, packed, indices, losses).item()))
            except NUMERICAL_ERRORS:
                values.append(math.inf)
    return float(np.mean(values)) if values else math.inf


# -- the cache ---------------------------------------------------------------------------------
def checkpoint_dir() -> Path:
    """Where meta-trained checkpoints are cached: ``<cache>/deeppipe``."""
    return cache_dir() / CACHE_FOLDER


def cache_key(
    metadata: MetaData,
    split: str | Sequence[str],
    validation: str | None,
    architecture: Architecture,
    settings: MetaTraining,
    seed: int,
    omit: Mapping[str, Sequence[str]] | None,
    exclude: Sequence[str] = (),
    layout: Mapping[str, Any] | None = None,
) -> str:
    """The key of a checkpoint: everything its weights depend on (``layout``: the run's
    space's, for meta-data that the run's space embeds)."""
    document = {
        "format": FORMAT,
        "metadata": metadata_fingerprint(metadata),
        "split": split if isinstance(split, str) else list(split),
        "validation": validation,
        "architecture": _architecture_key(architecture),
        "settings": asdict(settings),
        "seed": seed,
        "omit": {k: sorted(v) for k, v in sorted((omit or {}).items())},
    }
    if exclude:  # (keys of checkpoints that leave nothing out are those of earlier versions)
        document["exclude"] = sorted(exclude)
    if layout is not None:
        document["layout"] = dict(layout)
    return content_key(document, length=24)


def _architecture_key(architecture: Architecture) -> dict[str, int]:
    """The architecture in a cache key; the paper's depth left out, so that the keys of
    checkpoints made before depth was a setting still match."""
    document = asdict(architecture)
    if document["depth"] == DEPTH:
        del document["depth"]
    return document


def list_checkpoints() -> list[tuple[Path, Checkpoint]]:
    """The cached checkpoints, newest first (unreadable files left out)."""
    found = []
    for path in sorted(
        checkpoint_dir().glob("*.pt"), key=lambda p: p.stat().st_mtime, reverse=True
    ):
        try:
            found.append((path, Checkpoint.load(path)))
        except ValueError:
            continue
    return found
