"""Training Dida on real datasets, and the cache of trained weights.

Two training tasks (thesis §5.4): patch identification (:func:`train`, on raw datasets) and
configuration ranking (:func:`train_ranking`, on meta-data whose datasets can be loaded).

The corpus is a list of dataset references (``keel:pima``, ``sklearn:iris``...; by default
KEEL's 43 balanced classification datasets, all offline). It is split by dataset: a seeded
``validation`` share of the datasets is never trained on, and the patch-identification
accuracy on pairs of its patches (datasets never seen) is what a checkpoint reports. Trained
weights are cached under ``<cache>/dida/`` by a key of (corpus, validation, architecture,
training settings, format version): training again with the same settings loads them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from automl_core.contracts import MetaData
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import VectorSpace
from automl_engine.builtins.sources import keel_names
from automl_engine.cache import cache_dir, content_key
from automl_engine.metastore import metadata_fingerprint
from automl_engine.sources import load_dataset
from automl_metafeatures_dida.network import Architecture, Dida, DidaWeights
from automl_metafeatures_dida.patches import (
    Table,
    Training,
    accuracy,
    sample_pairs,
    train_patch_identification,
)
from automl_metafeatures_dida.ranking import (
    PairHead,
    RankingTraining,
    configuration_inputs,
    dida_description,
    patch_sampler,
    ranking_accuracy,
    ranking_examples,
    train_configuration_ranking,
)
from automl_metafeatures_dida.tables import numeric_table

#: Bumped when training changes in a way that makes old checkpoints wrong.
FORMAT = 1
#: The share of the corpus's datasets held out for validation.
VALIDATION_SHARE = 0.2
#: Patch pairs (or configuration pairs) the validation accuracy is measured on.
VALIDATION_PAIRS = 200
#: The network ``automl dida train`` makes with its default settings (KEEL's 43 balanced
#: datasets, patch identification), shipped with the plugin so that ``metafeatures: dida``
#: needs no training step first. Rebuilt by ``automl dida train --threads 1`` on an empty
#: cache, then copying the ``.npz`` it caches here (README, "The shipped network").
SHIPPED = Path(__file__).resolve().parent / "models" / "dida-keel43-patches.npz"


def default_corpus() -> list[str]:
    """KEEL's balanced classification datasets (bundled with the project's data package)."""
    return [f"keel:{name}" for name in keel_names()]


def load_tables(references: Sequence[str], plugins: Plugins | None = None) -> dict[str, Table]:
    """The classification datasets among ``references``, as numeric tables."""
    plugins = plugins or load_plugins()
    tables = {}
    for reference in references:
        dataset = load_dataset(plugins, reference)
        if dataset.task != "classification":
            raise ValueError(f"Dida trains on classification datasets; {reference} is not one")
        tables[reference] = numeric_table(dataset.X, dataset.y)
    return tables


def split_corpus(references: Sequence[str], share: float, seed: int) -> tuple[list, list]:
    """(training, validation) datasets: a seeded ``share`` of them held out (at least 2)."""
    order = np.random.default_rng(seed).permutation(len(references))
    held = max(2, round(share * len(references)))
    if len(references) - held < 2:
        raise ValueError(f"Dida: {len(references)} datasets are too few to train and validate")
    validation = sorted(references[i] for i in order[:held])
    return [r for r in references if r not in validation], validation


def checkpoint_key(
    references: Sequence[str], architecture: Architecture, training: Training, share: float
) -> str:
    return content_key(
        {
            "format": FORMAT,
            "corpus": sorted(references),
            "validation_share": share,
            "architecture": asdict(architecture),
            "training": asdict(training),
        }
    )


def checkpoint_folder() -> Path:
    return cache_dir() / "dida"


def train(
    references: Sequence[str] | None = None,
    architecture: Architecture | None = None,
    training: Training | None = None,
    share: float = VALIDATION_SHARE,
    threads: int | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> DidaWeights:
    """Dida trained on patch identification over ``references`` (default: the KEEL corpus),
    from the cache when it was trained before with the same settings."""
    references = list(references or default_corpus())
    architecture, training = architecture or Architecture(), training or Training()
    key = checkpoint_key(references, architecture, training, share)
    path = checkpoint_folder() / f"{key}.npz"
    if path.exists():
        return DidaWeights.load(path)
    fitted, held_out = split_corpus(references, share, training.seed)
    tables = load_tables(references)
    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(training.seed)
    network = Dida(architecture)
    started = time.monotonic()
    losses = train_patch_identification(network, [tables[r] for r in fitted], training, progress)
    seconds = time.monotonic() - started
    rng = np.random.default_rng(training.seed + 1)
    pairs = sample_pairs(
        [tables[r] for r in held_out],
        VALIDATION_PAIRS,
        training.sizes,
        rng,
        architecture.neighbours,
    )
    weights = DidaWeights.of(
        network,
        {
            "key": key,
            "trained_on": fitted,
            "validation": held_out,
            "validation_accuracy": accuracy(network, pairs),
            "final_loss": float(np.mean(losses[-20:])),
            "steps": training.steps,
            "seconds": seconds,
        },
    )
    weights.save(path)
    return weights


def train_ranking(
    metadata: MetaData,
    space: VectorSpace,
    architecture: Architecture | None = None,
    settings: RankingTraining | None = None,
    start: DidaWeights | None = None,
    share: float = VALIDATION_SHARE,
    threads: int | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> DidaWeights:
    """Dida trained on configuration ranking (task 2) over ``metadata``'s datasets (each a
    reference the project can load, e.g. ``keel:pima``: the meta-data of ``automl data
    build``) and configurations (of ``space``), from ``start``'s weights (e.g. a network
    trained on patch identification) or from scratch; from the cache when it was trained
    before with the same settings. A seeded ``share`` of the datasets is held out: the
    pairwise ranking accuracy on them is what the checkpoint reports."""
    settings = settings or RankingTraining()
    architecture = start.architecture if start else architecture or Architecture()
    key = content_key(
        {
            "format": FORMAT,
            "task": "ranking",
            "metadata": metadata_fingerprint(metadata),
            "validation_share": share,
            "architecture": asdict(architecture),
            "training": asdict(settings),
            "start": start.info.get("key") if start else None,
        }
    )
    path = checkpoint_folder() / f"{key}.npz"
    if path.exists():
        return DidaWeights.load(path)
    datasets = list(metadata.datasets)
    fitted, held_out = split_corpus(datasets, share, settings.seed)
    tables = load_tables(datasets)
    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(settings.seed)
    network = start.network() if start else Dida(architecture)
    inputs = configuration_inputs(metadata, space)
    head = PairHead(architecture.size, inputs.shape[1])
    started = time.monotonic()
    losses = train_configuration_ranking(
        head, metadata, inputs, fitted, settings, network, tables, progress=progress
    )
    seconds = time.monotonic() - started
    rng = np.random.default_rng(settings.seed + 1)
    patches = patch_sampler(network, tables, settings.sizes, rng)
    examples = ranking_examples(metadata, held_out, VALIDATION_PAIRS, rng, patches)
    held_out_accuracy = ranking_accuracy(
        dida_description(network), head, torch.as_tensor(inputs), examples
    )
    weights = DidaWeights.of(
        network,
        {
            "key": key,
            "task": "ranking",
            "trained_on": fitted,
            "validation": held_out,
            "validation_accuracy": held_out_accuracy,
            "final_loss": float(np.mean(losses[-20:])),
            "steps": settings.steps,
            "seconds": seconds,
            "start": start.info.get("key") if start else None,
        },
    )
    weights.save(path)
    return weights


def list_checkpoints() -> list[tuple[Path, DidaWeights]]:
    folder = checkpoint_folder()
    return [(path, DidaWeights.load(path)) for path in sorted(folder.glob("*.npz"))]
