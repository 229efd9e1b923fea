"""Training task 2: ranking two configurations on a dataset from its meta-features."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from automl_core.contracts import MetaData
from automl_engine.testing.spaces import pipeline_space
from automl_metafeatures_dida.network import Architecture, Dida
from automl_metafeatures_dida.patches import PatchSizes
from automl_metafeatures_dida.ranking import (
    PairHead,
    RankingTraining,
    configuration_inputs,
    dida_description,
    fixed_description,
    patch_sampler,
    ranking_accuracy,
    ranking_examples,
    train_configuration_ranking,
)

SMALL = Architecture(per_feature=4, first=8, second=0, pooled=16, dense=(16, 8, 4), neighbours=8)
SIZES = PatchSizes(rows=(40, 60), features=(3, 3))
SETTINGS = RankingTraining(steps=60, batch=8, lr=0.01, sizes=SIZES)
HELD_OUT = ["d6", "d7"]


def family(n: int = 8, seed: int = 0):
    """Datasets of two kinds: clean labels (a tree does better) or random ones (the logistic
    model does better); the two configurations are each model's default. Only the data
    tells the kinds apart."""
    rng = np.random.default_rng(seed)
    space = pipeline_space()
    configs = [
        space.validate(space.restrict(include={"model": [m]}).default())
        for m in ("logistic", "tree")
    ]
    tables, rows = {}, []
    for i in range(n):
        x = rng.normal(size=(150, 3))
        noisy = i % 2 == 1
        y = rng.integers(0, 2, 150) if noisy else (x[:, 0] > 0).astype(int)
        tables[f"d{i}"] = (x, y)
        rows.append([0.4, 0.5] if noisy else [0.2, 0.1])
    metadata = MetaData(datasets=list(tables), configs=configs, performance=np.array(rows))
    return metadata, space, tables


def test_examples_pair_two_configurations_run_on_the_examples_dataset():
    metadata, _, _ = family()
    metadata.performance[0, 1] = np.nan  # d0 has one observed loss: never drawn
    examples = ranking_examples(metadata, metadata.datasets, 40, np.random.default_rng(0))
    for example in examples:
        losses = metadata.performance[metadata.row(example.dataset)]
        assert example.first != example.second
        assert example.label == float(losses[example.second] < losses[example.first])
    assert {e.label for e in examples} == {0.0, 1.0}
    assert "d0" not in {e.dataset for e in examples}
    with pytest.raises(ValueError, match="two or more observed losses"):
        ranking_examples(metadata, ["d0"], 1, np.random.default_rng(0))


def test_joint_training_learns_which_configuration_a_kind_of_dataset_prefers():
    metadata, space, tables = family()
    inputs = configuration_inputs(metadata, space)
    fitted = [d for d in metadata.datasets if d not in HELD_OUT]
    for init in range(3):
        torch.manual_seed(init)
        network, head = Dida(SMALL), PairHead(SMALL.size, inputs.shape[1], hidden=16)
        losses = train_configuration_ranking(
            head, metadata, inputs, fitted, SETTINGS, network=network, tables=tables
        )
        assert np.mean(losses[-10:]) < np.mean(losses[:10])
        rng = np.random.default_rng(1)
        patches = patch_sampler(network, tables, SIZES, rng)
        test = ranking_examples(metadata, HELD_OUT, 60, rng, patches)
        describe = dida_description(network)
        assert ranking_accuracy(describe, head, torch.as_tensor(inputs), test) > 0.8


def test_without_a_description_of_the_dataset_the_head_cannot_tell_the_kinds_apart():
    metadata, space, _ = family()
    inputs = configuration_inputs(metadata, space)
    fitted = [d for d in metadata.datasets if d not in HELD_OUT]
    kinds = {d: np.array([float(i % 2)]) for i, d in enumerate(metadata.datasets)}
    blind = {d: np.zeros(0) for d in metadata.datasets}
    accuracy = {}
    for name, vectors in [("kind", kinds), ("nothing", blind)]:
        torch.manual_seed(0)
        head = PairHead(len(vectors["d0"]), inputs.shape[1], hidden=16)
        train_configuration_ranking(head, metadata, inputs, fitted, SETTINGS, vectors=vectors)
        test = ranking_examples(metadata, HELD_OUT, 60, np.random.default_rng(1))
        describe = fixed_description(vectors)
        accuracy[name] = ranking_accuracy(describe, head, torch.as_tensor(inputs), test)
    assert accuracy["kind"] > 0.95 and accuracy["nothing"] < 0.7
    with pytest.raises(ValueError, match="network and its datasets' tables, or"):
        train_configuration_ranking(head, metadata, inputs, fitted, SETTINGS)
