"""Training task 1, patch identification (thesis §5.4.1): are two patches of one dataset?

A *patch* is a sample of a dataset: ``rows`` rows drawn with replacement (the thesis) and
``features`` features drawn without replacement (the thesis draws them with replacement too;
a repeated column is a feature no dataset has, so here a patch is a sub-dataset), their
numbers drawn uniformly from the given ranges. Two patches are a positive pair when they come
from the same dataset (the thesis also asks for equal row counts, which would make most pairs
of one dataset negatives; not here). The network, shared by both patches (a Siamese pair),
judges them one dataset's with probability exp(-‖F(z) - F(z')‖), trained by binary
cross-entropy; Adam, learning rate 1e-3, batches of 32 pairs (the thesis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from automl_metafeatures_dida.network import Dida, Patch

#: A dataset as training reads it: numeric features (n x d, finite) and labels.
Table = tuple[np.ndarray, np.ndarray]
#: Two patches and 1.0 when they come from one dataset, else 0.0.
Pair = tuple[Patch, Patch, float]
#: What patch identification trains and judges: a patch to a vector (Dida, or a peer's
#: network wrapped to read a patch).
Embedding = Callable[[Patch], torch.Tensor]


@dataclass(frozen=True)
class PatchSizes:
    """The ranges (inclusive) of a patch's row and feature counts (the thesis's UCI ones)."""

    rows: tuple[int, int] = (200, 500)
    features: tuple[int, int] = (2, 15)


def sample_patch(
    table: Table, sizes: PatchSizes, rng: np.random.Generator, neighbours: int
) -> Patch:
    x, y = table
    n = int(rng.integers(sizes.rows[0], sizes.rows[1] + 1))
    d = min(int(rng.integers(sizes.features[0], sizes.features[1] + 1)), x.shape[1])
    rows = rng.integers(0, len(x), n)
    columns = rng.choice(x.shape[1], d, replace=False)
    return Patch.of(x[np.ix_(rows, columns)], np.asarray(y)[rows], neighbours)


def sample_pairs(
    tables: Sequence[Table], pairs: int, sizes: PatchSizes, rng: np.random.Generator, k: int
) -> list[Pair]:
    """``pairs`` patch pairs, half of one dataset (label 1), half of two (label 0)."""
    if len(tables) < 2:
        raise ValueError("patch identification needs at least 2 datasets")
    drawn = []
    for i in range(pairs):
        same = i % 2 == 0
        first, second = rng.choice(len(tables), 2, replace=False)
        if same:
            second = first
        a = sample_patch(tables[first], sizes, rng, k)
        b = sample_patch(tables[second], sizes, rng, k)
        drawn.append((a, b, 1.0 if same else 0.0))
    return drawn


def distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """‖a - b‖, with a gradient where a = b too (a norm's is undefined at 0)."""
    return torch.sqrt(((a - b) ** 2).sum() + 1e-12)


def pair_distances(embed: Embedding, pairs: Sequence[Pair]) -> torch.Tensor:
    """Per pair, the distance between its two patches' embeddings."""
    return torch.stack([distance(embed(a), embed(b)) for a, b, _ in pairs])


def pair_loss(embed: Embedding, pairs: Sequence[Pair]) -> torch.Tensor:
    """The mean binary cross-entropy of p = exp(-distance) against the pairs' labels."""
    distances = pair_distances(embed, pairs)
    labels = torch.tensor([label for _, _, label in pairs])
    log_same = -distances
    log_other = torch.log((-torch.expm1(-distances)).clamp_min(1e-12))
    return -(labels * log_same + (1 - labels) * log_other).mean()


def judged_right(embed: Embedding, pairs: Sequence[Pair]) -> np.ndarray:
    """Per pair, whether it is judged right (one dataset's when p > 1/2)."""
    with torch.no_grad():
        same = pair_distances(embed, pairs).numpy() < np.log(2)
    return same == np.array([bool(label) for _, _, label in pairs])


def accuracy(embed: Embedding, pairs: Sequence[Pair]) -> float:
    """The share of pairs judged right."""
    return float(np.mean(judged_right(embed, pairs)))


@dataclass(frozen=True)
class Training:
    """How the network is trained on patch identification."""

    steps: int = 1000
    batch: int = 32
    lr: float = 1e-3
    sizes: PatchSizes = PatchSizes()
    seed: int = 0


def train_patch_identification(
    network: Dida,
    tables: Sequence[Table],
    settings: Training,
    progress: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Adam on fresh patch pairs every step; the loss of each step (``progress(step, mean
    loss of the last 50)`` is told every 50 steps)."""
    rng = np.random.default_rng(settings.seed)
    torch.manual_seed(settings.seed)
    optimiser = torch.optim.Adam(network.parameters(), lr=settings.lr)
    k = network.architecture.neighbours
    network.train()
    losses = []
    for _ in range(settings.steps):
        pairs = sample_pairs(tables, settings.batch, settings.sizes, rng, k)
        optimiser.zero_grad()
        loss = pair_loss(network, pairs)
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
        if progress is not None and len(losses) % 50 == 0:
            progress(len(losses), float(np.mean(losses[-50:])))
    network.eval()
    return losses
