"""The deep-kernel GP: an exact GP whose Matérn 5/2 kernel reads DeepPipe's embeddings, and
the gradient steps that train it on one task's observations.

As in the paper (and the authors' code): constant mean, ``ScaleKernel(Matern(nu=2.5))`` with
one lengthscale per embedding dimension (ARD over Z), Gaussian likelihood, all parameters
trained by the GP's negative log marginal likelihood (Eq. 6) with Adam. Targets are
standardised per task (mean 0, std 1) before training, so that one set of kernel
parameters serves tasks whose losses live on different scales.

A row reaches the GP as one float tensor: the layout's inputs followed by the selector
(the active algorithm's position per stage), which :meth:`DeepKernelGP.forward` splits.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gpytorch
import numpy as np
import torch
from linear_operator.utils.errors import NanError, NotPSDError

from automl_surrogate_deeppipe.network import NetworkRows, PipelineEmbedder

#: The GP's dtype: float64 keeps the Cholesky factorisations stable on near-duplicate
#: pipelines.
DTYPE = torch.float64
#: The network's dtype: float32, about twice as fast as float64 on a CPU; its embeddings are
#: cast to :data:`DTYPE` before the kernel reads them.
NETWORK_DTYPE = torch.float32
#: Failures that mean "this kernel matrix could not be factorised", not a bug.
NUMERICAL_ERRORS = (NotPSDError, NanError, torch.linalg.LinAlgError)
#: squared distances below this are taken as this (a row with itself, in rounding error)
SQUARED_FLOOR = 1e-30


class DeepKernelGP(gpytorch.models.ExactGP):
    """k(φ(p), φ(p')) = s·Matérn_5/2(φ(p), φ(p')) with φ a :class:`PipelineEmbedder`."""

    def __init__(self, embedder: PipelineEmbedder) -> None:
        likelihood = gpytorch.likelihoods.GaussianLikelihood(
            noise_constraint=gpytorch.constraints.GreaterThan(1e-4)
        )
        super().__init__(None, None, likelihood)
        self.embedder = embedder
        self.stages = len(embedder.layout.stages)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.MaternKernel(nu=2.5, ard_num_dims=embedder.latent)
        )
        #: True when the rows it is given are embeddings already (a frozen network's, computed
        #: once): the GP then trains and predicts on them without running the network
        self.reads_embeddings = False
        #: the last rows given and the network's inputs made of them (see :meth:`embed`)
        self._unpacked: tuple[torch.Tensor, NetworkRows] | None = None

    def embed(self, packed: torch.Tensor) -> torch.Tensor:
        if self.reads_embeddings:
            return packed
        return self.embedder.embed(self._network_rows(packed)).to(DTYPE)

    def _network_rows(self, packed: torch.Tensor) -> NetworkRows:
        """``packed`` as the network reads it, kept for the last tensor given: a fit embeds
        the same rows at each of its steps (rows are never changed in place). Rows embedded
        without gradients (scoring) are built for that only."""
        training = torch.is_grad_enabled()
        cached = self._unpacked
        scoring_only = cached is not None and cached[1].active is None and self.embedder.encoders
        if cached is None or cached[0] is not packed or (training and scoring_only):
            inputs, selector = packed[:, : -self.stages], packed[:, -self.stages :]
            rows = self.embedder.rows(inputs.to(NETWORK_DTYPE), selector.round().long(), training)
            self._unpacked = cached = (packed, rows)
        return cached[1]

    def forward(self, packed: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        z = self.embed(packed)
        return gpytorch.distributions.MultivariateNormal(self.mean_module(z), self.covar_module(z))

    def kernel_parameters(self) -> list[torch.nn.Parameter]:
        """γ: the mean, the kernel's scale and lengthscales, the noise."""
        return [
            *self.mean_module.parameters(),
            *self.covar_module.parameters(),
            *self.likelihood.parameters(),
        ]

    def network_parameters(self) -> list[torch.nn.Parameter]:
        """θ: the encoders' and the aggregation layers' weights."""
        return list(self.embedder.parameters())


def pack(inputs: np.ndarray, selector: np.ndarray) -> torch.Tensor:
    """One tensor per row: the layout's inputs, then the selector."""
    return torch.as_tensor(np.hstack([inputs, selector.astype(float)]), dtype=DTYPE)


def negative_log_likelihood(
    model: DeepKernelGP, packed: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """The GP's NLL of ``targets`` at ``packed`` (Eq. 6 for one task), per observation.

    The value of gpytorch's ``ExactMarginalLogLikelihood`` divided by n (the tests compare
    the two), written out from one Cholesky factor: on the few hundred rows of a BO step or a
    meta-training batch, the likelihood through gpytorch's lazy tensors took about half of a
    fine-tuning step (1.18 of 1.99 s at n = 100 on PMF, profiled). ``packed`` becomes the
    model's training data, which :func:`posterior` reads."""
    model.set_train_data(packed, targets, strict=False)
    model.train()
    return _nll(model, packed, targets)


def _nll(model: DeepKernelGP, packed: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """:func:`negative_log_likelihood` on a model already in training mode on its data."""
    factor = _training_factor(model, model.embed(packed))
    residual = (targets - model.mean_module.constant.reshape(())).unsqueeze(1)
    whitened = torch.linalg.solve_triangular(factor, residual, upper=False)
    n = len(targets)
    log_det = 2.0 * torch.log(torch.diagonal(factor)).sum()
    return 0.5 * ((whitened**2).sum() + log_det + n * math.log(2 * math.pi)) / n


def _training_factor(model: DeepKernelGP, z: torch.Tensor) -> torch.Tensor:
    """The lower Cholesky factor of the training rows' covariance, k(z, z) + noise·I."""
    noise = model.likelihood.noise.reshape(())
    eye = torch.eye(len(z), dtype=z.dtype, device=z.device)
    return _cholesky(matern_52(model, z) + noise * eye)


def matern_52(
    model: DeepKernelGP, z1: torch.Tensor, z2: torch.Tensor | None = None
) -> torch.Tensor:
    """``model.covar_module(z1, z2)`` as a dense matrix (``z2`` None: ``z1`` with itself):
    s·(1 + √5 d + 5/3 d²)·exp(−√5 d), d the lengthscale-scaled distance (centred on z1's
    mean, as gpytorch does). Written in few operations, since a fine-tuning step at n = 100
    is mostly per-operation overhead (:class:`Matern52OfSquared`)."""
    kernel = model.covar_module.base_kernel
    centre = z1.mean(dim=0, keepdim=True)
    a = (z1 - centre) / kernel.lengthscale
    b = a if z2 is None else (z2 - centre) / kernel.lengthscale
    a_norms = (a * a).sum(1)
    b_norms = a_norms if z2 is None else (b * b).sum(1)
    squared = torch.addmm(a_norms.unsqueeze(1) + b_norms.unsqueeze(0), a, b.T, alpha=-2.0)
    return Matern52OfSquared.apply(squared, model.covar_module.outputscale)


class Matern52OfSquared(torch.autograd.Function):
    """k = s·(1 + r + r²/3)·exp(−r) with r = √(5·d²), from the squared distances d² and the
    scale s, its derivative written out: ∂k/∂d² = −(5s/6)·(1 + r)·exp(−r), ∂k/∂s = k/s.

    Through autograd the same formula records eleven graph nodes and runs about fourteen
    operations backward on each kernel matrix (profiled); as one node, computed in place
    where no gradient needs the value, the kernel's forward and backward at n = 100 took
    1.70 ms instead of 2.09 (micro-benchmark, idle). As autograd's ``clamp_min`` does, a d²
    below 1e-30 (a row with itself, in rounding error) passes no gradient."""

    @staticmethod
    def forward(ctx: Any, squared: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        root5 = squared.clamp_min(SQUARED_FLOOR).mul_(5.0).sqrt_()
        decay = torch.neg(root5).exp_()
        shape = (root5 + 3.0).mul_(root5).add_(3.0).mul_(decay)  # 3·(1 + r + r²/3)·exp(−r)
        if not any(ctx.needs_input_grad):  # scoring: nothing kept, the scale applied in place
            return shape.mul_(scale / 3.0)
        ctx.save_for_backward(root5, decay, shape, squared < SQUARED_FLOOR, scale)
        return shape * (scale / 3.0)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        root5, decay, shape, floor, scale = ctx.saved_tensors
        grad_squared = grad_scale = None
        if ctx.needs_input_grad[0]:
            slope = (root5 + 1.0).mul_(decay).mul_(scale * (-5.0 / 6.0)).masked_fill_(floor, 0.0)
            grad_squared = grad * slope
        if ctx.needs_input_grad[1]:
            grad_scale = ((grad * shape).sum() / 3.0).reshape(scale.shape)
        return grad_squared, grad_scale


@dataclass
class Steps:
    """How a model is trained on a fixed set of observations (the test-time fine-tuning)."""

    #: at most this many Adam steps (the paper's E_test = 100)
    steps: int = 100
    lr: float = 1e-3
    #: stop when the loss has changed by less than ``tolerance`` for more than ``patience``
    #: steps in a row (the authors' code), then restore the best-loss weights
    tolerance: float = 1e-4
    patience: int = 16


def fine_tune(
    model: DeepKernelGP,
    packed: torch.Tensor,
    targets: torch.Tensor,
    parameters: list[torch.nn.Parameter],
    settings: Steps,
) -> float:
    """Adam on the NLL of one task's observations, updating ``parameters`` only; returns the
    best NLL reached (its weights restored). A step whose kernel matrix cannot be factorised
    ends the training at the best weights so far."""
    optimiser = torch.optim.Adam(parameters, lr=settings.lr, fused=True)
    best, best_values, calm, last = math.inf, _values(parameters), 0, math.inf
    model.set_train_data(packed, targets, strict=False)
    model.train()  # once: switching ~20 modules at every step cost 4 % of a fit (profiled)
    for _ in range(settings.steps):
        optimiser.zero_grad()
        try:
            loss = _nll(model, packed, targets)
            loss.backward()
        except NUMERICAL_ERRORS:
            break
        value = float(loss.item())
        if not math.isfinite(value):
            break
        if value < best:
            best, best_values = value, _values(parameters)
        calm = calm + 1 if abs(last - value) < settings.tolerance else 0
        last = value
        if calm > settings.patience:
            break
        optimiser.step()
    with torch.no_grad():
        for parameter, value in zip(parameters, best_values, strict=True):
            parameter.copy_(value)
    return best


def _values(parameters: list[torch.nn.Parameter]) -> list[torch.Tensor]:
    return [p.detach().clone() for p in parameters]


def posterior(
    model: DeepKernelGP, packed: torch.Tensor, chunk: int = 8192
) -> tuple[np.ndarray, np.ndarray]:
    """The latent function's mean and std at ``packed`` (standardised scale), from the
    training data set on ``model``.

    Written out (Cholesky of the training kernel matrix, then per test row its cross-
    covariance) rather than through gpytorch's predictive distribution, which builds the
    test rows' whole covariance matrix to read its diagonal: scoring a pool of 38,000
    pipelines would cost minutes."""
    model.eval()
    with torch.no_grad():
        train_z = model.embed(model.train_inputs[0])
        targets = model.train_targets
        kernel = model.covar_module
        prior_mean = model.mean_module.constant.reshape(())
        factor = _training_factor(model, train_z)
        alpha = torch.cholesky_solve((targets - prior_mean).unsqueeze(1), factor)
        means, stds = [], []
        for start in range(0, len(packed), chunk):
            z = model.embed(packed[start : start + chunk])
            cross = matern_52(model, z, train_z)
            means.append((prior_mean + cross @ alpha).squeeze(1).numpy())
            solved = torch.linalg.solve_triangular(factor, cross.T, upper=False)
            variance = kernel.outputscale - (solved**2).sum(dim=0)
            stds.append(np.sqrt(np.clip(variance.numpy(), 1e-12, None)))
    return np.concatenate(means), np.concatenate(stds)


def _cholesky(matrix: torch.Tensor) -> torch.Tensor:
    """The lower Cholesky factor, with growing jitter when the matrix is not numerically
    positive definite (near-duplicate pipelines)."""
    jittered = matrix
    for attempt in range(6):
        factor, info = torch.linalg.cholesky_ex(jittered)
        if int(info) == 0:
            return factor
        jitter = 1e-8 * 10**attempt * float(matrix.diagonal().mean())
        eye = torch.eye(len(matrix), dtype=matrix.dtype, device=matrix.device)
        jittered = matrix + jitter * eye
    raise torch.linalg.LinAlgError("deeppipe: the kernel matrix is not positive definite")


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` for the block (None: unchanged)."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
