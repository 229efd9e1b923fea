"""Auto-sklearn 2.0's policy selector: pairwise random forests that vote (after HydraMIP).

For every pair of policies (A, B) a random forest learns, from the meta-features of the
meta-datasets (only the numbers of rows and features: cheap, always defined), whether A
ends with a lower loss than B. Each meta-dataset is weighted by how much the choice matters
there: the loss difference of the two policies, scaled by the spread of all policies' losses
on that dataset, so datasets where every policy does the same teach nothing. At selection
the forests vote with their probabilities (soft voting) and the policy with the most votes
wins. A dataset that no meta-dataset is at least as large as in both rows and features is
out of the selector's experience: it gets the fallback policy instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from sklearn.ensemble import RandomForestClassifier


class PairwiseSelector:
    """Chooses among ``policies`` from meta-features; see the module docstring.

    ``trees``, ``min_samples_leaf`` and ``seed`` configure the forests (the paper tuned
    them by BO; these are sklearn's defaults but for a smaller leaf-size floor and fewer
    trees, since the meta-datasets are a few hundred). ``fallback`` names the policy for
    datasets beyond the meta-data.
    """

    def __init__(
        self,
        policies: Sequence[str],
        fallback: str,
        *,
        trees: int = 100,
        min_samples_leaf: int = 2,
        seed: int = 0,
    ) -> None:
        if fallback not in policies:
            raise ValueError(f"fallback {fallback!r} is not one of the policies {list(policies)}")
        self.policies = list(policies)
        self.fallback = fallback
        self.trees = trees
        self.min_samples_leaf = min_samples_leaf
        self.seed = seed
        self.forests: dict[tuple[int, int], RandomForestClassifier | float] = {}
        self.features = np.empty((0, 0))

    def fit(self, features: np.ndarray, losses: np.ndarray) -> PairwiseSelector:
        """``features[d]``: meta-features of meta-dataset d; ``losses[d, p]``: the loss of
        policy p there (lower is better)."""
        features = np.asarray(features, dtype=float)
        losses = np.asarray(losses, dtype=float)
        if losses.shape != (len(features), len(self.policies)):
            raise ValueError(
                f"losses has shape {losses.shape}, expected "
                f"({len(features)}, {len(self.policies)}): datasets x policies"
            )
        self.features = features
        spread = np.ptp(losses, axis=1)
        spread[spread == 0] = 1.0
        for a, b in itertools.combinations(range(len(self.policies)), 2):
            weight = np.abs(losses[:, a] - losses[:, b]) / spread
            informative = weight > 0
            labels = (losses[:, a] < losses[:, b]).astype(int)[informative]
            if len(np.unique(labels)) < 2:
                # Only one outcome was ever seen: always vote for it; none: split the vote.
                self.forests[(a, b)] = float(labels[0]) if len(labels) else 0.5
                continue
            forest = RandomForestClassifier(
                n_estimators=self.trees,
                min_samples_leaf=self.min_samples_leaf,
                max_features=1,
                random_state=self.seed,
                n_jobs=1,
            )
            forest.fit(features[informative], labels, sample_weight=weight[informative])
            self.forests[(a, b)] = forest
        return self

    def votes(self, features: Sequence[float]) -> np.ndarray:
        """Each policy's summed probability of beating the others."""
        if not self.forests:
            raise RuntimeError("the selector is not fitted")
        row = np.asarray(features, dtype=float).reshape(1, -1)
        votes = np.zeros(len(self.policies))
        for (a, b), forest in self.forests.items():
            if isinstance(forest, float):
                p_a = forest
            else:
                p_a = float(forest.predict_proba(row)[0, list(forest.classes_).index(1)])
            votes[a] += p_a
            votes[b] += 1.0 - p_a
        return votes

    def covered(self, features: Sequence[float]) -> bool:
        """Whether some meta-dataset is at least as large on every meta-feature."""
        row = np.asarray(features, dtype=float)
        return bool(np.any(np.all(self.features >= row, axis=1)))

    def select(self, features: Sequence[float]) -> str:
        """The chosen policy's name (the fallback outside the meta-data's range; ties go to
        the policy listed first)."""
        if not self.covered(features):
            return self.fallback
        return self.policies[int(np.argmax(self.votes(features)))]
