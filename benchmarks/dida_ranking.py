"""Configuration ranking on datasets never trained on: which of two pipelines does better on a
dataset, told from the dataset's description (the thesis's Table 5.3, on our KEEL meta-data).

The meta-data is ``automl data build``'s (e.g. ``benchmarks/build_keel_metadata.py``'s
``OUT/metadata``): KEEL datasets x the same autosklearn-classification pipelines. Its datasets
are split into ``--folds`` folds; per fold every method trains the same ranking head (two dense
layers on [description; θ; θ'], ``automl_metafeatures_dida.ranking``) on the other folds'
datasets and is judged on the same ``--pairs`` held-out pairs (pipelines with different
losses on a held-out dataset). The methods differ only in how a dataset is described:

- ``none``: not at all (the head learns which pipelines are good anywhere: the bar that
  meta-features must clear);
- ``handcrafted``: the hand-crafted meta-features the runs stored (NaN as the column mean);
- ``dida-frozen``: the patch-trained Dida network's meta-features (``metafeatures: dida``),
  fixed;
- ``dida-scratch``: a Dida network trained jointly with the head from random weights (the
  thesis's task 2);
- ``dida-patches``: the same, starting from the patch-trained network.

Prints per fold and method the held-out pairwise accuracy, then each method's mean, and
writes the rows to ``--out`` (CSV). Dida's patch-trained network is ``automl dida train``'s
default checkpoint (trained first when not cached).

    python benchmarks/dida_ranking.py --metadata ~/keel-metadata/metadata --steps 500
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
import torch

from automl_core.contracts import MetaData
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import pipeline_space
from automl_engine.metastore import load_metadata
from automl_engine.sources import load_dataset
from automl_metafeatures_dida.network import Architecture, Dida, DidaWeights
from automl_metafeatures_dida.patches import Table
from automl_metafeatures_dida.provider import DidaMetaFeatures
from automl_metafeatures_dida.ranking import (
    Describe,
    PairHead,
    RankingExample,
    RankingTraining,
    configuration_inputs,
    dida_description,
    fixed_description,
    patch_sampler,
    ranking_accuracy,
    ranking_examples,
    train_configuration_ranking,
)
from automl_metafeatures_dida.train import load_tables, train

METHODS = ("none", "handcrafted", "dida-frozen", "dida-scratch", "dida-patches")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=500, help="training steps of every head")
    parser.add_argument("--pairs", type=int, default=500, help="held-out pairs per fold")
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/dida_ranking.csv"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    metadata = load_metadata(args.metadata)
    plugins = load_plugins()
    space = pipeline_space(plugins.create("space", metadata.space))
    assert space is not None, f"{metadata.space} is not a pipeline space"
    inputs = configuration_inputs(metadata, space)
    tables = load_tables(metadata.datasets, plugins)
    patched = train()  # the patch-trained network (cached)
    descriptions = {
        "none": {d: np.zeros(0) for d in metadata.datasets},
        "handcrafted": handcrafted_vectors(metadata),
        "dida-frozen": dida_vectors(metadata, plugins),
    }
    settings = RankingTraining(steps=args.steps, seed=args.seed)
    print(
        f"{len(metadata.datasets)} datasets x {len(metadata.configs)} pipelines "
        f"({np.isfinite(metadata.performance).mean():.1%} observed), {args.folds} folds, "
        f"{args.steps} steps, {args.pairs} held-out pairs per fold"
    )
    rows = []
    for fold, (fitted, held_out) in enumerate(folds(metadata, args.folds, args.seed)):
        rng = np.random.default_rng(args.seed + 1000 + fold)
        patches = patch_sampler(Dida(Architecture()), tables, settings.sizes, rng)
        test = ranking_examples(metadata, held_out, args.pairs, rng, patches)
        for method in args.methods:
            started = time.monotonic()
            accuracy = run_method(
                method, metadata, inputs, fitted, test, tables, settings, descriptions, patched
            )
            seconds = time.monotonic() - started
            rows.append({"fold": fold, "method": method, "accuracy": accuracy, "seconds": seconds})
            print(f"fold {fold} {method:13s} {accuracy:.3f} ({seconds:.0f} s)", flush=True)
    write_rows(args.out, rows)
    print("\n| method | mean accuracy | std over folds | training s per fold |\n|---|---|---|---|")
    for method in args.methods:
        mine = [r for r in rows if r["method"] == method]
        accuracies = [r["accuracy"] for r in mine]
        print(
            f"| {method} | {np.mean(accuracies):.3f} | {np.std(accuracies):.3f} | "
            f"{np.mean([r['seconds'] for r in mine]):.0f} |"
        )


def folds(metadata: MetaData, count: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """The datasets in ``count`` seeded folds: (training, held-out) per fold."""
    names = list(metadata.datasets)
    order = [names[i] for i in np.random.default_rng(seed).permutation(len(names))]
    parts = [list(part) for part in np.array_split(np.array(order), count)]
    return [([d for d in order if d not in part], part) for part in parts]


def run_method(
    method: str,
    metadata: MetaData,
    inputs: np.ndarray,
    fitted: list[str],
    test: list[RankingExample],
    tables: dict[str, Table],
    settings: RankingTraining,
    descriptions: dict[str, dict[str, np.ndarray]],
    patched: DidaWeights,
) -> float:
    """Train the head (and the network, for the joint methods) on ``fitted``; its accuracy on
    ``test``."""
    torch.manual_seed(settings.seed)
    describe: Describe
    if method in descriptions:
        vectors = descriptions[method]
        head = PairHead(len(next(iter(vectors.values()))), inputs.shape[1])
        train_configuration_ranking(head, metadata, inputs, fitted, settings, vectors=vectors)
        describe = fixed_description(vectors)
    else:
        network = patched.network() if method == "dida-patches" else Dida(Architecture())
        head = PairHead(network.architecture.size, inputs.shape[1])
        train_configuration_ranking(
            head, metadata, inputs, fitted, settings, network=network, tables=tables
        )
        describe = dida_description(network)
    return ranking_accuracy(describe, head, torch.as_tensor(inputs), test)


def handcrafted_vectors(metadata: MetaData) -> dict[str, np.ndarray]:
    assert metadata.metafeatures is not None, "the meta-data stores no meta-features"
    table = metadata.metafeatures.astype(float).replace([np.inf, -np.inf], np.nan)
    table = table.fillna(table.mean()).fillna(0.0)
    return {d: table.loc[d].to_numpy() for d in metadata.datasets}


def dida_vectors(metadata: MetaData, plugins: Plugins) -> dict[str, np.ndarray]:
    """``metafeatures: dida`` of each dataset (the default, patch-trained checkpoint)."""
    provider = DidaMetaFeatures()
    vectors = {}
    for reference in metadata.datasets:
        dataset = load_dataset(plugins, reference)
        described = provider.compute(dataset.X, dataset.y, dataset.task)
        vectors[reference] = np.array(list(described.values()))
    return vectors


def write_rows(path: Path, rows: list[dict[str, float | str]]) -> None:
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
