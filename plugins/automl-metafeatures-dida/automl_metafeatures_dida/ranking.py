"""Training task 2, configuration ranking (thesis §5.4.2): which of two configurations does
better on a dataset, judged from the dataset's meta-features.

An example is a dataset, two configurations θ, θ' that the meta-data ran on it, and a patch
of the dataset; its label is 1 when θ' had the lower loss. A small head (two dense layers)
reads [F(z); θ; θ'] and is trained jointly with the network by binary cross-entropy, so that
the meta-features learn what makes configurations rank differently. The thesis trains one head
per algorithm on that algorithm's hyper-parameters; here configurations are whole pipelines
of one space (the meta-data's), read as its network inputs (numbers in [0, 1], categoricals
one-hot): one head for the space. Its measure is the pairwise ranking accuracy on datasets
never trained on.

The head standardises the meta-features it reads (batch normalisation): at initialisation
Dida's meta-features differ between datasets by a few thousandths, too little for the head
to learn from (measured: chance accuracy after 400 steps without it, a solved synthetic
family in 60 with it). Its statistics are re-estimated with the final network at the end.
Any fixed description of a dataset (hand-crafted meta-features, or none) can stand in for
Dida's (``describe``): that is how the benchmark compares them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from automl_core.contracts import MetaData
from automl_core.space import VectorSpace
from automl_metafeatures_dida.network import Dida, Patch
from automl_metafeatures_dida.patches import PatchSizes, Table, sample_patch
from automl_spaces.component_rows import NetworkInputs, numeric_ranges

#: Hidden units of the ranking head (the thesis: a 2-layer network, width not given).
HEAD_HIDDEN = 64


class PairHead(nn.Module):
    """The logit of P(θ' beats θ | z) from a dataset's description and the two
    configurations' inputs."""

    def __init__(self, described: int, width: int, hidden: int = HEAD_HIDDEN) -> None:
        super().__init__()
        self.normalise = nn.BatchNorm1d(described) if described else nn.Identity()
        self.layers = nn.Sequential(
            nn.Linear(described + 2 * width, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )

    def forward(
        self, described: torch.Tensor, first: torch.Tensor, second: torch.Tensor
    ) -> torch.Tensor:
        described = self.normalise(described)
        return self.layers(torch.cat([described, first, second], dim=-1)).squeeze(-1)


@dataclass(frozen=True)
class RankingExample:
    dataset: str
    #: the two configurations, as rows of the meta-data
    first: int
    second: int
    #: 1.0 when ``second`` had the lower loss on the dataset
    label: float
    #: a fresh patch of the dataset (what Dida describes it by)
    patch: Patch | None = None


#: A dataset's description for an example: Dida's meta-features of its patch, or a fixed
#: vector per dataset.
Describe = Callable[[RankingExample], torch.Tensor]


def configuration_inputs(metadata: MetaData, space: VectorSpace) -> np.ndarray:
    """Each configuration of the meta-data as network inputs (configurations x width)."""
    rows = space.encode(metadata.configs)
    inputs = NetworkInputs(tuple(space.columns()), numeric_ranges(space))
    return np.asarray(inputs.transform(rows), dtype=np.float32)


def ranking_examples(
    metadata: MetaData,
    datasets: Sequence[str],
    count: int,
    rng: np.random.Generator,
    patches: Callable[[str], Patch] | None = None,
) -> list[RankingExample]:
    """``count`` examples on ``datasets`` (of the meta-data), each two configurations with
    different finite losses on its dataset, and a fresh patch of it when ``patches`` is given."""
    usable = [d for d in datasets if np.sum(np.isfinite(metadata.performance[metadata.row(d)])) > 1]
    if not usable:
        raise ValueError("configuration ranking needs datasets with two or more observed losses")
    examples: list[RankingExample] = []
    while len(examples) < count:
        dataset = usable[int(rng.integers(len(usable)))]
        losses = metadata.performance[metadata.row(dataset)]
        observed = np.flatnonzero(np.isfinite(losses))
        a, b = (int(i) for i in rng.choice(observed, 2, replace=False))
        if losses[a] == losses[b]:
            continue
        patch = patches(dataset) if patches is not None else None
        examples.append(RankingExample(dataset, a, b, float(losses[b] < losses[a]), patch))
    return examples


def dida_description(network: Dida) -> Describe:
    """Dida's meta-features of each example's patch."""

    def describe(example: RankingExample) -> torch.Tensor:
        assert example.patch is not None, "Dida describes a dataset by a patch of it"
        return network.metafeatures(example.patch)

    return describe


def fixed_description(vectors: Mapping[str, np.ndarray]) -> Describe:
    """The same vector for every example of a dataset (e.g. its hand-crafted meta-features;
    empty vectors: the head ranks configurations without knowing the dataset)."""
    tensors = {d: torch.as_tensor(np.asarray(v, dtype=np.float32)) for d, v in vectors.items()}
    return lambda example: tensors[example.dataset]


def pair_logits(
    describe: Describe, head: PairHead, inputs: torch.Tensor, examples: Sequence[RankingExample]
) -> torch.Tensor:
    described = torch.stack([describe(e) for e in examples])
    first = inputs[[e.first for e in examples]]
    second = inputs[[e.second for e in examples]]
    return head(described, first, second)


def ranking_accuracy(
    describe: Describe, head: PairHead, inputs: torch.Tensor, examples: Sequence[RankingExample]
) -> float:
    """The share of examples whose better configuration the head names."""
    with torch.no_grad():
        logits = pair_logits(describe, head, inputs, examples)
    labels = np.array([e.label for e in examples], dtype=bool)
    return float(np.mean((logits.numpy() > 0) == labels))


@dataclass(frozen=True)
class RankingTraining:
    steps: int = 1000
    batch: int = 32
    lr: float = 1e-3
    sizes: PatchSizes = field(default_factory=PatchSizes)
    seed: int = 0


def train_configuration_ranking(
    head: PairHead,
    metadata: MetaData,
    inputs: np.ndarray,
    datasets: Sequence[str],
    settings: RankingTraining,
    network: Dida | None = None,
    tables: Mapping[str, Table] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Adam on the head, and on Dida's ``network`` with it (reading fresh patches of
    ``tables`` every step), or on the head alone over fixed ``vectors``; each step's loss
    (``progress(step, mean loss of the last 50)`` every 50 steps)."""
    if (network is None) == (vectors is None) or (network is not None and tables is None):
        raise ValueError("train with a network and its datasets' tables, or with fixed vectors")
    rng = np.random.default_rng(settings.seed)
    torch.manual_seed(settings.seed)
    batch_inputs = torch.as_tensor(inputs)
    patches = patch_sampler(network, tables, settings.sizes, rng)
    describe = dida_description(network) if network else fixed_description(vectors or {})
    trained = [*head.parameters(), *(network.parameters() if network else [])]
    optimiser = torch.optim.Adam(trained, lr=settings.lr)
    _set_training(True, head, network)
    losses: list[float] = []
    for _ in range(settings.steps):
        examples = ranking_examples(metadata, datasets, settings.batch, rng, patches)
        optimiser.zero_grad()
        logits = pair_logits(describe, head, batch_inputs, examples)
        labels = torch.tensor([e.label for e in examples])
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
        if progress is not None and len(losses) % 50 == 0:
            progress(len(losses), float(np.mean(losses[-50:])))
    recalibrate(head, describe, metadata, datasets, settings.batch, rng, patches)
    _set_training(False, head, network)
    return losses


def recalibrate(
    head: PairHead,
    describe: Describe,
    metadata: MetaData,
    datasets: Sequence[str],
    batch: int,
    rng: np.random.Generator,
    patches: Callable[[str], Patch] | None,
    batches: int = 8,
) -> None:
    """The head's normalisation statistics estimated anew with the final network: the running
    averages kept during training mix in the meta-features of earlier weights (measured: a
    training loss of 0.008 with 0.55 accuracy on the same datasets before this)."""
    norm = head.normalise
    if not isinstance(norm, nn.BatchNorm1d):
        return
    norm.reset_running_stats()
    norm.momentum = None  # a plain average over the batches below
    norm.train()
    with torch.no_grad():
        for _ in range(batches):
            examples = ranking_examples(metadata, datasets, batch, rng, patches)
            norm(torch.stack([describe(e) for e in examples]))
    norm.momentum = 0.1


def patch_sampler(
    network: Dida | None,
    tables: Mapping[str, Table] | None,
    sizes: PatchSizes,
    rng: np.random.Generator,
) -> Callable[[str], Patch] | None:
    """A fresh patch of a dataset at each call, with the network's neighbourhoods (None
    without a network: fixed descriptions need no patches)."""
    if network is None or tables is None:
        return None
    k = network.architecture.neighbours
    return lambda dataset: sample_patch(tables[dataset], sizes, rng, k)


def _set_training(mode: bool, *modules: nn.Module | None) -> None:
    for module in modules:
        if module is not None:
            module.train(mode)
