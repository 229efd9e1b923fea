"""Dida's network: meta-features of a dataset by layers invariant to the order of its rows,
features and labels (Rakotoarison, thesis ch. 5; Def. 5, Eqs. 5.1-5.4).

A dataset is its n points z_i = (x_i, y_i) with x_i in R^d (d any number) and a class label
y_i. An *invariant layer* maps the points to n new ones,

    h_i = mean over j in N(i) of φ(z_i, z_j)                                         (5.1)

with N(i) the ``neighbours`` nearest points of z_i (itself included; every point when
n <= ``neighbours``): the thesis's Remark 1 and its authors' code (30), which cut the n²
pairs to n·k. Distances are Euclidean on the standardised features, which no permutation of
rows, features or labels changes.

- The first layer reads any number of features (Eq. 5.4): per feature k,
  u_k = ReLU(A_u (x_i[k], x_j[k]) + b_u) in R^t, summed over k (so the order of the features
  does not matter and d may be anything); then φ_1 = ReLU(A_v (Σ_k u_k, 1[y_i ≠ y_j]) + b_v).
  The label enters once, as whether the two points share a class: renaming the classes
  changes nothing. (The thesis writes the indicator inside u, summed d times; it does not
  say how v reads it. Here v reads it once, beside the sum.)
- A second invariant layer (``second`` > 0, the thesis's 2L-Dida): φ_2 = ReLU(A_2 (h_i, h_j)
  + b_2) over the same neighbourhoods.
- Pooling: the mean over points of ReLU(A_p h_i + b_p) (a layer that reads only its second
  argument), then fully connected ReLU layers ``dense``.

The meta-features are the output of the last dense layer but one (the thesis's "penultimate
layer"); the last one is what the training tasks compare (patch identification: two
patches are judged to come from one dataset with probability exp(-‖F(z) - F(z')‖)).

Weights are saved as plain arrays (``.npz``) with a JSON header of the architecture: loading
runs no code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from automl_engine.cache import load_arrays, save_arrays

#: The neighbours each point interacts with (the authors' code).
NEIGHBOURS = 30


@dataclass(frozen=True)
class Architecture:
    """Dida's widths. The thesis gives none (parameter counts only); its authors' code uses
    t = 4 and wider layers than the CPU defaults here."""

    #: t: per-feature width of the first layer's u
    per_feature: int = 4
    #: r: the first invariant layer's width
    first: int = 32
    #: the second invariant layer's width (0: one invariant layer, 1L-Dida)
    second: int = 32
    #: the pooled width
    pooled: int = 64
    #: the dense layers after pooling; the meta-features are the last but one's output
    dense: tuple[int, ...] = (64, 32, 16)
    neighbours: int = NEIGHBOURS

    def __post_init__(self) -> None:
        if len(self.dense) < 2:
            raise ValueError("dense: at least 2 layers (the meta-features are the last but one)")
        widths = (self.per_feature, self.first, self.pooled, self.neighbours, *self.dense)
        if min(widths) < 1 or self.second < 0:
            raise ValueError(f"Dida's widths must be positive: {self}")

    @property
    def size(self) -> int:
        """How many meta-features the network gives."""
        return self.dense[-2]


@dataclass
class Patch:
    """A dataset (or a sample of its rows and features) as the network reads it: standardised
    features and class indices, with each point's neighbours."""

    x: torch.Tensor
    y: torch.Tensor
    neighbours: torch.Tensor

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray, neighbours: int = NEIGHBOURS) -> Patch:
        """``x`` (n x d, numeric, no missing value) and labels ``y`` (any hashable values)."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or len(x) != len(y) or len(x) == 0 or x.shape[1] == 0:
            raise ValueError(f"Dida: expected n x d features and n labels, got {x.shape}, {len(y)}")
        if not np.all(np.isfinite(x)):
            raise ValueError("Dida: features must be finite (impute missing values first)")
        spread = x.std(axis=0)
        x = (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
        _, classes = np.unique(np.asarray(y), return_inverse=True)
        features = torch.as_tensor(x, dtype=torch.float32)
        return cls(features, torch.as_tensor(classes), nearest(features, neighbours))


def nearest(x: torch.Tensor, k: int) -> torch.Tensor:
    """Each row's ``k`` nearest rows (itself first), by Euclidean distance (n x min(k, n))."""
    k = min(k, len(x))
    distances = torch.cdist(x, x)
    distances.fill_diagonal_(-1.0)  # a point is its own nearest, whatever the ties
    return torch.topk(distances, k, dim=1, largest=False).indices


class Dida(nn.Module):
    """The network: invariant layers, pooling, dense layers."""

    def __init__(self, architecture: Architecture | None = None) -> None:
        super().__init__()
        self.architecture = a = architecture or Architecture()
        self.per_feature = nn.Linear(2, a.per_feature)
        self.first = nn.Linear(a.per_feature + 1, a.first)
        self.second = nn.Linear(2 * a.first, a.second) if a.second else None
        width = a.second or a.first
        self.pool = nn.Linear(width, a.pooled)
        widths = (a.pooled, *a.dense)
        self.dense = nn.ModuleList(nn.Linear(i, o) for i, o in pairwise(widths))

    def forward(self, patch: Patch) -> torch.Tensor:
        """F(z): the last dense layer's output (what the training tasks compare)."""
        return self.dense[-1](torch.relu(self.metafeatures(patch)))

    def metafeatures(self, patch: Patch) -> torch.Tensor:
        """The meta-features: the last dense layer but one's output (before its ReLU)."""
        h = self.invariant_layers(patch)
        pooled = torch.relu(self.pool(h)).mean(dim=0)
        for layer in self.dense[:-2]:
            pooled = torch.relu(layer(pooled))
        return self.dense[-2](pooled)

    def invariant_layers(self, patch: Patch) -> torch.Tensor:
        """The points after the invariant layers (n x width)."""
        x, y, near = patch.x, patch.y, patch.neighbours
        pairs = torch.stack([x.unsqueeze(1).expand(-1, near.shape[1], -1), x[near]], dim=-1)
        summed = torch.relu(self.per_feature(pairs)).sum(dim=2)  # over features: n x k x t
        differ = (y.unsqueeze(1) != y[near]).to(x.dtype).unsqueeze(-1)
        h = torch.relu(self.first(torch.cat([summed, differ], dim=-1))).mean(dim=1)
        if self.second is not None:
            both = torch.cat([h.unsqueeze(1).expand(-1, near.shape[1], -1), h[near]], dim=-1)
            h = torch.relu(self.second(both)).mean(dim=1)
        return h


@dataclass
class DidaWeights:
    """A trained network as plain arrays and its architecture (and how it was trained)."""

    architecture: Architecture
    weights: dict[str, np.ndarray] = field(repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, network: Dida, info: dict[str, Any] | None = None) -> DidaWeights:
        state = {k: v.detach().cpu().numpy() for k, v in network.state_dict().items()}
        return cls(network.architecture, state, dict(info or {}))

    def network(self) -> Dida:
        network = Dida(self.architecture)
        network.load_state_dict({k: torch.as_tensor(v) for k, v in self.weights.items()})
        return network.eval()

    def save(self, path: Path) -> None:
        header = {"architecture": asdict(self.architecture), "info": self.info}
        save_arrays(path, header, self.weights)

    @classmethod
    def load(cls, path: Path) -> DidaWeights:
        header, weights = load_arrays(path)
        shape = header["architecture"]
        architecture = Architecture(**{**shape, "dense": tuple(shape["dense"])})
        return cls(architecture, weights, header["info"])
