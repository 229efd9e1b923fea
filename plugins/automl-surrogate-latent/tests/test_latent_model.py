"""The embeddings, the multi-task GP and pre-training, on the synthetic family."""

from __future__ import annotations

import numpy as np
import torch
from latent_synthetic import EVEN, WIDTHS, family_losses, family_pool

from automl_spaces.component_rows import numeric_ranges
from automl_surrogate_latent.inputs import RowPacker
from automl_surrogate_latent.model import DTYPE, AlgorithmEmbeddings, LatentGP
from automl_surrogate_latent.pretrain import PTEM, Pretraining, discriminator_accuracy, pretrain


def packed_family(shift: float = 0.0):
    pool = family_pool()
    packer = RowPacker.of_space(pool)
    return pool, packer, packer(pool.encodings), family_losses(pool, shift)


def test_each_algorithm_reads_its_own_hyperparameters_then_the_context():
    pool, packer, packed, _ = packed_family()
    inputs = packer.inputs
    assert inputs.stage == "algorithm" and inputs.names == ("0", "1", "2")
    # the scaler stage (its hyper-parameter) is every algorithm's context
    assert inputs.widths == tuple(w + 1 for w in WIDTHS)
    choices = np.asarray(pool.stage_choices)
    assert np.array_equal(packed[:, 0], choices[:, 1])
    first = np.flatnonzero(choices[:, 1] == 0)[0]
    ranges = numeric_ranges(pool)

    def scaled(column):
        low, high = ranges[column]
        return (pool.encodings[first, column] - low) / (high - low)

    assert np.allclose(packed[first, 1:3], [scaled(1), scaled(2)])  # its own two
    assert np.isclose(packed[first, 3], scaled(0))  # then the scaler's


def test_one_mlp_per_algorithm_with_two_hidden_layers_into_three_dimensions():
    embeddings = AlgorithmEmbeddings((3, 2, 1), hidden=8)
    assert len(embeddings.mlps) == 3
    for mlp, width in zip(embeddings.mlps, (3, 2, 1), strict=True):
        linear = [layer for layer in mlp if isinstance(layer, torch.nn.Linear)]
        shapes = [(layer.in_features, layer.out_features) for layer in linear]
        assert shapes == [(width, 8), (8, 8), (8, 3)]
    rows = torch.tensor([[0, 0.1, 0.2, 0.3], [2, 0.5, 0, 0], [1, 0.4, 0.9, 0]], dtype=DTYPE)
    u = embeddings(rows)
    assert u.shape == (3, 3)
    # a row's embedding depends on its own algorithm's inputs only
    padded = rows.clone()
    padded[1, 2:] = 7.0
    assert torch.equal(embeddings(padded)[1], u[1])


def test_the_task_covariance_is_rank_one_plus_a_diagonal():
    model = LatentGP(AlgorithmEmbeddings((1, 1, 1, 1)), rank=1)
    with torch.no_grad():
        model.tasks.covar_factor.copy_(torch.tensor([[1.0], [2.0], [-1.0], [0.5]]))
    covariance = model.task_covariance().detach()
    factor = model.tasks.covar_factor.detach()
    diagonal = covariance - factor @ factor.T
    assert covariance.shape == (4, 4) and model.tasks.covar_factor.shape == (4, 1)
    assert torch.allclose(diagonal, torch.diag(torch.diagonal(diagonal)))  # off-diagonal: rank 1
    assert torch.all(torch.diagonal(diagonal) > 0)
    assert torch.linalg.eigvalsh(covariance).min() > 0


def test_pretraining_fits_the_bowl_and_puts_each_algorithms_best_near_the_origin():
    _, packer, packed, losses = packed_family()
    short = pretrain(
        packed, losses, packer.inputs.names, packer.inputs.widths, Pretraining(epochs=5)
    )
    ptem = pretrain(packed, losses, packer.inputs.names, packer.inputs.widths, Pretraining(300))
    assert ptem.info["bowl_loss"] < 0.2 * short.info["bowl_loss"]
    with torch.no_grad():
        radius = (ptem.embeddings()(torch.as_tensor(packed, dtype=DTYPE)) ** 2).sum(dim=1).numpy()
    algorithms = packed[:, 0].round().astype(int)
    for m in (0, 1):  # the algorithms with hyper-parameters
        rows = np.flatnonzero(algorithms == m)
        nearest = rows[np.argsort(radius[rows])[:3]]
        # the three configurations nearest the origin are among the algorithm's best tenth
        assert np.all(losses[nearest] <= np.quantile(losses[rows], 0.1))
    # and the bowl orders the algorithms: the best algorithm's best sits closest
    assert radius[algorithms == 0].min() < radius[algorithms == 2].min()


def test_the_adversarial_term_makes_the_algorithms_embeddings_overlap():
    """On a family whose algorithms have two hyper-parameters each, a k-NN classifier tells
    the algorithms apart less well from embeddings pre-trained with the term (β = 0.1) than
    without it, on two seeds (measured: 0.89 and 0.95 without, 0.79 and 0.80 with, after 300
    epochs; after 1,000 the islands are sharper: 0.99 and 0.98 against 0.94 and 0.92)."""
    widths = EVEN["widths"]
    pool = family_pool(widths=widths)
    packer = RowPacker.of_space(pool)
    packed, losses = packer(pool.encodings), family_losses(pool, **EVEN)
    names = packer.inputs.names
    for seed in (1, 2):
        apart, together = (
            pretrain(packed, losses, names, packer.inputs.widths, Pretraining(300, beta=b), seed)
            for b in (0.0, 0.1)
        )
        without, with_term = (discriminator_accuracy(p, packed) for p in (apart, together))
        assert with_term < without - 0.05, (seed, without, with_term)


def test_a_ptem_round_trips_through_its_file(tmp_path):
    _, packer, packed, losses = packed_family()
    ptem = pretrain(
        packed, losses, packer.inputs.names, packer.inputs.widths, Pretraining(epochs=20)
    )
    ptem.save(tmp_path / "p.npz")
    loaded = PTEM.load(tmp_path / "p.npz")
    assert (loaded.names, loaded.widths, loaded.offset) == (ptem.names, ptem.widths, ptem.offset)
    rows = torch.as_tensor(packed[:20], dtype=DTYPE)
    with torch.no_grad():
        assert torch.equal(loaded.embeddings()(rows), ptem.embeddings()(rows))
