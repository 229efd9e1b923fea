"""The gpytorch model: an exact GP with a constant mean and an ARD Matern-5/2 kernel.

Priors and bounds, for standardised targets (mean 0, variance 1) and inputs of about unit
scale (numbers in [0, 1], one-hot columns, -1 for inactive):

* lengthscales: LogNormal(sqrt(2) + log(d) / 2, sqrt(3)), the dimension-scaled prior of
  Hvarfner, Hellsten & Nardi (ICML 2024, "Vanilla Bayesian optimization performs great in
  high dimensions"). Distances between random points grow like sqrt(d), so the prior median
  lengthscale does too; with few points in a wide one-hot space the prior then favours smooth
  fits over ones that treat every observation as unrelated to the others. Bounded below by
  0.025 so that no lengthscale collapses onto a single observed value.
* outputscale: LogNormal(0, 1), centred on the variance of the standardised targets, bounded
  below by 0.01 so that constant targets do not drive it to zero.
* noise: LogNormal(-4, 1) (median 0.018 of the target variance: losses of machine-learning
  pipelines are cross-validation estimates, slightly noisy), bounded below by 1e-6 so that the
  kernel matrix stays well conditioned even with duplicated configurations.
* constant mean: no prior; it is fitted.

Everything is float64: with a noise variance down to 1e-6, kernel matrices of many close
configurations have condition numbers far beyond float32's 7 significant digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gpytorch
import torch
from gpytorch.constraints import GreaterThan
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean
from gpytorch.priors import LogNormalPrior
from linear_operator.utils.cholesky import psd_safe_cholesky

DTYPE = torch.float64
MIN_LENGTHSCALE = 0.025
MIN_OUTPUTSCALE = 0.01
MIN_NOISE = 1e-6


@dataclass(frozen=True)
class Hyperparameters:
    """Fitted hyper-parameters on their natural scale, for inspection."""

    mean: float
    outputscale: float
    noise: float
    lengthscales: tuple[float, ...]


def lengthscale_prior_loc(width: int) -> float:
    """The log-median of the lengthscale prior for ``width`` kernel inputs."""
    return math.sqrt(2.0) + 0.5 * math.log(max(width, 1))


def log_scale_bound(lower: float) -> GreaterThan:
    """``value = lower + exp(raw)``: the optimiser works on the log of the scale parameters
    (gpytorch's default is softplus, linear above 1). Lengthscales and variances matter by
    ratios, and in log space L-BFGS needed about a third fewer evaluations for the same fits
    and no longer stopped early on a flat start (measured on 10-d and auto-sklearn data)."""
    return GreaterThan(lower, transform=torch.exp, inv_transform=torch.log)


def initial_lengthscale(width: int) -> float:
    """Where a cold fit starts: the mode of the lengthscale prior, exp(loc - scale^2). It is
    shorter than the median (0.65 rather than 13 for 10 inputs): starting from an almost
    linear model, L-BFGS needed about three times as many steps to find the same optimum."""
    return math.exp(lengthscale_prior_loc(width) - 3.0)


class ExactGPModel(gpytorch.models.ExactGP):
    """f ~ GP(c, s * Matern52_ARD); y = f + Gaussian noise."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        likelihood = GaussianLikelihood(
            noise_prior=LogNormalPrior(-4.0, 1.0),
            noise_constraint=log_scale_bound(MIN_NOISE),
        )
        super().__init__(x, y, likelihood)
        width = x.shape[-1]
        loc = lengthscale_prior_loc(width)
        self.mean_module = ConstantMean()
        self.covar_module = ScaleKernel(
            MaternKernel(
                nu=2.5,
                ard_num_dims=width,
                lengthscale_prior=LogNormalPrior(loc, math.sqrt(3.0)),
                lengthscale_constraint=log_scale_bound(MIN_LENGTHSCALE),
            ),
            outputscale_prior=LogNormalPrior(0.0, 1.0),
            outputscale_constraint=log_scale_bound(MIN_OUTPUTSCALE),
        )
        self.to(DTYPE)
        self.reset_hyperparameters()

    def reset_hyperparameters(self) -> None:
        """The starting point of a cold fit: lengthscales at the mode of their prior (see
        :func:`initial_lengthscale`), outputscale 1, noise 1e-2, mean 0."""
        width = self.covar_module.base_kernel.lengthscale.shape[-1]
        start = initial_lengthscale(width)
        self.covar_module.base_kernel.lengthscale = torch.full((1, width), start, dtype=DTYPE)
        self.covar_module.outputscale = torch.tensor(1.0, dtype=DTYPE)
        self.likelihood.noise = torch.tensor(1e-2, dtype=DTYPE)
        self.mean_module.constant.data.zero_()

    def forward(self, x: torch.Tensor) -> MultivariateNormal:
        return MultivariateNormal(self.mean_module(x), self.covar_module(x))

    def raw_state(self) -> dict[str, torch.Tensor]:
        """The unconstrained parameters, detached: what a warm start reloads."""
        return {name: value.detach().clone() for name, value in self.named_parameters()}

    def load_raw_state(self, state: dict[str, torch.Tensor]) -> bool:
        """Reload :meth:`raw_state` of an earlier model; False (and nothing changed) when its
        shapes do not fit this model's, e.g. after the input width changed."""
        parameters = dict(self.named_parameters())
        if parameters.keys() != state.keys() or any(
            parameters[name].shape != value.shape for name, value in state.items()
        ):
            return False
        with torch.no_grad():
            for name, value in state.items():
                parameters[name].copy_(value)
        return True

    def hyperparameters(self) -> Hyperparameters:
        kernel = self.covar_module
        return Hyperparameters(
            mean=float(self.mean_module.constant.detach()),
            outputscale=float(kernel.outputscale.detach()),
            noise=float(self.likelihood.noise.detach().squeeze()),
            lengthscales=tuple(kernel.base_kernel.lengthscale.detach().flatten().tolist()),
        )


@dataclass(frozen=True)
class ExactPosterior:
    """The GP conditioned on the training data, factorised once for many predictions.

    gpytorch's own prediction path evaluates the full test x test kernel matrix to return
    the predictive variances (2,000 x 2,000 entries for 2,000 candidates: most of the time
    of a prediction, and memory quadratic in the number of candidates); only its diagonal is
    needed, so the standard formulas are applied here with the model's own kernel module:
    mean = c + K*x alpha, var = k** - |L^-1 Kx*|^2, with L L^T = K + noise I.
    """

    kernel: ScaleKernel
    train_x: torch.Tensor
    cholesky: torch.Tensor
    alpha: torch.Tensor
    constant: torch.Tensor
    noise: torch.Tensor

    @classmethod
    def of(cls, model: ExactGPModel, jitter: float) -> ExactPosterior:
        """Factorise ``model``'s training covariance; raises NotPSDError if even ``jitter``
        times 1, 10 and 100 on the diagonal does not make it positive definite."""
        model.eval()
        x = model.train_inputs[0]
        with torch.no_grad():
            noise = model.likelihood.noise.detach().reshape(())
            covariance = model.covar_module(x).to_dense() + noise * torch.eye(len(x), dtype=DTYPE)
            cholesky = psd_safe_cholesky(covariance, jitter=jitter, max_tries=3)
            constant = model.mean_module.constant.detach().reshape(())
            residual = (model.train_targets - constant).unsqueeze(-1)
            alpha = torch.cholesky_solve(residual, cholesky).squeeze(-1)
        return cls(model.covar_module, x, cholesky, alpha, constant, noise)

    def predict(self, x: torch.Tensor, include_noise: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and standard deviation of the latent f (plus the noise if asked) at ``x``."""
        with torch.no_grad():
            cross = self.kernel(x, self.train_x).to_dense()
            mean = self.constant + cross @ self.alpha
            reduced = torch.linalg.solve_triangular(self.cholesky, cross.mT, upper=False)
            prior = self.kernel(x, diag=True)
            variance = (prior - reduced.square().sum(dim=0)).clamp_min(0.0)
            if include_noise:
                variance = variance + self.noise
        return mean, variance.sqrt()
