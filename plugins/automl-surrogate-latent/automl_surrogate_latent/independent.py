"""Independent GPs, one per algorithm: the surrogate of Bandit BO (Nguyen et al. 2020).

The shared-latent-space paper's closest baseline: every algorithm of the algorithm stage gets
a GP over its own inputs (its hyper-parameters and, on pipeline spaces, the other stages'
columns: the same inputs :mod:`automl_surrogate_latent.inputs` gives its MLP), and nothing is
shared between algorithms. smbo's expected improvement over every candidate, against the best
loss of any algorithm, is then Bandit BO's "maximise each arm's acquisition, take the global
argmax".

Each GP is scikit-learn's exact GP: a constant times an ARD Matérn 5/2 kernel plus white
noise, hyper-parameters by maximum marginal likelihood. The losses are standardised once over
every observation, so the GPs' prior (mean 0, variance 1) is the observed losses' spread and
an algorithm not observed yet is predicted at that prior.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from automl_core.contracts import Surrogate, TaskDescription
from automl_core.space import (
    EncodingColumn,
    VectorSpace,
    check_columns,
    check_encoded,
    check_losses,
)
from automl_spaces.acquisition import standardise
from automl_surrogate_latent.inputs import RowPacker

WHERE = "independent-gp surrogate"


class IndependentGPs(Surrogate):
    """One GP per algorithm of the space's algorithm stage, each on that algorithm's rows."""

    def __init__(self, stage: str | None = None, restarts: int = 2, seed: int = 0) -> None:
        if not isinstance(restarts, int) or restarts < 0:
            raise ValueError(f"restarts: got {restarts!r}, expected an integer >= 0")
        self.stage, self.restarts, self.seed = stage, restarts, seed
        self._packer: RowPacker | None = None
        self._gps: dict[int, GaussianProcessRegressor] = {}
        self._scale = (0.0, 1.0)

    def prepare(self, columns: Sequence[EncodingColumn]) -> None:
        """Told the columns only, every row is one algorithm's: one GP over every column."""
        check_columns(columns, WHERE)
        if self._packer is None:
            self._packer = RowPacker.of_columns(list(columns))

    def prepare_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:
        """The algorithms are the components of the space's algorithm stage (``stage``,
        by default the last)."""
        self._packer = RowPacker.of_space(space, self.stage)

    def fit(self, X: np.ndarray, y: np.ndarray) -> IndependentGPs:
        packer = self._checked_packer(X)
        y = check_losses(y, len(X), WHERE)
        z, mean, scale = standardise(y)
        self._scale = (mean, scale)
        packed = packer(np.asarray(X, dtype=float))
        self._gps = {}
        for m, width in enumerate(packer.inputs.widths):
            rows = np.flatnonzero(packed[:, 0] == m)
            if len(rows):
                self._gps[m] = self._fitted_gp(packed[rows, 1 : 1 + width], z[rows])
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        packer = self._checked_packer(X)
        packed = packer(np.asarray(X, dtype=float))
        mean, std = np.zeros(len(packed)), np.ones(len(packed))
        for m, gp in self._gps.items():
            rows = np.flatnonzero(packed[:, 0] == m)
            if len(rows):
                width = packer.inputs.widths[m]
                mean[rows], std[rows] = gp.predict(packed[rows, 1 : 1 + width], return_std=True)
        center, scale = self._scale
        return mean * scale + center, np.maximum(std, 1e-9) * scale

    def _fitted_gp(self, inputs: np.ndarray, z: np.ndarray) -> GaussianProcessRegressor:
        width = inputs.shape[1]
        kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(
            length_scale=np.full(width, 0.5), length_scale_bounds=(1e-2, 1e2), nu=2.5
        ) + WhiteKernel(1e-2, (1e-6, 1.0))
        gp = GaussianProcessRegressor(
            kernel,
            n_restarts_optimizer=self.restarts if len(z) > 1 else 0,
            random_state=self.seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return gp.fit(inputs, z)

    def _checked_packer(self, X: np.ndarray) -> RowPacker:
        if self._packer is None:
            raise RuntimeError(f"{WHERE}: needs prepare() or prepare_space() before fit()")
        check_encoded(np.asarray(X, dtype=float), self._packer.inputs.network.columns, WHERE)
        return self._packer
