"""The meta-feature provider ``dida``: a trained Dida network's meta-features of a dataset.

The network was trained on patches (a few hundred rows, 2-15 features); it describes a whole
dataset the same way, as the mean of its meta-features over ``samples`` patches drawn with
``seed`` at the training's largest sizes (every row and feature of a smaller dataset). A
regression target is cut into ``REGRESSION_BINS`` quantile classes: the network reads labels
only as "same class or not" between neighbours.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from automl_core.contracts import MetaFeatureProvider
from automl_core.errors import AutoMLError
from automl_metafeatures_dida.network import Architecture, Dida, DidaWeights, Patch
from automl_metafeatures_dida.patches import PatchSizes, Training
from automl_metafeatures_dida.tables import numeric_table
from automl_metafeatures_dida.train import (
    SHIPPED,
    VALIDATION_SHARE,
    checkpoint_folder,
    checkpoint_key,
    default_corpus,
)

#: Quantile classes a continuous target is cut into.
REGRESSION_BINS = 5


class DidaMetaFeatures(MetaFeatureProvider):
    """``weights``: a trained network's ``.npz`` (None: the checkpoint ``automl dida train``
    makes with its default settings, the cache's if it trained one, else the one shipped
    with this plugin). The file must exist when the provider is built, so that ``automl
    validate`` and the start of a run say so, not the meta-features step of a run."""

    def __init__(self, weights: str | Path | None = None, samples: int = 10, seed: int = 0) -> None:
        if not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples: got {samples!r}, expected a positive integer")
        self.path = Path(weights) if weights is not None else _default_checkpoint()
        if not self.path.exists():
            raise AutoMLError(f"dida: no weights at {self.path}")
        self.weights, self.samples, self.seed = weights, samples, seed
        self._network: Dida | None = None
        self._sizes = PatchSizes()

    def compute(self, X: pd.DataFrame, y: np.ndarray, task: str) -> dict[str, float]:
        network = self._loaded()
        x, labels = numeric_table(X, np.asarray(y))
        if task == "regression":
            labels = _quantile_classes(np.asarray(labels, dtype=float))
        rng = np.random.default_rng(self.seed)
        rows = min(len(x), self._sizes.rows[1])
        features = min(x.shape[1], self._sizes.features[1])
        described = []
        with torch.no_grad():
            for _ in range(self.samples):
                picked = rng.choice(len(x), rows, replace=False)
                columns = rng.choice(x.shape[1], features, replace=False)
                patch = Patch.of(
                    x[np.ix_(picked, columns)], labels[picked], network.architecture.neighbours
                )
                described.append(network.metafeatures(patch).numpy())
        mean = np.mean(described, axis=0)
        return {f"dida_{i}": float(value) for i, value in enumerate(mean)}

    def _loaded(self) -> Dida:
        if self._network is None:
            self._network = DidaWeights.load(self.path).network()
        return self._network


def _default_checkpoint() -> Path:
    """The network trained with the default settings: the cache's, when ``automl dida
    train`` made one here, else the one shipped with the plugin (:data:`SHIPPED`). Without
    any checkpoint in the cache the answer is known without naming the default corpus (which
    reads KEEL's list of datasets, a download on a fresh machine), offline too."""
    folder = checkpoint_folder()
    if folder.is_dir() and any(folder.glob("*.npz")):
        key = checkpoint_key(default_corpus(), Architecture(), Training(), VALIDATION_SHARE)
        if (folder / f"{key}.npz").exists():
            return folder / f"{key}.npz"
    if SHIPPED.exists():
        return SHIPPED
    raise AutoMLError(
        "dida: no trained network with the default settings (none shipped with this install, "
        "none in the cache); train one with `automl dida train` (KEEL's 43 datasets, about 12 "
        "minutes on one core) or name trained weights: metafeatures: {name: dida, params: "
        "{weights: FILE}}"
    )


def _quantile_classes(values: np.ndarray) -> np.ndarray:
    edges = np.nanquantile(values, np.linspace(0, 1, REGRESSION_BINS + 1)[1:-1])
    return np.searchsorted(edges, values)
