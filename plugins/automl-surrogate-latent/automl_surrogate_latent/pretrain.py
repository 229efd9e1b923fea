"""Pre-training the per-algorithm embeddings on one source dataset (a PTEM, Eqs. 10-13).

The loss is the quadratic bowl: on the source, the standardised loss z of a configuration
of algorithm m, less the source's best z, should be ‖φ^(m)(λ)‖², so that every algorithm's
best configurations land near the origin of U and worse ones further out. Eq. 11 sums over
the algorithms the mean squared error over that algorithm's configurations.

The adversarial regulariser (Eq. 13) asks the algorithms' embeddings to overlap rather than
form islands: for every pair of algorithms a small discriminator learns to tell their
embedded configurations apart, and the embeddings are trained to make it fail. The paper does
not say how the min-max is solved. Here by alternating updates: each epoch one Adam step of
the discriminators on their cross-entropy, then one of the embeddings on the bowl plus β times
how far each discriminator's cross-entropy is *below chance* (log 2). Not gradient reversal,
which ascends the cross-entropy without bound: on the synthetic family of the tests it pushed
the embeddings to flip the discriminators' answers rather than to confuse them, and fresh
discriminators then separated the algorithms *better* than without the term (a k-NN's
balanced accuracy 0.976-0.992 for β = 0.1-5 against 0.992 at β = 0; a linear one's 0.96-0.99
against 0.86). Bounded at chance, the embeddings' side stops where the discriminators can no
longer tell; β is the paper's 1e-4 by default.

A PTEM is saved as plain arrays (``.npz``) and a JSON header: loading one runs no code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from automl_engine.cache import load_arrays, save_arrays
from automl_spaces.acquisition import standardise
from automl_surrogate_latent.model import DTYPE, HIDDEN, LATENT, AlgorithmEmbeddings

#: Hidden units of a pairwise discriminator (the paper does not say).
DISCRIMINATOR_HIDDEN = 16


@dataclass
class Pretraining:
    """How a PTEM is trained (the paper gives β only)."""

    epochs: int = 1000
    lr: float = 0.01
    #: β: the weight of the adversarial term (the paper's 1e-4; 0 turns it off)
    beta: float = 1e-4
    #: the discriminators' Adam steps per epoch (the embeddings take one)
    judge_steps: int = 5
    #: pairs of algorithms whose discriminators take part in an epoch, drawn at random (the
    #: sum over pairs scaled to all of them): 11 algorithms make 55 pairs, and every pair in
    #: every epoch took 14 times the bowl's time on a Tensor-OBOE source
    pairs_per_epoch: int = 8
    #: configurations per algorithm in an epoch's batch (all when fewer)
    batch: int = 256
    hidden: int = HIDDEN
    latent: int = LATENT


@dataclass
class PTEM:
    """A pre-trained embedding model: the M MLPs' weights and the bowl's offset."""

    #: the algorithms, in the order of the MLPs
    names: tuple[str, ...]
    #: per algorithm, its MLP's input width
    widths: tuple[int, ...]
    hidden: int
    latent: int
    #: the source's best standardised loss: the prior mean's constant on a target
    offset: float
    #: the embeddings' ``state_dict``, as arrays
    weights: dict[str, np.ndarray] = field(repr=False)
    #: where it came from (meta-data, dataset, parameters) and how it trained
    info: dict[str, Any] = field(default_factory=dict)

    def embeddings(self) -> AlgorithmEmbeddings:
        """A fresh module holding these weights."""
        module = AlgorithmEmbeddings(self.widths, self.hidden, self.latent)
        module.load_state_dict(
            {k: torch.as_tensor(v, dtype=DTYPE) for k, v in self.weights.items()}
        )
        return module

    def fits(self, names: tuple[str, ...], widths: tuple[int, ...]) -> str | None:
        """Why it cannot serve a space whose algorithms are ``names`` with ``widths`` (None:
        it can)."""
        if tuple(names) != self.names:
            return (
                f"it was trained on the algorithms {list(self.names)}, the space has {list(names)}"
            )
        if tuple(widths) != self.widths:
            return (
                f"its MLPs read {list(self.widths)} inputs, the space's algorithms {list(widths)}"
            )
        return None

    def save(self, path: Path) -> None:
        header = {
            "names": list(self.names),
            "widths": list(self.widths),
            "hidden": self.hidden,
            "latent": self.latent,
            "offset": self.offset,
            "info": self.info,
        }
        save_arrays(path, header, self.weights)

    @classmethod
    def load(cls, path: Path) -> PTEM:
        header, weights = load_arrays(path)
        return cls(
            names=tuple(header["names"]),
            widths=tuple(header["widths"]),
            hidden=int(header["hidden"]),
            latent=int(header["latent"]),
            offset=float(header["offset"]),
            weights=weights,
            info=header["info"],
        )


def discriminator(latent: int) -> nn.Module:
    """g_{m,m'}: p(algorithm m | u), against m'."""
    return nn.Sequential(
        nn.Linear(latent, DISCRIMINATOR_HIDDEN), nn.Tanh(), nn.Linear(DISCRIMINATOR_HIDDEN, 1)
    ).to(DTYPE)


def pretrain(
    packed: np.ndarray,
    losses: np.ndarray,
    names: tuple[str, ...],
    widths: tuple[int, ...],
    settings: Pretraining,
    seed: int = 0,
    info: dict[str, Any] | None = None,
) -> PTEM:
    """A PTEM fitted to one source's observations: ``packed`` rows (the algorithm's index,
    then its inputs, see :meth:`~automl_surrogate_latent.inputs.AlgorithmInputs.pack`) and
    their ``losses`` (finite)."""
    losses = np.asarray(losses, dtype=float)
    if len(losses) != len(packed) or not len(losses) or not np.all(np.isfinite(losses)):
        raise ValueError("pretrain: needs one finite loss per packed row, and at least one row")
    z, _, _ = standardise(losses)
    offset = float(z.min())
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    embeddings = AlgorithmEmbeddings(widths, settings.hidden, settings.latent)
    rows = torch.as_tensor(packed, dtype=DTYPE)
    gaps = torch.as_tensor(z - offset, dtype=DTYPE)
    by_algorithm = [np.flatnonzero(np.round(packed[:, 0]) == m) for m in range(len(widths))]
    present = [m for m, hit in enumerate(by_algorithm) if len(hit)]
    pairs = list(combinations(present, 2)) if settings.beta > 0 else []
    judges = nn.ModuleList(discriminator(settings.latent) for _ in pairs)
    optimiser = torch.optim.Adam(embeddings.parameters(), lr=settings.lr)
    judging = torch.optim.Adam(judges.parameters(), lr=settings.lr) if pairs else None
    history = []
    for _ in range(settings.epochs):
        batch = {m: _sample(by_algorithm[m], settings.batch, rng) for m in present}
        u = {m: embeddings(rows[batch[m]]) for m in present}
        chosen = _sample(np.arange(len(pairs)), settings.pairs_per_epoch, rng)
        some = nn.ModuleList(judges[int(i)] for i in chosen)
        their_pairs = [pairs[int(i)] for i in chosen]
        if judging is not None:  # the discriminators' steps, on the embeddings as they are
            fixed = {m: v.detach() for m, v in u.items()}
            for _ in range(settings.judge_steps):
                judging.zero_grad()
                _cross_entropy(some, their_pairs, fixed).backward()
                judging.step()
        optimiser.zero_grad()
        bowl = sum(((gaps[batch[m]] - (u[m] ** 2).sum(dim=1)) ** 2).mean() for m in present)
        loss = bowl
        if pairs:
            scale = len(pairs) / len(chosen)
            loss = bowl + settings.beta * scale * _confusion(some, their_pairs, u)
        loss.backward()
        optimiser.step()
        history.append(float(bowl.detach()))
    weights = {k: v.detach().numpy().copy() for k, v in embeddings.state_dict().items()}
    record = {
        **(info or {}),
        "epochs": settings.epochs,
        "bowl_loss": history[-1] if history else None,
    }
    return PTEM(
        tuple(names), tuple(widths), settings.hidden, settings.latent, offset, weights, record
    )


def _sample(indices: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    return indices if len(indices) <= size else rng.choice(indices, size, replace=False)


def _cross_entropy(
    judges: nn.ModuleList, pairs: list[tuple[int, int]], u: dict[int, torch.Tensor]
) -> torch.Tensor:
    """Σ over pairs of each discriminator's mean cross-entropy (Eq. 12)."""
    total = torch.zeros((), dtype=DTYPE)
    for judge, (m, other) in zip(judges, pairs, strict=True):
        labels = torch.cat([torch.ones(len(u[m])), torch.zeros(len(u[other]))]).to(DTYPE)
        logits = judge(torch.cat([u[m], u[other]])).squeeze(1)
        total = total + nn.functional.binary_cross_entropy_with_logits(logits, labels)
    return total


def _confusion(
    judges: nn.ModuleList, pairs: list[tuple[int, int]], u: dict[int, torch.Tensor]
) -> torch.Tensor:
    """The embeddings' side of Eq. 13: per pair, how far the discriminator's cross-entropy
    is below chance (log 2), zero at or above it; only the embeddings receive its gradient
    (the discriminators' weights are read, not trained, here)."""
    total = torch.zeros((), dtype=DTYPE)
    for judge, (m, other) in zip(judges, pairs, strict=True):
        labels = torch.cat([torch.ones(len(u[m])), torch.zeros(len(u[other]))]).to(DTYPE)
        logits = torch.func.functional_call(
            judge,
            {k: v.detach() for k, v in judge.named_parameters()},
            (torch.cat([u[m], u[other]]),),
        ).squeeze(1)
        entropy = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        total = total + torch.relu(math.log(2.0) - entropy)
    return total


def discriminator_accuracy(ptem: PTEM, packed: np.ndarray, neighbours: int = 15) -> float:
    """How well the algorithms can be told apart by where the PTEM embeds ``packed`` rows:
    per pair of algorithms, the 5-fold cross-validated balanced accuracy of a k-nearest-
    neighbours classifier on u, averaged over the pairs (0.5: the embeddings overlap
    completely; 1: islands). Measures what the adversarial term is for, with a classifier
    other than the discriminators it trained against."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    with torch.no_grad():
        u = ptem.embeddings()(torch.as_tensor(packed, dtype=DTYPE)).numpy()
    algorithms = np.round(packed[:, 0]).astype(int)
    scores = []
    for m, other in combinations(sorted(set(algorithms.tolist())), 2):
        hit = (algorithms == m) | (algorithms == other)
        classifier = KNeighborsClassifier(neighbours)
        folds = cross_val_score(
            classifier, u[hit], algorithms[hit] == m, cv=5, scoring="balanced_accuracy"
        )
        scores.append(float(np.mean(folds)))
    return float(np.mean(scores)) if scores else 0.5
