"""Learning Metabu meta-features (Rakotoarison et al., ICLR 2022; thesis ch. 6).

Hand-crafted meta-features (the *basic representation*, one row per dataset) place datasets
in a space whose distances say little about which hyper-parameters work on them. Metabu learns
a linear map ψ: R^D -> R^d so that Euclidean distances between ψ(x_i) reproduce an *oracle*
topology, in which two datasets are close iff their best configurations are close:

1. :func:`top_configurations`: each training dataset's target representation z_i, the uniform
   distribution on the encodings of its top-L configurations;
2. :func:`target_distances`: the exact optimal-transport cost between the z_i (max-normalised);
3. :func:`intrinsic_dimension`: the TwoNN estimate of that topology's dimension, d;
4. :func:`target_embedding`: a d-dimensional metric MDS of the distances, standardised (U);
5. :func:`fit_map`: ψ trained by minimising the Fused Gromov-Wasserstein objective between ψ♯X
   and U (plus an L1 penalty) at the coupling i <-> i that the authors' solver keeps
   (:class:`FGWSettings` says why; POT's exact solver is an option), early-stopped on the
   NDCG@k (:func:`ndcg_at_k`) of validation datasets.

The fitted :class:`MetabuMap` holds the standardiser and ψ as plain numpy arrays, so that it
pickles and stores with ``np.savez`` (:meth:`MetabuMap.to_arrays`).
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import ot
import torch
from scipy.spatial.distance import cdist
from sklearn.manifold import MDS

#: The number of best configurations kept per dataset (the paper's L).
TOP_CONFIGURATIONS = 20
#: Added to the first-neighbour distance in TwoNN's ratio (the authors' code), so that
#: duplicate points (distance 0) give a finite ratio.
TWO_NN_OFFSET = 1e-3
#: TwoNN fits the empirical distribution on the smallest 90% of the ratios: the largest
#: ones are the noisiest and the last one has an empirical CDF of 1 (-log(1 - F) infinite).
TWO_NN_KEPT = 0.9


# --- Target representation and its distances --------------------------------------------------


def top_configurations(
    performance: np.ndarray,
    encodings: np.ndarray,
    top: int = TOP_CONFIGURATIONS,
    dataset_names: Sequence[str] | None = None,
) -> list[np.ndarray]:
    """Each dataset's target representation: the encodings of its ``top`` best configurations.

    ``performance`` is (datasets x configurations), a *loss* (lower is better); a configuration
    not evaluated on a dataset is NaN (any non-finite value counts as unobserved). ``encodings``
    is (configurations x a), already numeric (one-hot categoricals, numbers scaled to [0, 1]).
    The i-th array returned holds the rows of ``encodings`` of dataset i's ``top`` lowest losses
    (fewer when fewer were observed; ties broken by configuration order), best first: the
    support of the uniform distribution z_i. A dataset with no observed configuration has no
    target, which is an error naming it (the caller drops it or evaluates more).
    """
    performance = np.asarray(performance, dtype=float)
    encodings = np.asarray(encodings, dtype=float)
    if performance.ndim != 2 or encodings.ndim != 2:
        raise ValueError("performance and encodings must be 2-D arrays")
    if performance.shape[1] != encodings.shape[0]:
        raise ValueError(
            f"performance has {performance.shape[1]} configurations (columns) but encodings "
            f"has {encodings.shape[0]} rows"
        )
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    names = _names(dataset_names, performance.shape[0], "dataset")
    empty = [names[i] for i in range(performance.shape[0]) if not np.isfinite(performance[i]).any()]
    if empty:
        raise ValueError(f"no configuration observed on dataset(s) {empty}: no target for them")
    targets = []
    for losses in performance:
        observed = np.flatnonzero(np.isfinite(losses))
        best = observed[np.argsort(losses[observed], kind="stable")[:top]]
        targets.append(encodings[best])
    return targets


def ot_distance(first: np.ndarray, second: np.ndarray) -> float:
    """The exact optimal-transport cost between the uniform distributions on two point sets.

    The ground cost is the squared Euclidean distance (``ot.dist``'s default, as the authors'
    code), *not* rescaled per pair: the costs of different pairs stay comparable, so that the
    matrix :func:`target_distances` builds is one metric-like topology.
    """
    first = np.atleast_2d(np.asarray(first, dtype=float))
    second = np.atleast_2d(np.asarray(second, dtype=float))
    weights_first = np.full(len(first), 1.0 / len(first))
    weights_second = np.full(len(second), 1.0 / len(second))
    return float(ot.emd2(weights_first, weights_second, ot.dist(first, second)))


def target_distances(targets: Sequence[np.ndarray], normalise: bool = True) -> np.ndarray:
    """The oracle topology: pairwise :func:`ot_distance` between the target representations.

    Symmetric with a zero diagonal (each pair is solved once). Divided by its maximum when
    ``normalise`` (the paper's C), so that its scale does not depend on the encoding's width;
    an all-zero matrix (identical targets) is returned as is.
    """
    count = len(targets)
    distances = np.zeros((count, count))
    for i, j in itertools.combinations(range(count), 2):
        distances[i, j] = distances[j, i] = ot_distance(targets[i], targets[j])
    largest = distances.max(initial=0.0)
    if normalise and largest > 0:
        distances /= largest
    return distances


# --- Intrinsic dimension (TwoNN) ----------------------------------------------------------------


def two_nn_slope(distances: np.ndarray) -> float:
    """The TwoNN estimate (Facco et al., 2017) of the intrinsic dimension, before rounding.

    For each point, μ = r2 / (r1 + 1e-3) with r1, r2 its distances to its first and second
    nearest *other* points. Under local uniformity μ follows a Pareto law of exponent the
    dimension: -log(1 - F(μ)) = dim · log(μ). The slope is fitted through the origin by least
    squares on the smallest floor(0.9 m) + 1 ratios (m points) with F_i = i / m, as the
    authors' code does; the kept count is also capped at m - 1 so that F never reaches 1.

    The 1e-3 offset (theirs) assumes distances much larger than it: it shrinks μ, hence log μ,
    and so inflates the slope when nearest neighbours are closer than ~0.1 (1,000 points on a
    unit square: about 2.35 instead of 2). A μ of 0 (r2 = 0: duplicates) is replaced by
    1 + 1e-3, theirs too.
    """
    distances = _square(distances, "distances")
    count = len(distances)
    if count < 3:
        raise ValueError(f"TwoNN needs at least 3 points, got {count}")
    others = distances + np.diag(np.full(count, np.inf))
    nearest = np.sort(others, axis=1)[:, :2]
    ratios = nearest[:, 1] / (nearest[:, 0] + TWO_NN_OFFSET)
    ratios = np.sort(np.where(ratios > 0, ratios, 1 + TWO_NN_OFFSET))
    kept = min(math.floor(TWO_NN_KEPT * count) + 1, count - 1)
    x = np.log(ratios[:kept])
    y = -np.log(1 - np.arange(1, kept + 1) / count)
    denominator = float(x @ x)
    if denominator == 0:
        raise ValueError("TwoNN is undefined: every point's two nearest neighbours are equidistant")
    return float(x @ y) / denominator


def intrinsic_dimension(distances: np.ndarray) -> int:
    """The dimension d of the learned meta-features: ceil of :func:`two_nn_slope`, at least 1.

    The paper sets d to the intrinsic dimension of the oracle topology: a larger d would let
    ψ fit noise, a smaller one could not reproduce the topology.
    """
    return max(1, math.ceil(two_nn_slope(distances)))


# --- Target embedding (MDS) ---------------------------------------------------------------------


def target_embedding(distances: np.ndarray, dimension: int, seed: int = 42) -> np.ndarray:
    """U: a ``dimension``-dimensional metric MDS of the oracle distances, standardised per column.

    FGW compares ψ♯X with a point cloud, not a distance matrix: MDS gives the cloud whose
    Euclidean distances best reproduce C. Standardising (zero mean, unit std; a constant column
    stays at 0) fixes its scale, so that the cross cost ‖ψ(x) - u‖² does not depend on C's.
    """
    distances = _square(distances, "distances")
    if not 1 <= dimension <= len(distances):
        raise ValueError(f"dimension must be in [1, {len(distances)}], got {dimension}")
    mds = _mds(dimension, seed)
    classical = getattr(mds, "init", None) == "classical_mds"  # else random starts: no NaN
    start = _classical_start(distances, dimension, seed) if classical else None
    embedding = mds.fit_transform(distances, init=start)
    return _standardise_columns(embedding)


def _classical_start(distances: np.ndarray, dimension: int, seed: int) -> np.ndarray | None:
    """Classical MDS of ``distances`` for SMACOF to start from, when scikit-learn's own would
    fail; None otherwise (its own start is then used, as before).

    Optimal-transport distances are not Euclidean: the double-centred squared distances can
    have fewer than ``dimension`` positive eigenvalues (15 KEEL datasets, dimension 14), and
    scikit-learn takes the square root of the negative ones: a start of NaN, and an error.
    Here their coordinates start as small seeded noise instead (a zero column would stay zero
    through SMACOF's updates), so the iterations can still use those dimensions.
    """
    squared = distances**2
    centred = squared - squared.mean(axis=0) - squared.mean(axis=1)[:, None] + squared.mean()
    values, vectors = np.linalg.eigh(-0.5 * centred)
    top = np.argsort(values)[::-1][:dimension]
    positive = values[top] > 1e-9 * max(float(values.max()), 1e-12)  # not round-off
    if positive.all():
        return None
    start = vectors[:, top] * np.sqrt(np.clip(values[top], 0.0, None))
    scale = max(float(np.abs(start).max()), float(distances.max()), 1e-12)
    noise = np.random.default_rng(seed).normal(0.0, 1e-3 * scale, start.shape)
    return np.where(positive, start, noise)


def _mds(dimension: int, seed: int) -> MDS:
    """A metric MDS on precomputed dissimilarities, spelled for the installed scikit-learn.

    scikit-learn 1.8 renamed ``dissimilarity`` to ``metric`` (and the old boolean ``metric`` to
    ``metric_mds``) and added ``init``, whose default changes in 1.10 (a FutureWarning when left
    out). Where ``init`` exists the SMACOF iterations start from classical MDS (deterministic, one
    run, usually a lower stress than random starts); before, from 4 seeded random starts (the
    authors' setting, then sklearn's default, spelled out to avoid the n_init FutureWarning).
    """
    parameters = inspect.signature(MDS).parameters
    options: dict[str, object] = {
        "n_components": dimension,
        "random_state": seed,
        "normalized_stress": "auto",
    }
    if "metric_mds" in parameters:
        options.update(metric_mds=True, metric="precomputed")
    else:
        options.update(dissimilarity="precomputed")
    if "init" in parameters:
        options.update(init="classical_mds", n_init=1)
    else:
        options.update(n_init=4)
    return MDS(**options)


def _standardise_columns(values: np.ndarray) -> np.ndarray:
    """Zero mean, unit std per column; a constant column becomes 0 (not NaN)."""
    centred = values - values.mean(axis=0)
    scale = values.std(axis=0)
    return centred / np.where(scale > 0, scale, 1.0)


# --- Ranking quality (NDCG@k) -------------------------------------------------------------------


def pairwise_distances(rows: np.ndarray) -> np.ndarray:
    """Euclidean distances between rows (e.g. of ψ(x)), the input of :func:`ndcg_at_k`."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    return cdist(rows, rows)


def ndcg_at_k(
    predicted: np.ndarray,
    target: np.ndarray,
    k: int,
    queries: Sequence[int] | None = None,
    candidates: Sequence[int] | None = None,
) -> float:
    """Mean NDCG@k of the neighbours ``predicted`` ranks, against those ``target`` ranks.

    Both are square distance matrices over the same datasets. For each query dataset (all by
    default) the candidates are ``candidates`` (all by default) less the query itself; the
    relevant ones are its k nearest candidates under ``target``, and the predicted ranking
    sorts the candidates by ``predicted`` distance: DCG@k = Σ_{r<=k} rel_r / log2(r + 1), over
    the ideal DCG Σ_{r<=k} 1 / log2(r + 1) (k capped at the number of candidates). This is the
    paper's Task 1 metric: does a representation find the datasets whose best configurations
    are closest? E.g. validation datasets against the training ones: ``queries=validation,
    candidates=training``. Ties are broken by dataset order.
    """
    predicted = _square(predicted, "predicted")
    target = _square(target, "target")
    if predicted.shape != target.shape:
        raise ValueError(f"predicted is {predicted.shape} but target is {target.shape}")
    count = len(target)
    rows = range(count) if queries is None else [int(i) for i in queries]
    pool = np.arange(count) if candidates is None else np.asarray(candidates, dtype=int)
    scores = []
    for query in rows:
        others = pool[pool != query]
        scores.append(_row_ndcg(predicted[query, others], target[query, others], k))
    if not scores:
        raise ValueError("no query to score")
    return float(np.mean(scores))


def cross_ndcg_at_k(predicted: np.ndarray, target: np.ndarray, k: int) -> float:
    """:func:`ndcg_at_k` on rectangular matrices: rows are queries, columns their candidates.

    For queries that are not among the candidates (validation datasets against the training
    ones), so that the caller needs no square matrix over both.
    """
    predicted = np.atleast_2d(np.asarray(predicted, dtype=float))
    target = np.atleast_2d(np.asarray(target, dtype=float))
    if predicted.shape != target.shape:
        raise ValueError(f"predicted is {predicted.shape} but target is {target.shape}")
    return float(np.mean([_row_ndcg(p, t, k) for p, t in zip(predicted, target, strict=True)]))


def _row_ndcg(predicted: np.ndarray, target: np.ndarray, k: int) -> float:
    """NDCG@k of one query, over its candidates' predicted and target distances."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, len(target))
    if k == 0:
        raise ValueError("a query has no candidate")
    relevant = np.zeros(len(target), dtype=bool)
    relevant[np.argsort(target, kind="stable")[:k]] = True
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    gains = relevant[np.argsort(predicted, kind="stable")[:k]]
    return float(gains @ discounts / discounts.sum())


# --- The learned map ----------------------------------------------------------------------------


#: The couplings :func:`fit_map` can hold between ψ♯X and U (see :class:`FGWSettings`).
COUPLINGS = ("identity", "exact")


@dataclass(frozen=True)
class FGWSettings:
    """How ψ is trained (the paper's defaults).

    ``alpha`` trades the cross cost (ψ(x_i) near the u_j it is coupled with) against the
    structure term (ψ's distances like U's); ``l1`` the sparsity of ψ (which basic meta-features
    matter); ``patience`` epochs without a better validation ``ndcg_k`` stop the training
    (30, not the authors' code's 10: at lr 0.01 from a random ψ, NDCG@k moves in steps and
    often stays flat for more than 10 epochs first; measured on the tests' family, patience 10
    stopped at epoch 27 with NDCG@10 0.53, below the raw features' 0.66, patience 30 at epoch
    131 with 0.83).

    ``coupling`` is how each epoch's γ is solved:

    - ``"identity"`` (default): γ = diag(1/n), dataset i coupled with its own target u_i. This
      is the coupling the authors' code trains with: it starts every epoch from i <-> i and
      runs a proximal-point (KL-proximal, multiplicative) solver, whose plans can never put mass
      where the previous plan has none, so γ stays i <-> i; POT's
      ``entropic_fused_gromov_wasserstein(solver="PPA", G0=identity)`` returns it too (checked
      in the tests). We hold it without calling the solver: the same γ, with no ε to scale
      against the costs (POT's Sinkhorn underflows once cost/ε passes ~700, e.g. n = 500) and
      no O(n³) iterations per epoch. The loss is then FGW's objective at the coupling that
      carries the one thing the basic representation must learn, which dataset is which.
    - ``"exact"``: POT's exact conditional-gradient FGW solver (:func:`solve_coupling`),
      warm-started from the previous γ (i <-> i at the first epoch): the bilevel scheme the
      paper writes. FGW is invariant to permuting either cloud, so its optimal γ matches the
      shape of ψ♯X to U's regardless of which dataset is which (for a random ψ it moves almost
      all the mass off i <-> i at the first epoch): ψ then learns to reproduce the distribution
      of U, not each dataset's place in it, and on the synthetic family of the tests it does
      not raise the validation NDCG. Kept to compare.
    """

    alpha: float = 0.5
    l1: float = 1e-3
    lr: float = 0.01
    epochs: int = 300
    patience: int = 30
    ndcg_k: int = 10
    seed: int = 42
    coupling: str = "identity"

    def __post_init__(self) -> None:
        if self.coupling not in COUPLINGS:
            raise ValueError(f"coupling must be one of {COUPLINGS}, got {self.coupling!r}")
        if not 0 <= self.alpha <= 1:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.epochs < 0 or self.patience < 1 or self.ndcg_k < 1:
            raise ValueError("epochs must be >= 0, patience and ndcg_k >= 1")


@dataclass(eq=False)
class MetabuMap:
    """A fitted Metabu map: standardise the basic representation, then apply ψ.

    ``mean`` and ``scale`` (D,) are the standardiser fitted on the training rows, ``weights``
    (d x D) is ψ (a linear map without bias, as torch.nn.Linear stores it). Plain numpy arrays,
    so that the map pickles and stores without torch.
    """

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    feature_names: tuple[str, ...] | None = field(default=None)

    def __post_init__(self) -> None:
        self.mean = np.asarray(self.mean, dtype=float)
        self.scale = np.asarray(self.scale, dtype=float)
        self.weights = np.atleast_2d(np.asarray(self.weights, dtype=float))
        width = self.weights.shape[1]
        if self.mean.shape != (width,) or self.scale.shape != (width,):
            raise ValueError(
                f"mean {self.mean.shape} and scale {self.scale.shape} must be ({width},), "
                f"the weights' input width"
            )
        if self.feature_names is not None:
            self.feature_names = tuple(str(name) for name in self.feature_names)
            if len(self.feature_names) != width:
                raise ValueError(f"{len(self.feature_names)} feature names for {width} columns")

    @property
    def dimension(self) -> int:
        """d, the number of learned meta-features."""
        return int(self.weights.shape[0])

    def standardise(self, rows: np.ndarray) -> np.ndarray:
        """Rows of the basic representation as ψ sees them; NaN is an error naming its cells."""
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        if rows.shape[1] != len(self.mean):
            raise ValueError(f"rows have {rows.shape[1]} columns, the map expects {len(self.mean)}")
        _reject_nan(rows, self.feature_names)
        return (rows - self.mean) / self.scale

    def transform(self, rows: np.ndarray) -> np.ndarray:
        """The Metabu meta-features of basic-representation rows: (n x D) -> (n x d)."""
        return self.standardise(rows) @ self.weights.T

    def importances(self, target: np.ndarray | None = None) -> np.ndarray:
        """How much each basic meta-feature (input column) weighs in the map, (D,).

        Without ``target``: |ψ| summed over the outputs, the column's total weight. With the
        target embedding U: the paper's i_A(k) = |ψ_{j*,k}|, where j* is the output axis that
        contributes most (largest absolute loading) to the first principal axis of U
        (standardised, as the authors' code), the direction along which the oracle topology
        varies most. Columns were standardised before ψ, so the weights are comparable.
        """
        if target is None:
            return np.abs(self.weights).sum(axis=0)
        target = np.atleast_2d(np.asarray(target, dtype=float))
        if target.shape[1] != self.dimension:
            raise ValueError(f"target has {target.shape[1]} columns, the map {self.dimension}")
        _, _, axes = np.linalg.svd(_standardise_columns(target), full_matrices=False)
        return np.abs(self.weights[int(np.argmax(np.abs(axes[0])))])

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The map as plain arrays (for ``np.savez``); :meth:`from_arrays` reads them back."""
        arrays = {
            "mean": self.mean.copy(),
            "scale": self.scale.copy(),
            "weights": self.weights.copy(),
        }
        if self.feature_names is not None:
            arrays["feature_names"] = np.asarray(self.feature_names, dtype=str)
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> MetabuMap:
        """The map :meth:`to_arrays` wrote (a dict, or the mapping ``np.load`` returns)."""
        names = arrays.get("feature_names")
        return cls(
            mean=np.array(arrays["mean"], dtype=float),
            scale=np.array(arrays["scale"], dtype=float),
            weights=np.array(arrays["weights"], dtype=float),
            feature_names=None if names is None else tuple(str(n) for n in names),
        )


def fgw_objective(
    source: torch.Tensor, target: torch.Tensor, coupling: torch.Tensor, alpha: float
) -> torch.Tensor:
    """The Fused Gromov-Wasserstein cost of a fixed coupling γ (differentiable in ``source``).

    (1 - α) Σ_ij γ_ij ‖s_i - t_j‖² + α Σ_ijkl (C1_ik - C2_jl)² γ_ij γ_kl, with C1, C2 the
    pairwise squared Euclidean distances of the source and target points (the authors' cost,
    POT's ``loss_fun="square_loss"``). The 4-index sum, O(n^4), is computed in O(n^3) by the
    square-loss decomposition Σ_ik C1_ik² p_i p_k + Σ_jl C2_jl² q_j q_l - 2 Σ (C1 γ C2ᵀ) ⊙ γ,
    with p, q the marginals of γ (so the identity holds for any γ, not only feasible ones).
    """
    cross = _squared_distances(source, target)
    within_source = _squared_distances(source, source)
    within_target = _squared_distances(target, target)
    p, q = coupling.sum(dim=1), coupling.sum(dim=0)
    structure = (
        p @ (within_source**2) @ p
        + q @ (within_target**2) @ q
        - 2 * (within_source @ coupling @ within_target.T * coupling).sum()
    )
    return (1 - alpha) * (coupling * cross).sum() + alpha * structure


def _squared_distances(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """Pairwise squared Euclidean distances, exact (no clamped Gram trick) and differentiable."""
    return ((first[:, None, :] - second[None, :, :]) ** 2).sum(dim=-1)


def solve_coupling(
    source: np.ndarray, target: np.ndarray, alpha: float, start: np.ndarray | None = None
) -> np.ndarray:
    """The optimal FGW coupling γ between two equally weighted point clouds, ψ held fixed.

    POT's exact conditional-gradient solver (``ot.gromov.fused_gromov_wasserstein``), started
    from ``start`` (the previous epoch's γ; the identity coupling i <-> i by default, as the
    authors' code): no ε to scale against the costs (which change as ψ trains), the sparse
    plans FGW's optimum has, and warm-started it converges in a few network-simplex linear
    programs (n = 500: about 2 s cold, 0.4 s warm). Used by ``coupling="exact"``.
    """
    source = np.asarray(source, dtype=float)
    target = np.asarray(target, dtype=float)
    count = len(source)
    weights = np.full(count, 1.0 / count)
    start = np.eye(count) / count if start is None else start
    return ot.gromov.fused_gromov_wasserstein(
        ot.dist(source, target),
        ot.dist(source, source),
        ot.dist(target, target),
        weights,
        weights,
        loss_fun="square_loss",
        symmetric=True,
        alpha=alpha,
        G0=start,
    )


def fit_map(
    basic: Sequence[np.ndarray],
    target: np.ndarray,
    settings: FGWSettings = FGWSettings(),
    validation_basic: np.ndarray | None = None,
    validation_target_distances: np.ndarray | None = None,
    feature_names: Sequence[str] | None = None,
) -> tuple[MetabuMap, list[dict[str, float | int | None]]]:
    """Learn ψ so that ψ♯X matches the target embedding U in the FGW sense (the paper's step 3).

    ``basic[i]`` holds training dataset i's basic-representation rows (replicates x D, e.g.
    bootstrap estimates; one row is fine, 1-D too); ``target`` (training datasets x d) is U,
    in the same order. Each epoch draws one replicate per dataset (seeded), sets the coupling γ
    for the current ψ (``settings.coupling``: i <-> i by default, or POT's exact FGW solver
    warm-started from the last γ; :class:`FGWSettings` says why), then, γ held fixed, takes
    one Adam step on :func:`fgw_objective` + l1 · ‖ψ‖_1: the paper's bilevel scheme (the
    coupling has no useful gradient, the map has).

    Early stopping: ``validation_basic`` (validation datasets x D, one row each) and
    ``validation_target_distances`` (validation x training datasets, the oracle distances C
    between them) score each ψ by the NDCG@``ndcg_k`` of its distances from the validation
    datasets to the training ones (:func:`cross_ndcg_at_k`); the best ψ is kept and training
    stops after ``patience`` epochs without a better one. Without validation, all ``epochs``
    run and the last ψ is kept.

    The basic representation is standardised with the training rows' mean and std (a constant
    column keeps std 1) before ψ, so that the L1 penalty treats columns alike; NaN is an error
    naming the columns and the datasets (the caller imputes). Returns the map and the history,
    one entry per evaluated ψ: entry e is ψ after e Adam steps (entry 0 the initial map), with
    its ``objective`` (FGW objective at that epoch's coupling + L1, on that epoch's replicates),
    ``fgw`` (without the L1) and ``validation_ndcg`` (None without validation).
    """
    replicates = _replicates(basic, feature_names)
    target = np.atleast_2d(np.asarray(target, dtype=float))
    if len(replicates) != len(target):
        raise ValueError(f"{len(replicates)} training datasets but {len(target)} target rows")
    if len(replicates) < 2:
        raise ValueError("FGW needs at least 2 training datasets")
    standardiser = _fit_standardiser(np.vstack(replicates), feature_names)
    validation = _validation(
        validation_basic, validation_target_distances, len(replicates), feature_names
    )

    generator = torch.Generator().manual_seed(settings.seed)
    psi = _initial_map(replicates[0].shape[1], target.shape[1], generator)
    optimiser = torch.optim.Adam(psi.parameters(), lr=settings.lr)
    rng = np.random.default_rng(settings.seed)
    inputs = [torch.from_numpy(standardiser.standardise(rows)) for rows in replicates]
    anchors = torch.from_numpy(target)

    history: list[dict[str, float | int | None]] = []
    coupling: np.ndarray | None = None
    best_weights, best_score, waited = psi.weight.detach().numpy().copy(), -np.inf, 0
    for epoch in range(settings.epochs + 1):
        drawn = torch.stack([rows[rng.integers(len(rows))] for rows in inputs])
        loss, fgw, coupling = _epoch_loss(psi, drawn, anchors, settings, coupling)
        score = _validation_ndcg(psi, standardiser, inputs, validation, settings.ndcg_k)
        history.append(
            {"epoch": epoch, "objective": loss.item(), "fgw": fgw.item(), "validation_ndcg": score}
        )
        if score is None or score > best_score:
            best_weights = psi.weight.detach().numpy().copy()
            best_score, waited = -np.inf if score is None else score, 0
        else:
            waited += 1
            if waited >= settings.patience:
                break
        if epoch == settings.epochs:
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    fitted = MetabuMap(
        mean=standardiser.mean,
        scale=standardiser.scale,
        weights=best_weights,
        feature_names=None if feature_names is None else tuple(feature_names),
    )
    return fitted, history


def _epoch_loss(
    psi: torch.nn.Linear,
    drawn: torch.Tensor,
    anchors: torch.Tensor,
    settings: FGWSettings,
    previous: np.ndarray | None,
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """The bilevel step's inner problem, then its outer loss: (FGW + L1, FGW, γ).

    γ is set for ψ held fixed (detached), then held fixed for the gradient: i <-> i, or the
    exact FGW coupling warm-started from ``previous``.
    """
    image = psi(drawn)
    if settings.coupling == "identity":
        coupling = np.eye(len(drawn)) / len(drawn)
    else:
        coupling = solve_coupling(image.detach().numpy(), anchors.numpy(), settings.alpha, previous)
    fgw = fgw_objective(image, anchors, torch.from_numpy(coupling), settings.alpha)
    return fgw + settings.l1 * psi.weight.abs().sum(), fgw, coupling


@dataclass(frozen=True)
class _Validation:
    """Validation rows (standardised lazily by the map) and their oracle distances to training."""

    rows: np.ndarray
    distances: np.ndarray


def _validation(
    rows: np.ndarray | None,
    distances: np.ndarray | None,
    training: int,
    feature_names: Sequence[str] | None,
) -> _Validation | None:
    """Check the validation inputs come together and fit the training set."""
    if rows is None and distances is None:
        return None
    if rows is None or distances is None:
        raise ValueError("give both validation_basic and validation_target_distances, or neither")
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    distances = np.atleast_2d(np.asarray(distances, dtype=float))
    if distances.shape != (len(rows), training):
        raise ValueError(
            f"validation_target_distances is {distances.shape}, expected "
            f"({len(rows)} validation datasets, {training} training datasets)"
        )
    _reject_nan(rows, feature_names, kind="validation dataset")
    return _Validation(rows=rows, distances=distances)


def _validation_ndcg(
    psi: torch.nn.Linear,
    standardiser: MetabuMap,
    inputs: list[torch.Tensor],
    validation: _Validation | None,
    k: int,
) -> float | None:
    """NDCG@k of ψ's distances from the validation datasets to the training ones.

    Training datasets are placed by the mean of their standardised replicates (deterministic,
    so that the early-stopping score does not move with the draw).
    """
    if validation is None:
        return None
    with torch.no_grad():
        training = psi(torch.stack([rows.mean(dim=0) for rows in inputs])).numpy()
        queries = psi(torch.from_numpy(standardiser.standardise(validation.rows))).numpy()
    return cross_ndcg_at_k(cdist(queries, training), validation.distances, k)


def _initial_map(width: int, dimension: int, generator: torch.Generator) -> torch.nn.Linear:
    """ψ without bias, drawn as torch.nn.Linear's default (U(±1/√D)) but from a seeded generator.

    The generator keeps the draw reproducible without touching torch's global random state.
    """
    psi = torch.nn.Linear(width, dimension, bias=False, dtype=torch.float64)
    bound = 1.0 / math.sqrt(width)
    with torch.no_grad():
        weights = torch.rand(dimension, width, generator=generator, dtype=torch.float64)
        psi.weight.copy_((2 * weights - 1) * bound)
    return psi


def _replicates(
    basic: Sequence[np.ndarray], feature_names: Sequence[str] | None
) -> list[np.ndarray]:
    """Each training dataset's rows as a (replicates x D) array; same D, no NaN."""
    replicates = [np.atleast_2d(np.asarray(rows, dtype=float)) for rows in basic]
    widths = {rows.shape[1] for rows in replicates}
    if len(widths) > 1:
        raise ValueError(f"basic representations of different widths: {sorted(widths)}")
    if any(len(rows) == 0 for rows in replicates):
        raise ValueError("a training dataset has no basic-representation row")
    if feature_names is not None and len(feature_names) not in widths:
        raise ValueError(f"{len(feature_names)} feature names for {widths.pop()} columns")
    owners = np.concatenate([np.full(len(rows), i) for i, rows in enumerate(replicates)])
    _reject_nan(np.vstack(replicates), feature_names, owners, kind="training dataset")
    return replicates


def _fit_standardiser(rows: np.ndarray, feature_names: Sequence[str] | None) -> MetabuMap:
    """An identity map carrying the training rows' mean and std (a constant column: std 1)."""
    scale = rows.std(axis=0)
    width = rows.shape[1]
    return MetabuMap(
        mean=rows.mean(axis=0),
        scale=np.where(scale > 0, scale, 1.0),
        weights=np.eye(width),
        feature_names=None if feature_names is None else tuple(feature_names),
    )


def _reject_nan(
    rows: np.ndarray,
    feature_names: Sequence[str] | None,
    owners: np.ndarray | None = None,
    kind: str = "row",
) -> None:
    """Raise a ValueError naming the columns and the rows (or datasets) holding NaN.

    Metabu does not impute: which value stands for a missing meta-feature is the caller's
    choice. ``owners`` maps each row to the index reported (its dataset, for replicates).
    """
    missing = np.isnan(rows)
    if not missing.any():
        return
    names = _names(feature_names, rows.shape[1], "column")
    columns = [names[j] for j in np.flatnonzero(missing.any(axis=0))]
    bad_rows = np.flatnonzero(missing.any(axis=1))
    where = sorted({int(i) for i in (bad_rows if owners is None else owners[bad_rows])})
    raise ValueError(
        f"NaN in the basic representation: column(s) {columns} of {kind}(s) {where}; "
        "impute missing meta-features before Metabu"
    )


def _names(names: Sequence[str] | None, count: int, kind: str) -> list[str]:
    """The given names, or ``kind index`` labels."""
    if names is None:
        return [f"{kind} {i}" for i in range(count)]
    return [str(name) for name in names]


def _square(matrix: np.ndarray, name: str) -> np.ndarray:
    """A float square matrix, or a ValueError naming the argument."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {matrix.shape}")
    return matrix
