"""Dida's network: its invariances, any number of features, the neighbour-limited interaction,
training on patch identification, and its weights round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from automl_metafeatures_dida.network import Architecture, Dida, DidaWeights, Patch
from automl_metafeatures_dida.patches import (
    PatchSizes,
    Training,
    accuracy,
    sample_pairs,
    train_patch_identification,
)

SMALL = Architecture(per_feature=4, first=8, second=8, pooled=16, dense=(16, 8, 4), neighbours=10)


def dataset(n: int = 60, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = np.where(x[:, 0] + rng.normal(0, 0.5, n) > 0, "yes", "no")
    return x, y


def metafeatures(network: Dida, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return network.metafeatures(Patch.of(x, y, network.architecture.neighbours)).numpy()


@pytest.mark.parametrize("layers", [0, 8])  # 1L- and 2L-Dida
def test_the_meta_features_ignore_the_order_of_rows_features_and_label_names(layers):
    torch.manual_seed(0)
    network = Dida(Architecture(second=layers, neighbours=10)).eval()
    x, y = dataset()
    rng = np.random.default_rng(1)
    reference = metafeatures(network, x, y)
    rows, columns = rng.permutation(len(x)), rng.permutation(x.shape[1])
    renamed = np.where(y == "yes", "B", "A")
    np.testing.assert_allclose(metafeatures(network, x[rows], y[rows]), reference, atol=1e-5)
    np.testing.assert_allclose(metafeatures(network, x[:, columns], y), reference, atol=1e-5)
    np.testing.assert_allclose(metafeatures(network, x, renamed), reference, atol=1e-5)
    assert not np.allclose(metafeatures(network, x, rng.permutation(y)), reference, atol=1e-5)


def test_any_number_of_features_and_rows_gives_as_many_meta_features():
    network = Dida(SMALL).eval()
    sizes = {metafeatures(network, *dataset(n, d)).shape for n, d in ((5, 1), (40, 3), (80, 30))}
    assert sizes == {(SMALL.size,)}


def full_interaction_first_layer(network: Dida, patch: Patch) -> torch.Tensor:
    """Eq. 5.1 and 5.4 written out over every pair of points, the mean over all j."""
    x, y = patch.x, patch.y
    rows = []
    for i in range(len(x)):
        terms = []
        for j in range(len(x)):
            pair = torch.stack([x[i], x[j]], dim=-1)  # d x 2
            summed = torch.relu(network.per_feature(pair)).sum(dim=0)
            differ = torch.tensor([float(y[i] != y[j])])
            terms.append(torch.relu(network.first(torch.cat([summed, differ]))))
        rows.append(torch.stack(terms).mean(dim=0))
    return torch.stack(rows)


def test_the_neighbour_limited_interaction_is_the_full_one_when_k_covers_every_point():
    torch.manual_seed(0)
    network = Dida(Architecture(second=0, neighbours=25)).eval()
    x, y = dataset(n=12)
    patch = Patch.of(x, y, neighbours=25)
    with torch.no_grad():
        limited = network.invariant_layers(patch)
        full = full_interaction_first_layer(network, patch)
        assert torch.allclose(limited, full, atol=1e-5)
        fewer = network.invariant_layers(Patch.of(x, y, neighbours=4))
    assert not torch.allclose(fewer, full, atol=1e-3)


def test_a_few_training_steps_lower_the_patch_identification_loss():
    tables = [dataset(n=200, d=4, seed=s) for s in range(2)]
    rng = np.random.default_rng(9)
    tables += [(rng.uniform(size=(200, 6)) ** 3, rng.integers(0, 3, 200)) for _ in range(2)]
    torch.manual_seed(0)
    network = Dida(SMALL)
    sizes = PatchSizes(rows=(30, 60), features=(2, 4))
    settings = Training(steps=150, batch=8, lr=0.01, sizes=sizes)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small tensors: more threads only fight the other tests
    try:
        losses = train_patch_identification(network, tables, settings)
    finally:
        torch.set_num_threads(threads)
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) / 2
    # new patches of the same datasets: 0.80 measured on an AMD EPYC (0.5 before training).
    # 60 steps gave 0.71 on an Intel Xeon but 0.5 on the AMD (and 0.55-0.84 over seeds 1-3
    # there): too few for the held-out accuracy to hold across CPUs' float rounding.
    held_out = sample_pairs(tables, 80, sizes, np.random.default_rng(5), SMALL.neighbours)
    assert accuracy(network, held_out) > 0.6


def test_the_weights_round_trip_as_plain_arrays(tmp_path):
    torch.manual_seed(0)
    network = Dida(SMALL).eval()
    DidaWeights.of(network, {"trained_on": "nothing"}).save(tmp_path / "dida.npz")
    loaded = DidaWeights.load(tmp_path / "dida.npz")
    assert loaded.architecture == SMALL and loaded.info == {"trained_on": "nothing"}
    x, y = dataset()
    np.testing.assert_array_equal(metafeatures(loaded.network(), x, y), metafeatures(network, x, y))


def test_what_the_network_cannot_read_is_said():
    with pytest.raises(ValueError, match="finite"):
        Patch.of(np.array([[1.0, np.nan]]), np.array([0]))
    with pytest.raises(ValueError, match="n x d"):
        Patch.of(np.zeros((3, 0)), np.zeros(3))
    with pytest.raises(ValueError, match="at least 2 layers"):
        Architecture(dense=(8,))
