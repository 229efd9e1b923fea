"""Adam against L-BFGS-B for the GP's hyper-parameters (the comparison in the README).

    python plugins/automl-surrogate-gp/benchmarks/compare_optimizers.py

Both minimise the same objective (gpytorch's exact marginal likelihood plus log-priors) from
the same starting point on the same data: 200 points of a smooth 10-d function. Reported:
the final objective, held-out MSE (divided by the variance of the held-out losses) and CPU
seconds.
"""

from __future__ import annotations

import time

import gpytorch
import numpy as np
import torch

from automl_surrogate_gp import GPSurrogate
from automl_surrogate_gp.model import DTYPE, ExactGPModel, ExactPosterior


def smooth_loss(X: np.ndarray) -> np.ndarray:
    return (
        np.sin(3 * X[:, 0])
        + 4 * (X[:, 1] - 0.5) ** 2
        + 0.5 * np.cos(5 * X[:, 2] * X[:, 3])
        + 0.1 * X[:, 4:].sum(axis=1)
    )


def objective(model: ExactGPModel) -> float:
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad():
        return float(-mll(model(model.train_inputs[0]), model.train_targets))


def adam(x: torch.Tensor, t: torch.Tensor, steps: int) -> ExactGPModel:
    model = ExactGPModel(x, t)
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.1)
    with gpytorch.settings.max_cholesky_size(10**9):
        for _ in range(steps):
            optimiser.zero_grad()
            (-mll(model(x), t)).backward()
            optimiser.step()
    return model


def held_out_mse(model: ExactGPModel, X_test: np.ndarray, t_test: np.ndarray) -> float:
    posterior = ExactPosterior.of(model, 1e-8)
    mean, _ = posterior.predict(torch.as_tensor(X_test, dtype=DTYPE), include_noise=False)
    return float(np.mean((mean.numpy() - t_test) ** 2) / np.var(t_test))


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    X, X_test = rng.random((200, 10)), rng.random((2000, 10))
    y = smooth_loss(X)
    mean, scale = y.mean(), y.std()
    x = torch.as_tensor(X, dtype=DTYPE)
    t = torch.as_tensor((y - mean) / scale, dtype=DTYPE)
    t_test = (smooth_loss(X_test) - mean) / scale
    adam(x, t, 1)  # torch.optim's first use imports torch._dynamo: leave it out of the timings
    for steps in (100, 300, 1000):
        start = time.process_time()
        model = adam(x, t, steps)
        seconds = time.process_time() - start
        print(
            f"Adam lr 0.1, {steps:4d} steps: objective {objective(model):8.4f}  "
            f"MSE/var {held_out_mse(model, X_test, t_test):.4f}  {seconds:6.2f} s cpu"
        )
    for tolerance in (1e-4, 1e-6):
        surrogate = GPSurrogate(tolerance=tolerance)
        start = time.process_time()
        surrogate.fit(X, y)
        seconds = time.process_time() - start
        model = surrogate._model
        assert model is not None
        print(
            f"L-BFGS-B, tolerance {tolerance:.0e}: objective {objective(model):8.4f}  "
            f"MSE/var {held_out_mse(model, X_test, t_test):.4f}  {seconds:6.2f} s cpu"
        )


if __name__ == "__main__":
    main()
