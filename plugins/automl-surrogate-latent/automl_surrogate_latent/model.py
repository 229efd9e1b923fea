"""The multi-task GP on a shared latent space (Ishikawa et al., Eqs. 3-6).

- φ^(m): one MLP per algorithm, two hidden layers of ``hidden`` tanh units, to the latent
  space U (``latent`` dimensions, 3 by default). Tanh rather than ReLU: the prior mean is a
  quadratic bowl in u, and a smooth map keeps the bowl smooth in the hyper-parameters (the
  paper does not say which activation).
- k((u, a), (u', a')) = RBF(u, u') · B[a, a'], with B = w wᵀ + diag(v) of rank 1 (gpytorch's
  ``IndexKernel``): the intrinsic coregionalisation model, the linear model of
  coregionalisation with one component, as the paper's "rank 1, the default of gpytorch".
- μ0(u) = offset + ‖u‖²: the paper's −‖u‖² + y_best for an accuracy, written for a loss
  (lower is better), so the bowl's bottom, at the origin, is the best.

Losses are standardised per dataset (mean 0, std 1) before the GP sees them, in
pre-training and on the target alike (the paper allows "appropriate standardization" of
μ0; one scale for every dataset is what lets a source's bowl serve a target).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import gpytorch
import numpy as np
import torch
from linear_operator.utils.errors import NanError, NotPSDError
from torch import nn

#: float64 throughout: the sets are small (hundreds of rows) and the Cholesky factorisations
#: of near-duplicate configurations need it.
DTYPE = torch.float64
NUMERICAL_ERRORS = (NotPSDError, NanError, torch.linalg.LinAlgError)
#: The paper's latent dimension (chosen from {2, 3, 4}).
LATENT = 3
#: Hidden units per layer of an algorithm's MLP (the paper does not say).
HIDDEN = 32


class AlgorithmEmbeddings(nn.Module):
    """φ^(1..M): per algorithm, an MLP from its inputs (``widths[m]`` of them) to U."""

    def __init__(self, widths: Sequence[int], hidden: int = HIDDEN, latent: int = LATENT):
        super().__init__()
        self.widths, self.latent = tuple(int(w) for w in widths), latent
        self.mlps = nn.ModuleList(
            nn.Sequential(
                nn.Linear(width, hidden),
                nn.Tanh(),
                nn.Linear(hidden, hidden),
                nn.Tanh(),
                nn.Linear(hidden, latent),
            )
            for width in self.widths
        )
        self.to(DTYPE)

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        """u for packed rows (the algorithm's index, then its inputs zero-padded)."""
        algorithms = packed[:, 0].round().long()
        u = packed.new_zeros(len(packed), self.latent)
        for m, mlp in enumerate(self.mlps):
            hit = torch.nonzero(algorithms == m).squeeze(1)
            if len(hit):
                u = u.index_put((hit,), mlp(packed[hit, 1 : 1 + self.widths[m]]))
        return u

    def last_layers(self) -> list[nn.Parameter]:
        """Each MLP's last layer: what fine-tuning on a target moves (the paper)."""
        return [p for mlp in self.mlps for p in mlp[-1].parameters()]


class LatentGP(gpytorch.models.ExactGP):
    """The multi-task GP over (φ^(a)(λ), a)."""

    def __init__(self, embeddings: AlgorithmEmbeddings, rank: int = 1) -> None:
        likelihood = gpytorch.likelihoods.GaussianLikelihood(
            noise_constraint=gpytorch.constraints.GreaterThan(1e-4)
        )
        super().__init__(None, None, likelihood)
        self.embeddings = embeddings
        self.rbf = gpytorch.kernels.RBFKernel()
        self.tasks = gpytorch.kernels.IndexKernel(num_tasks=len(embeddings.mlps), rank=rank)
        #: μ0's constant: the best standardised loss of the dataset the bowl was fitted to
        self.register_buffer("offset", torch.zeros((), dtype=DTYPE))
        self.to(DTYPE)

    def prior_mean(self, u: torch.Tensor) -> torch.Tensor:
        return self.offset + (u**2).sum(dim=1)

    def forward(self, packed: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        u = self.embeddings(packed)
        algorithms = packed[:, :1].round().long()
        covariance = self.rbf(u).mul(self.tasks(algorithms))
        return gpytorch.distributions.MultivariateNormal(self.prior_mean(u), covariance)

    def kernel_parameters(self) -> list[nn.Parameter]:
        """The GP's hyper-parameters: length-scale, task covariance, noise."""
        return [*self.rbf.parameters(), *self.tasks.parameters(), *self.likelihood.parameters()]

    def task_covariance(self) -> torch.Tensor:
        """B = w wᵀ + diag(v), M x M."""
        return self.tasks.covar_matrix.to_dense()


@dataclass
class Fitting:
    """How the GP is fitted to one dataset's observations (Eq. 5)."""

    #: at most this many Adam steps
    steps: int = 100
    lr: float = 0.01
    #: α: the pull of the MLP weights back to the pre-trained ones (the paper's 1e-3)
    alpha: float = 1e-3
    #: stop when the loss moved by less than ``tolerance`` for more than ``patience`` steps
    tolerance: float = 1e-4
    patience: int = 10


def fit_gp(
    model: LatentGP,
    packed: torch.Tensor,
    targets: torch.Tensor,
    trainable: list[nn.Parameter],
    anchors: dict[int, torch.Tensor] | None,
    settings: Fitting,
) -> float:
    """Adam on Eq. 5: the GP's negative log marginal likelihood (summed over observations)
    plus α Σ_m ‖θ_m − θ_m^pre‖² / K_m over the ``trainable`` MLP weights that have an
    anchor (``anchors``: id(parameter) -> pre-trained value); returns the best loss reached,
    its weights restored. A step whose kernel matrix cannot be factorised ends the fit."""
    parameters = [*model.kernel_parameters(), *trainable]
    optimiser = torch.optim.Adam(parameters, lr=settings.lr)
    model.set_train_data(packed, targets, strict=False)
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    best, best_values, calm, last = math.inf, _values(parameters), 0, math.inf
    for _ in range(settings.steps):
        optimiser.zero_grad()
        try:
            loss = -mll(model(packed), targets) * len(targets)
            if anchors:
                loss = loss + settings.alpha * _pull_back(trainable, anchors)
            loss.backward()
        except NUMERICAL_ERRORS:
            break
        value = float(loss.item())
        if not math.isfinite(value):
            break
        if value < best:
            best, best_values = value, _values(parameters)
        calm = calm + 1 if abs(last - value) < settings.tolerance * max(1.0, abs(value)) else 0
        last = value
        if calm > settings.patience:
            break
        optimiser.step()
    with torch.no_grad():
        for parameter, value in zip(parameters, best_values, strict=True):
            parameter.copy_(value)
    return best


def _pull_back(trainable: list[nn.Parameter], anchors: dict[int, torch.Tensor]) -> torch.Tensor:
    """Σ over anchored weights of ‖θ − θ^pre‖² / (number of weights): Eq. 6 per tensor."""
    terms = [((p - anchors[id(p)]) ** 2).sum() / p.numel() for p in trainable if id(p) in anchors]
    return torch.stack(terms).sum()


def _values(parameters: list[nn.Parameter]) -> list[torch.Tensor]:
    return [p.detach().clone() for p in parameters]


def posterior(
    model: LatentGP, packed: torch.Tensor, chunk: int = 8192
) -> tuple[np.ndarray, np.ndarray]:
    """The latent function's mean and std at ``packed`` (standardised scale) given the
    training data set on ``model``, written out (Cholesky, then per test row its cross-
    covariance): gpytorch's predictive distribution would build the test rows' whole
    covariance matrix to read its diagonal, and a pool has tens of thousands of rows."""
    model.eval()
    with torch.no_grad():
        train = model.train_inputs[0]
        train_u = model.embeddings(train)
        train_a = train[:, 0].round().long()
        tasks = model.task_covariance()
        matrix = model.rbf(train_u).to_dense() * tasks[train_a][:, train_a]
        matrix = matrix + model.likelihood.noise * torch.eye(len(train), dtype=DTYPE)
        factor = cholesky(matrix)
        residual = (model.train_targets - model.prior_mean(train_u)).unsqueeze(1)
        alpha = torch.cholesky_solve(residual, factor)
        means, stds = [], []
        for start in range(0, len(packed), chunk):
            rows = packed[start : start + chunk]
            u, a = model.embeddings(rows), rows[:, 0].round().long()
            cross = model.rbf(u, train_u).to_dense() * tasks[a][:, train_a]
            means.append((model.prior_mean(u) + (cross @ alpha).squeeze(1)).numpy())
            solved = torch.linalg.solve_triangular(factor, cross.T, upper=False)
            variance = tasks.diagonal()[a] - (solved**2).sum(dim=0)
            stds.append(np.sqrt(np.clip(variance.numpy(), 1e-12, None)))
    return np.concatenate(means), np.concatenate(stds)


def cholesky(matrix: torch.Tensor) -> torch.Tensor:
    """The lower Cholesky factor, with growing jitter when the matrix is not numerically
    positive definite (near-duplicate configurations)."""
    jitter = 0.0
    for attempt in range(6):
        factor, info = torch.linalg.cholesky_ex(
            matrix + jitter * torch.eye(len(matrix), dtype=matrix.dtype)
        )
        if int(info) == 0:
            return factor
        jitter = 1e-8 * 10**attempt * float(matrix.diagonal().mean())
    raise torch.linalg.LinAlgError("latent surrogate: the kernel matrix is not positive definite")
