"""The hand-written GP likelihood and kernel equal gpytorch's, value and gradients."""

from __future__ import annotations

import gpytorch
import numpy as np
import torch
from synthetic import family_pool

from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.metatrain import Architecture
from automl_surrogate_deeppipe.model import DTYPE, matern_52, negative_log_likelihood, pack


def model_and_rows(seed: int = 0):
    pool = family_pool()
    layout = Layout.of(list(pool.columns()), pool.blocks())
    model = Architecture(1, 2, 5).build(layout, seed)
    with torch.no_grad():  # away from gpytorch's initial values
        model.covar_module.base_kernel.lengthscale = torch.linspace(0.3, 2.0, 5, dtype=DTYPE)
        model.covar_module.outputscale = 1.7
        model.likelihood.noise = 0.05
        model.mean_module.constant.fill_(0.3)
    rows = pack(layout.transform(pool.encodings[:60]), Selector(pool)(pool.encodings[:60]))
    targets = torch.as_tensor(np.random.default_rng(seed).normal(size=60), dtype=DTYPE)
    return model, rows, targets


def gpytorch_nll(model, rows, targets):
    model.set_train_data(rows, targets, strict=False)
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    return -mll(model(rows), targets)


def test_the_nll_and_its_gradients_equal_gpytorchs():
    model, rows, targets = model_and_rows()
    theirs = gpytorch_nll(model, rows, targets)
    theirs.backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad()
    ours = negative_log_likelihood(model, rows, targets)
    ours.backward()
    assert torch.allclose(ours, theirs, rtol=1e-6)
    for name, parameter in model.named_parameters():
        assert torch.allclose(parameter.grad, expected[name], rtol=1e-4, atol=1e-6), name


def test_the_kernel_equals_gpytorchs():
    model, rows, _ = model_and_rows(1)
    with torch.no_grad():
        z = model.embed(rows)
        expected = model.covar_module(z[:40], z[20:]).to_dense()
        assert torch.allclose(matern_52(model, z[:40], z[20:]), expected, rtol=1e-8, atol=1e-10)
        square = model.covar_module(z).to_dense()
        assert torch.allclose(matern_52(model, z), square, rtol=1e-8, atol=1e-10)


def test_the_kernels_written_out_derivative_is_autograds():
    """:class:`Matern52OfSquared` (forward and derivative written out) against autograd
    through the plain formula, on distances that include a row with itself (d² = 0, where
    ``clamp_min`` passes no gradient), and torch's numerical gradient check."""
    from automl_surrogate_deeppipe.model import SQUARED_FLOOR, Matern52OfSquared

    torch.manual_seed(0)
    z = torch.randn(7, 3, dtype=torch.float64)
    squared = (torch.cdist(z, z) ** 2).fill_diagonal_(0.0).requires_grad_()
    scale = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)

    def plain(squared, scale):
        root5 = (5.0 * squared.clamp_min(SQUARED_FLOOR)).sqrt()
        return (scale / 3) * (3 + root5 * (3 + root5)) * torch.exp(-root5)

    weights = torch.randn(7, 7, dtype=torch.float64)
    ours = Matern52OfSquared.apply(squared, scale)
    theirs = plain(squared, scale)
    assert torch.allclose(ours, theirs, rtol=1e-14, atol=0)
    grads = torch.autograd.grad((ours * weights).sum(), (squared, scale))
    expected = torch.autograd.grad((theirs * weights).sum(), (squared, scale))
    for got, want in zip(grads, expected, strict=True):
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-14)
    assert (grads[0].diagonal() == 0).all()
    away = (torch.rand(5, 5, dtype=torch.float64) + 0.1).requires_grad_()
    assert torch.autograd.gradcheck(Matern52OfSquared.apply, (away, scale))
