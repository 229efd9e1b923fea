"""The authors' weights in our network: the same embedding as the authors' forward pass,
their accuracy-scale GP turned into ours, and a checkpoint that refuses another pool.

The wheel's real checkpoints are checked the same way in docs/benchmarks.md (largest
difference 3e-6 over 2,000 Tensor-OBOE pipelines); here a state dict of the authors' shape is
made up, so no download is needed."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

from automl_core.contracts import MetaData
from automl_spaces.pool_space import PoolSpace
from automl_surrogate_deeppipe import authors
from automl_surrogate_deeppipe.authors import (
    authors_checkpoint,
    kernel_on_standardised_losses,
    structure_layout,
    structure_selector,
)
from automl_surrogate_deeppipe.metatrain import Architecture
from automl_surrogate_deeppipe.model import DTYPE, pack, posterior
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate

#: a DeepPipe-style file: stage 0 has one algorithm (2 columns), stage 1 three (2, 3, 1)
DOMAIN = [0, 2, 4, 7, 8]
STAGE_ALGORITHMS = [[0], [1, 2, 3]]
F, LATENT = 2, 20


def deeppipe_file_metadata(size: int = 120, seed: int = 0) -> MetaData:
    rng = np.random.default_rng(seed)
    selector = np.column_stack([np.zeros(size, int), rng.integers(0, 3, size)])
    encodings = np.zeros((size, DOMAIN[-1]))
    encodings[:, 0:2] = rng.uniform(size=(size, 2))
    for k, algorithm in enumerate(STAGE_ALGORITHMS[1]):
        rows = selector[:, 1] == k
        columns = slice(DOMAIN[algorithm], DOMAIN[algorithm + 1])
        encodings[rows, columns] = rng.uniform(size=(rows.sum(), columns.stop - columns.start))
    pool = PoolSpace("file", encodings, stage_names=("imputer", "model"), stage_choices=selector)
    losses = rng.uniform(0.1, 0.4, (3, size))
    return MetaData(
        datasets=["a", "b", "c"],
        configs=pool.candidates(),
        performance=losses,
        space=pool.name,
        pool=pool,
        info={
            "algorithm_domain": DOMAIN,
            "stage_algorithms": STAGE_ALGORITHMS,
            "list_for_selector": selector.tolist(),
        },
    )


def made_up_state(seed: int = 0) -> dict:
    """The authors' layout: inputs = the 8 columns and stage 1's 3 one-hots (stage 0's single
    one-hot dropped); hidden F·(2 + 3); three hidden layers and the projection."""
    generator = torch.Generator().manual_seed(seed)
    sizes = [DOMAIN[-1] + 3, F * 5, F * 5, F * 5, LATENT]
    net = OrderedDict()
    for i in range(4):
        net[f"non_masked_layers.{i}.weight"] = torch.randn(
            sizes[i + 1], sizes[i], generator=generator, dtype=torch.float64
        )
        net[f"non_masked_layers.{i}.bias"] = torch.randn(
            sizes[i + 1], generator=generator, dtype=torch.float64
        )
    gp = {
        "mean_module.constant": torch.tensor([0.7], dtype=torch.float64),
        "covar_module.raw_outputscale": torch.tensor(-3.0, dtype=torch.float64),
        "covar_module.base_kernel.raw_lengthscale": torch.full((1, LATENT), 0.5, dtype=DTYPE),
        "likelihood.noise_covar.raw_noise": torch.tensor([-6.0], dtype=torch.float64),
    }
    return {"net": net, "gp": gp}


def authors_forward(state: dict, encodings: np.ndarray, selector: np.ndarray) -> np.ndarray:
    """The authors' MLP as their code computes it, in numpy."""
    one_hot = (selector[:, 1:2] == np.arange(3)).astype(float)
    h = np.hstack([encodings, one_hot])
    net = {k: v.numpy() for k, v in state["net"].items()}
    for i in range(3):
        h = np.maximum(
            h @ net[f"non_masked_layers.{i}.weight"].T + net[f"non_masked_layers.{i}.bias"], 0
        )
    return h @ net["non_masked_layers.3.weight"].T + net["non_masked_layers.3.bias"]


@pytest.fixture
def made_up(monkeypatch):
    state = made_up_state()
    monkeypatch.setattr(authors, "read_authors_state", lambda name: state)
    return state


def loaded_model(checkpoint, metadata):
    layout = structure_layout(list(metadata.pool.columns()), checkpoint.info["structure"])
    model = checkpoint.architecture.build(layout, seed=0)
    model.load_state_dict(checkpoint.state)
    return model, layout


def test_our_network_computes_the_authors_embedding(made_up):
    metadata = deeppipe_file_metadata()
    checkpoint = authors_checkpoint("DeepPipeTOboe2", metadata)
    assert checkpoint.architecture == Architecture(0, F, LATENT, depth=3)
    model, layout = loaded_model(checkpoint, metadata)
    encodings = metadata.pool.encodings
    selector = np.asarray(metadata.info["list_for_selector"])
    rows = structure_selector(metadata.pool, checkpoint.info["structure"])(encodings)
    with torch.no_grad():
        ours = model.embed(pack(layout.transform(encodings), rows)).numpy()
    theirs = authors_forward(made_up, encodings, selector)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_a_network_of_another_encoding_is_refused(monkeypatch):
    state = made_up_state()
    state["net"]["non_masked_layers.0.weight"] = torch.zeros(F * 5, DOMAIN[-1] + 6)
    monkeypatch.setattr(authors, "read_authors_state", lambda name: state)
    with pytest.raises(ValueError, match=r"reads 14 inputs.*gives 11.*cannot be loaded"):
        authors_checkpoint("DeepPipePMF", deeppipe_file_metadata())


def packed_pool(checkpoint, metadata, layout):
    """The network's inputs for every pipeline of the pool, by the authors' structure."""
    encodings = metadata.pool.encodings
    selector = structure_selector(metadata.pool, checkpoint.info["structure"])
    return pack(layout.transform(encodings), selector(encodings))


def accuracy_gp_posterior(checkpoint, metadata, train, test):
    """The authors' GP as they use it: on accuracies, unconverted."""
    model, layout = loaded_model(checkpoint, metadata)
    inputs = packed_pool(checkpoint, metadata, layout)
    accuracy = torch.as_tensor(1 - metadata.performance[0][train], dtype=DTYPE)
    model.set_train_data(inputs[train], accuracy, strict=False)
    return posterior(model, inputs[test])


def test_the_accuracy_scale_gp_becomes_the_same_gp_on_standardised_losses(made_up):
    metadata = deeppipe_file_metadata()
    checkpoint = authors_checkpoint("DeepPipeTOboe2", metadata)
    losses = metadata.performance[0]
    train, test = slice(0, 30), slice(30, None)
    accuracy_mean, accuracy_std = accuracy_gp_posterior(checkpoint, metadata, train, test)

    ours, layout = loaded_model(checkpoint, metadata)
    inputs = packed_pool(checkpoint, metadata, layout)
    mean, scale = float(losses[train].mean()), float(losses[train].std())
    kernel_on_standardised_losses(ours, mean, scale)
    standardised = torch.as_tensor((losses[train] - mean) / scale, dtype=DTYPE)
    ours.set_train_data(inputs[train], standardised, strict=False)
    loss_mean, loss_std = posterior(ours, inputs[test])

    np.testing.assert_allclose(loss_mean * scale + mean, 1 - accuracy_mean, rtol=1e-6)
    np.testing.assert_allclose(loss_std * scale, accuracy_std, rtol=1e-6)


def test_a_fit_starts_from_the_authors_gp_on_the_losses_scale(made_up, tmp_path):
    """With nothing learnt (lr 0), the surrogate predicts what the authors' GP on
    accuracies predicts, turned into losses: the fit converted the stored GP."""
    metadata = deeppipe_file_metadata()
    path = tmp_path / "authors.pt"
    checkpoint = authors_checkpoint("DeepPipeTOboe2", metadata)
    checkpoint.save(path)
    surrogate = DeepPipeSurrogate(checkpoint=path, fine_tune="kernel", steps=1, lr=0.0)
    surrogate.prepare(metadata.pool.columns())
    surrogate.prepare_space(metadata.pool)
    rows, losses = metadata.pool.encodings, metadata.performance[0]
    mean, std = surrogate.fit(rows[:30], losses[:30]).predict(rows[30:])
    accuracy_mean, accuracy_std = accuracy_gp_posterior(
        checkpoint, metadata, slice(0, 30), slice(30, None)
    )
    np.testing.assert_allclose(mean, 1 - accuracy_mean, rtol=1e-5)
    np.testing.assert_allclose(std, accuracy_std, rtol=1e-4)


def test_the_surrogate_uses_an_authors_checkpoint_on_its_pool_only(made_up, tmp_path):
    metadata = deeppipe_file_metadata()
    path = tmp_path / "authors.pt"
    authors_checkpoint("DeepPipeTOboe2", metadata).save(path)
    surrogate = DeepPipeSurrogate(checkpoint=path, steps=5)
    surrogate.prepare(metadata.pool.columns())
    surrogate.prepare_space(metadata.pool)
    rows, losses = metadata.pool.encodings, metadata.performance[0]
    mean, std = surrogate.fit(rows[:20], losses[:20]).predict(rows[20:])
    assert mean.shape == std.shape == (len(rows) - 20,)
    assert np.all(np.isfinite(mean)) and np.all(std > 0)

    other = deeppipe_file_metadata(seed=1).pool
    elsewhere = DeepPipeSurrogate(checkpoint=path)
    elsewhere.prepare(other.columns())
    with pytest.raises(ValueError, match="made for one pool"):
        elsewhere.prepare_space(other)


def test_an_unknown_authors_checkpoint_is_named():
    with pytest.raises(ValueError, match="authors:DeepPipeTOboe2"):
        surrogate = DeepPipeSurrogate(checkpoint="authors:Nope")
        pool = deeppipe_file_metadata().pool
        surrogate.prepare(pool.columns())
        surrogate.prepare_space(pool)
