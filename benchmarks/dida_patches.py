"""Patch identification on datasets never seen in training: Dida against hand-crafted
meta-features (the thesis's Table 5.2, adapted to KEEL).

Both judge the same pairs of patches (rows and features sampled from a dataset; a pair is
positive when both patches come from one dataset) of the validation datasets that the Dida
network was not trained on (``automl dida train`` holds 20 % of its corpus out):

- ``dida``: the trained network, one dataset's with probability exp(-‖F(z) - F(z')‖);
- ``handcrafted``: the hand-crafted meta-features of each patch (``automl-metafeatures``,
  every group by default: statistics, information, PCA, landmarkers, tree shape; NaN as 0)
  and, as the thesis does, a trained function on them: a gradient-boosting classifier on
  the absolute differences, trained on pairs of the training datasets.

- ``dataset2vec`` (with ``--peer-seconds S``): the ``dataset2vec`` package's network (its
  default configuration; labels one-hot) trained on the same patch stream with the same loss
  (Adam at the package's 1e-4) for ``S`` seconds of wall time, batches of 8 pairs: the
  same training time as Dida's when ``S`` is Dida's (its checkpoint says). Install it into
  the environment first (a peer, never a dependency):
  ``pip install --no-deps dataset2vec pytorch-lightning lightning-utilities torchmetrics``
  and ``pip install pydantic``.

Prints one row per method: accuracy on the held-out pairs with a 95 % bootstrap interval
over pairs.

    python benchmarks/dida_patches.py --pairs 400 --train-pairs 1000 --peer-seconds 740
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
from sklearn.ensemble import HistGradientBoostingClassifier

from automl_metafeatures.provider import HandcraftedMetaFeatures
from automl_metafeatures_dida.network import Architecture, Patch
from automl_metafeatures_dida.patches import Training, judged_right, pair_loss, sample_pairs
from automl_metafeatures_dida.train import load_tables, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200, help="held-out pairs judged")
    parser.add_argument("--train-pairs", type=int, default=600, help="pairs the baseline learns")
    parser.add_argument("--steps", type=int, default=1000, help="Dida's training steps")
    parser.add_argument("--groups", default="all", help="hand-crafted groups (all, autosklearn)")
    parser.add_argument("--peer-seconds", type=float, help="train Dataset2Vec this long")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    weights = train(architecture=Architecture(), training=Training(steps=args.steps))
    network = weights.network()
    fitted, held_out = weights.info["trained_on"], weights.info["validation"]
    print(f"Dida: {len(fitted)} training datasets, {len(held_out)} held out: {held_out}")
    tables = load_tables([*fitted, *held_out])
    sizes, k = Training().sizes, network.architecture.neighbours
    rng = np.random.default_rng(args.seed)
    test = sample_pairs([tables[d] for d in held_out], args.pairs, sizes, rng, k)
    learn = sample_pairs([tables[d] for d in fitted], args.train_pairs, sizes, rng, k)
    labels = np.array([label for _, _, label in test])

    rows = []
    started = time.monotonic()
    right = judged_right(network, test)
    rows.append(("dida", right, time.monotonic() - started))

    started = time.monotonic()
    describe = HandcraftedMetaFeatures(groups=args.groups)
    model = HistGradientBoostingClassifier(random_state=args.seed)
    model.fit(differences(describe, learn), [label for _, _, label in learn])
    judged = model.predict(differences(describe, test))
    name = f"handcrafted ({args.groups}) + boosting"
    rows.append((name, judged == labels, time.monotonic() - started))

    if args.peer_seconds:
        started = time.monotonic()
        peer, steps = train_dataset2vec([tables[d] for d in fitted], args.peer_seconds, args.seed)
        name = f"dataset2vec ({steps} steps of 8 pairs)"
        rows.append((name, judged_right(peer, test), time.monotonic() - started))

    print(f"{'method':<40} {'accuracy':>9} {'95% interval':>16} {'seconds':>8}")
    for name, correct, seconds in rows:
        low, high = bootstrap(correct.astype(float), rng)
        print(f"{name:<40} {correct.mean():>9.3f} {f'[{low:.3f}, {high:.3f}]':>16} {seconds:>8.0f}")


def differences(describe: HandcraftedMetaFeatures, pairs) -> np.ndarray:
    """|mf(z) - mf(z')| per pair, the meta-features of a patch computed on its rows."""
    cache: dict[int, dict[str, float]] = {}

    def of(patch: Patch) -> dict[str, float]:
        if id(patch) not in cache:
            frame = pd.DataFrame(patch.x.numpy())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cache[id(patch)] = describe.compute(frame, patch.y.numpy(), "classification")
        return cache[id(patch)]

    rows = []
    for a, b, _ in pairs:
        first, second = of(a), of(b)
        rows.append([abs(first[name] - second.get(name, np.nan)) for name in sorted(first)])
    return np.nan_to_num(np.array(rows, dtype=float), nan=0.0)


def dataset2vec_embedding(model) -> Callable[[Patch], torch.Tensor]:
    """The peer's network as an embedding of a patch: features, and the labels one-hot."""

    def embed(patch: Patch) -> torch.Tensor:
        classes = int(patch.y.max()) + 1
        return model(patch.x, torch.nn.functional.one_hot(patch.y, classes).float())

    return embed


def train_dataset2vec(tables, seconds: float, seed: int):
    """The peer's embedding trained on fresh patch pairs of ``tables`` for ``seconds``, with
    Dida's loss (:func:`pair_loss`); and how many steps it took."""
    from dataset2vec.model import Dataset2Vec

    torch.manual_seed(seed)
    model = Dataset2Vec()
    embed = dataset2vec_embedding(model)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-4)
    rng, sizes = np.random.default_rng(seed), Training().sizes
    started, steps = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        pairs = sample_pairs(tables, 8, sizes, rng, 1)
        optimiser.zero_grad()
        pair_loss(embed, pairs).backward()
        optimiser.step()
        steps += 1
    model.eval()
    return embed, steps


def bootstrap(values: np.ndarray, rng: np.random.Generator, draws: int = 2000) -> tuple:
    means = values[rng.integers(0, len(values), (draws, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


if __name__ == "__main__":
    main()
