"""A Gaussian-process surrogate of the loss, for model-based search (SMBO with EI and friends).

:class:`GPSurrogate` fits an exact GP (:mod:`automl_surrogate_gp.model`) to standardised losses
by maximising the marginal likelihood (plus the log-priors of the hyper-parameters) and
predicts the mean and standard deviation of the *latent* loss, i.e. without the observation
noise, on the original scale. The latent std is what expected improvement is defined with: a
point already evaluated twice has little left to teach us even if its losses were noisy.

It is built to be refitted after every trial of a search: each fit starts from the previous
fit's hyper-parameters when the input width has not changed (a warm start), so that a few
L-BFGS steps suffice; and it must never stop a search on a numerical accident. The ladder when
a Cholesky factorisation fails (a kernel matrix that is not numerically positive definite:
duplicated rows with a tiny noise, extreme lengthscales):

1. refit with 100x more jitter on the diagonal (up to twice), starting cold;
2. keep the starting hyper-parameters (see :meth:`ExactGPModel.reset_hyperparameters`:
   outputscale 1, noise 1e-2), without optimising them: the kernel matrix's smallest
   eigenvalue is then at least 1e-2, so it factorises for any inputs;
3. as a last resort predict the training mean everywhere with the training standard deviation
   as uncertainty (what the GP prior itself says far from the data), with a
   :class:`GPFallbackWarning`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import attrs
import gpytorch
import numpy as np
import scipy.optimize
import torch
from linear_operator.utils.errors import NanError, NotPSDError
from linear_operator.utils.warnings import NumericalWarning
from threadpoolctl import ThreadpoolController

from automl_core.contracts import Surrogate
from automl_core.space import EncodingColumn, check_losses
from automl_spaces.options import boolean, integer, number, optional, plain_integer
from automl_surrogate_gp.encoding import InputEncoder
from automl_surrogate_gp.model import DTYPE, ExactGPModel, ExactPosterior, Hyperparameters

#: Failures that mean "this kernel matrix could not be factorised", not a bug.
NUMERICAL_ERRORS = (NotPSDError, NanError, torch.linalg.LinAlgError)
#: Each retry multiplies the jitter by this.
JITTER_GROWTH = 100.0
JITTER_RETRIES = 2
#: Rows predicted at once; bounds the test x train cross-covariance held in memory.
PREDICT_CHUNK = 4096


class GPFallbackWarning(RuntimeWarning):
    """The GP could not be fitted as asked and a simpler model stands in for it."""


class _NonFiniteLoss(ArithmeticError):
    """The marginal likelihood became NaN or infinite during optimisation."""


@dataclass(frozen=True)
class Standardiser:
    """Targets to mean 0, std 1 and back; constant targets keep a scale of 1."""

    mean: float
    scale: float

    @classmethod
    def of(cls, y: np.ndarray) -> Standardiser:
        mean = float(np.mean(y))
        std = float(np.std(y))
        # Relative threshold: losses of 1e3 that agree to 1e-13 are constant for our purposes.
        constant = std <= 1e-12 * max(1.0, abs(mean))
        return cls(mean, 1.0 if constant else std)

    def forward(self, y: np.ndarray) -> np.ndarray:
        return (y - self.mean) / self.scale

    def inverse(self, mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return mean * self.scale + self.mean, std * self.scale


@attrs.define(slots=False, eq=False)
class GPSurrogate(Surrogate):
    """Exact GP (constant mean, ARD Matern-5/2) fitted by type-II maximum a posteriori.

    Parameters (the recipe's ``params``):

    * ``iterations``: L-BFGS-B iterations for a cold fit (the first fit, or after the input
      width changed); each costs about one marginal-likelihood evaluation.
    * ``warm_iterations``: iterations when starting from the previous fit's hyper-parameters.
    * ``warm_start``: start from the previous fit's hyper-parameters when the width matches.
    * ``tolerance``: stop when an iteration improves the loss (negative log marginal
      likelihood per observation) by less than this relative amount.
    * ``include_noise``: predict the std of a new noisy observation instead of the latent loss.
    * ``threads``: torch and BLAS threads while fitting and predicting (restored afterwards);
      ``None`` leaves both alone. One is fastest for the small matrices of a search (two took
      2.5-3.5x longer on a busy 2-core machine) and leaves the other cores to the evaluations
      running alongside. Thread counts are process-wide: do not fit surrogates with
      different ``threads`` from concurrent Python threads.
    * ``jitter``: added to the diagonal of the kernel matrix when its Cholesky factorisation
      fails (times 10 and 100 by gpytorch, then times 100 per retry of the whole fit).

    L-BFGS-B rather than Adam (``benchmarks/compare_optimizers.py``, 200 points of a 10-d
    function): L-BFGS-B reached the held-out error of 300 Adam steps (learning rate 0.1) in
    0.22 s instead of 2.8 s; 100 Adam steps took 0.76 s for a slightly worse fit.
    """

    iterations: int = attrs.field(default=100, converter=plain_integer, validator=integer(0))
    warm_iterations: int = attrs.field(default=30, converter=plain_integer, validator=integer(0))
    # an instance attribute, as before: the contract's ``warm_start(state)`` method stays the
    # class's (what ``prepared_surrogate`` looks at)
    warm_start: bool = attrs.field(default=True, validator=boolean())
    tolerance: float = attrs.field(default=1e-4, validator=number(above=0))
    include_noise: bool = attrs.field(default=False, validator=boolean())
    threads: int | None = attrs.field(
        default=1, converter=plain_integer, validator=optional(integer(1))
    )
    jitter: float = attrs.field(default=1e-8, validator=number(above=0))

    def __attrs_post_init__(self) -> None:
        self.tolerance, self.jitter = float(self.tolerance), float(self.jitter)
        self._encoder = InputEncoder()
        self._model: ExactGPModel | None = None
        self._posterior: ExactPosterior | None = None
        self._fitted = False
        self._width = 0
        self._standardiser = Standardiser(0.0, 1.0)
        self._warm_state: dict[str, torch.Tensor] | None = None

    # -- the Surrogate contract --------------------------------------------------------------
    def prepare(self, columns: Sequence[EncodingColumn]) -> None:
        """One-hot encode the categorical columns from now on (see
        :mod:`automl_surrogate_gp.encoding` for how inactive values are treated)."""
        self._encoder = InputEncoder.from_columns(columns)
        self._warm_state = None

    def fit(self, X: np.ndarray, y: np.ndarray) -> GPSurrogate:
        """Standardise ``y``, fit the hyper-parameters (warm-started from the previous fit)
        and factorise the training covariance for :meth:`predict`."""
        inputs = self._encoder.transform(X, "gp surrogate")
        targets = check_losses(y, len(inputs), "gp surrogate")
        if len(inputs) == 0:
            raise ValueError("gp surrogate: fit() needs at least one observation, got none")
        self._standardiser = Standardiser.of(targets)
        x = torch.as_tensor(inputs, dtype=DTYPE)
        t = torch.as_tensor(self._standardiser.forward(targets), dtype=DTYPE)
        with _limited_threads(self.threads), _quiet_jitter_warnings():
            fitted = self._fit_with_fallbacks(x, t)
        self._model, self._posterior = fitted if fitted is not None else (None, None)
        self._width = inputs.shape[1]
        self._fitted = True
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and std of the latent loss at each row of ``X`` (of a new observation with
        ``include_noise``), on the scale of the losses given to :meth:`fit`."""
        if not self._fitted:
            raise RuntimeError("gp surrogate: predict() called before fit()")
        inputs = self._encoder.transform(X, "gp surrogate")
        if inputs.shape[1] != self._width:
            raise ValueError(
                f"gp surrogate: X has {inputs.shape[1]} kernel inputs, the model was fitted "
                f"on {self._width}"
            )
        if self._posterior is None:
            return self._constant_prediction(len(inputs))
        with _limited_threads(self.threads):
            mean, std = self._predict_in_chunks(self._posterior, inputs)
        return self._standardiser.inverse(mean, std)

    # -- inspection --------------------------------------------------------------------------
    def hyperparameters(self) -> Hyperparameters | None:
        """The fitted hyper-parameters (standardised target scale); None before a fit or when
        the constant fallback stands in."""
        return None if self._model is None else self._model.hyperparameters()

    # -- fitting -----------------------------------------------------------------------------
    def _fit_with_fallbacks(
        self, x: torch.Tensor, t: torch.Tensor
    ) -> tuple[ExactGPModel, ExactPosterior] | None:
        """The ladder of the module docstring: optimised fit with growing jitter, then default
        hyper-parameters, then None (the constant prediction)."""
        warm_state = self._warm_state if self.warm_start else None
        for attempt in range(JITTER_RETRIES + 1):
            jitter = self.jitter * JITTER_GROWTH**attempt
            try:
                model = self._optimised_model(x, t, jitter, warm_state)
                posterior = ExactPosterior.of(model, jitter)
            except (*NUMERICAL_ERRORS, _NonFiniteLoss):
                warm_state = None  # the warm start may be what led into trouble
                continue
            self._warm_state = model.raw_state()
            return model, posterior
        self._warm_state = None
        try:
            model = ExactGPModel(x, t)
            posterior = ExactPosterior.of(model, jitter)
        except NUMERICAL_ERRORS as error:
            _warn_fallback(f"no GP could be fitted ({error}); predicting the training mean")
            return None
        _warn_fallback("fitting the GP's hyper-parameters failed; using their defaults")
        return model, posterior

    def _optimised_model(
        self,
        x: torch.Tensor,
        t: torch.Tensor,
        jitter: float,
        warm_state: dict[str, torch.Tensor] | None,
    ) -> ExactGPModel:
        model = ExactGPModel(x, t)
        warm = warm_state is not None and model.load_raw_state(warm_state)
        steps = self.warm_iterations if warm else self.iterations
        if steps > 0:
            with _exact_linear_algebra(jitter):
                self._optimise(model, x, t, steps)
        return model

    def _optimise(self, model: ExactGPModel, x: torch.Tensor, t: torch.Tensor, steps: int) -> None:
        """Minimise the negative log marginal likelihood (per observation) minus the log-priors
        over the unconstrained parameters, with scipy's L-BFGS-B."""
        model.train()
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
        vector = ParameterVector(list(model.parameters()))

        def loss_and_gradient(values: np.ndarray) -> tuple[float, np.ndarray]:
            vector.set(values)
            loss = -mll(model(x), t)
            if not torch.isfinite(loss):
                raise _NonFiniteLoss(f"marginal likelihood became {loss.item()}")
            loss.backward()
            return float(loss.detach()), vector.gradient()

        result = scipy.optimize.minimize(
            loss_and_gradient,
            vector.get(),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": steps, "ftol": self.tolerance, "gtol": 1e-5},
        )
        vector.set(result.x)

    # -- predicting --------------------------------------------------------------------------
    def _predict_in_chunks(
        self, posterior: ExactPosterior, inputs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Standardised mean and std; in chunks, so that memory stays bounded."""
        means, stds = [np.empty(0)], [np.empty(0)]
        for start in range(0, len(inputs), PREDICT_CHUNK):
            x = torch.as_tensor(inputs[start : start + PREDICT_CHUNK], dtype=DTYPE)
            mean, std = posterior.predict(x, self.include_noise)
            means.append(mean.numpy())
            stds.append(std.numpy())
        return np.concatenate(means), np.concatenate(stds)

    def _constant_prediction(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The last-resort prediction: standardised mean 0 and std 1 everywhere."""
        return self._standardiser.inverse(np.zeros(rows), np.ones(rows))


# -- helpers -------------------------------------------------------------------------------------
class ParameterVector:
    """A model's parameters seen as one flat float64 vector, as scipy's optimisers want."""

    def __init__(self, parameters: list[torch.nn.Parameter]) -> None:
        self.parameters = parameters
        self.sizes = [p.numel() for p in parameters]

    def get(self) -> np.ndarray:
        return np.concatenate([p.detach().cpu().numpy().ravel() for p in self.parameters])

    def set(self, values: np.ndarray) -> None:
        chunks = torch.split(torch.as_tensor(values, dtype=DTYPE), self.sizes)
        with torch.no_grad():
            for parameter, chunk in zip(self.parameters, chunks, strict=True):
                parameter.copy_(chunk.view_as(parameter))
                parameter.grad = None

    def gradient(self) -> np.ndarray:
        return np.concatenate(
            [
                np.zeros(p.numel()) if p.grad is None else p.grad.cpu().numpy().ravel()
                for p in self.parameters
            ]
        )


@contextmanager
def _exact_linear_algebra(jitter: float) -> Iterator[None]:
    """Cholesky everywhere (gpytorch switches to conjugate gradients above 800 points, which is
    approximate and non-deterministic), with our jitter (times 1, 10, 100) when it fails."""
    with ExitStack() as stack:
        stack.enter_context(gpytorch.settings.max_cholesky_size(10**9))
        stack.enter_context(gpytorch.settings.fast_computations(False, False, False))
        stack.enter_context(
            gpytorch.settings.cholesky_jitter(float_value=jitter, double_value=jitter)
        )
        stack.enter_context(gpytorch.settings.cholesky_max_tries(3))
        yield


@contextmanager
def _limited_threads(threads: int | None) -> Iterator[None]:
    """Run with ``threads`` torch threads and BLAS threads, then restore the caller's settings.

    BLAS matters as much as torch: scipy's L-BFGS-B calls OpenBLAS for tiny vectors, and
    OpenBLAS worker threads that spin while torch computes doubled the CPU time of a fit on a
    2-core machine.
    """
    if threads is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with _blas_controller().limit(limits=threads, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(previous)


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """Finding the loaded BLAS libraries takes ~10 ms, so it is done once."""
    return ThreadpoolController()


@contextmanager
def _quiet_jitter_warnings() -> Iterator[None]:
    """gpytorch warns each time it adds jitter; that is expected here and handled by the
    ladder, so only our own :class:`GPFallbackWarning` reaches the user."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        yield


def _warn_fallback(message: str) -> None:
    warnings.warn(f"gp surrogate: {message}", GPFallbackWarning, stacklevel=3)
